#!/usr/bin/env python3
"""A misbehaving Python subject for the harness tests: the example subject of
examples/subjects/custom_op.py, except that on every validator request whose
bundle ends in 0xEE it crashes (argv `crash`: SIGSEGV), hangs (`hang`),
first prints a line that is not JSON (`garbage`) or writes 2 MiB with no
newline and then hangs (`long-line`: over the 1 MiB line limit); `exit-after`
answers it and then exits (status 0) without reading another request."""
import json
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "examples", "subjects"))
import custom_op  # noqa: E402

MODE = sys.argv[1]


def answer(req, validators):
    if MODE == "exit-after":
        return custom_op.answer(req, validators)
    if req.get("hex", "").lower().endswith("ee"):
        print(f"misbehave.py: {MODE} on id {req['id']}", file=sys.stderr, flush=True)
        if MODE == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif MODE == "hang":
            time.sleep(3600)
        elif MODE == "long-line":
            sys.stdout.write("x" * (2 << 20))
            sys.stdout.flush()
            time.sleep(3600)
        else:
            sys.stdout.write("this is not json\n")
    return custom_op.answer(req, validators)


def exit_after(req, validators):
    """`exit-after`: the answer goes out (flushed) before the exit."""
    a = answer(req, validators)
    if req.get("hex", "").lower().endswith("ee"):
        print(json.dumps({"id": req["id"], **a}), flush=True)
        print(f"misbehave.py: {MODE} on id {req['id']}", file=sys.stderr, flush=True)
        sys.exit(0)
    return a


custom_op.serve(answer=exit_after if MODE == "exit-after" else answer)
