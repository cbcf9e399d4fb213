#!/usr/bin/env python3
"""A hostile tpb-subject/1 subject for the give-up and cleanup tests. It
answers the hello like the example subject (validators and decode), then
misbehaves on EVERY request, as argv[1] says:

  segv        kill itself with SIGSEGV
  garbage     print a line that is not JSON
  wrong-id    answer with an id that was never sent
  exit        exit (status 0) once it has read a request, unanswered
  deaf        never read stdin again (and never answer)
  fork        fork a child that keeps stdout open and sleeps, then SIGSEGV
  setsid      like fork, but the child calls setsid() first

A child forked by `fork` / `setsid` writes its pid to $HOSTILE_PIDS (one line
each) so a test can check it is gone."""
import json
import os
import signal
import sys
import time

MODE = sys.argv[1]


def child_holding_stdout(new_session):
    pid = os.fork()
    if pid == 0:
        if new_session:
            os.setsid()
        path = os.environ.get("HOSTILE_PIDS")
        if path:
            with open(path, "a") as f:
                f.write(f"{os.getpid()}\n")
        time.sleep(3600)
        os._exit(0)


def main():
    hello = sys.stdin.readline()
    if not hello:
        return
    print(json.dumps({"protocol": 1, "name": f"hostile-{MODE}",
                      "ops": ["validate_header", "validate_payload"]}), flush=True)
    if MODE == "deaf":
        time.sleep(3600)
        return
    if MODE in ("fork", "setsid"):
        child_holding_stdout(MODE == "setsid")
    for line in sys.stdin:
        req = json.loads(line)
        if MODE == "exit":
            return
        if MODE in ("segv", "fork", "setsid"):
            os.kill(os.getpid(), signal.SIGSEGV)
        elif MODE == "garbage":
            print("this is not json", flush=True)
        elif MODE == "wrong-id":
            print(json.dumps({"id": req.get("id", 0) + 1000, "verdict": "valid"}), flush=True)


main()
