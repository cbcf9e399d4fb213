#!/usr/bin/env python3
"""A misbehaving Python subject for the harness tests: the example subject of
examples/subjects/custom_op.py, except that on every validator request whose
bundle ends in 0xEE it crashes (argv `crash`: SIGSEGV), hangs (`hang`),
first prints a line that is not JSON (`garbage`) or writes 2 MiB with no
newline and then hangs (`long-line`: over the 1 MiB line limit)."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "examples", "subjects"))
import custom_op  # noqa: E402

MODE = sys.argv[1]


def answer(req, validators):
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


custom_op.serve(answer=answer)
