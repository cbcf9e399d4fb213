#!/usr/bin/env python3
"""A cmd: subject for the harness tests that offers the batch64 framing of
examples/subjects/custom_op.py and breaks it (argv mode): `drop` answers one
record fewer than each frame has, `swap` answers records 0 and 1 of each
frame in the other order, `seq` echoes a wrong frame number, `crash` dies
(SIGSEGV) on a frame holding a bundle that ends in 0xEE (the JSON lines,
which the harness then uses, answer correctly), `orphan PIDS` starts a
grandchild (`sleep 120`) that inherits its stdout on its first frame,
appends `<frame op> <grandchild pid>` to the file PIDS and exits without
answering (its stdout stays open: no end of output)."""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "examples", "subjects"))
import custom_op  # noqa: E402

MODE = sys.argv[1]


def broken_batch64(validators, inp, out):
    for seq, op, bundles in custom_op.read_frames(inp):
        check = validators[op]
        if MODE == "orphan":
            child = subprocess.Popen(["sleep", "120"])
            with open(sys.argv[2], "a") as f:
                f.write(f"{op} {child.pid}\n")
            os._exit(3)
        if MODE == "crash" and any(b[63] == 0xEE for b in bundles):
            os.kill(os.getpid(), signal.SIGSEGV)
        ids = [custom_op.VERDICT_IDS[check(b)] for b in bundles]
        if MODE == "drop":
            ids = ids[:-1]
        elif MODE == "swap" and len(ids) >= 2:
            ids[0], ids[1] = ids[1], ids[0]
        elif MODE == "seq":
            seq += 1
        custom_op.write_frame(out, seq, ids)


custom_op.serve_batch64 = broken_batch64
custom_op.serve(framings=["batch64"])
