#!/usr/bin/env python3
"""A lowering subject for the harness tests: it answers the tpb-subject/1
`lower` op (docs/subject-protocol.md) by running `tpbconform lower --format
json -` (the binary is argv[1]) on the request's `ir`, so a correct run agrees
with core on every case. argv[2] `planted` plants one lowering mistake: each
replica group's ranks are written to the side-table in reverse order.
Every other op is answered "unsupported"; the hello declares only `lower`."""
import json
import re
import subprocess
import sys

TPB = sys.argv[1]
PLANTED = sys.argv[2:] == ["planted"]
# `tpbconform lower` names the first rejected instruction and the error
# class: "... $.instructions[2].replica_groups[1][0]: duplicate_rank: ...".
REJECTED = re.compile(r"\$\.instructions\[(\d+)\][^:]*: ([a-z_0-9]+)")


def lower(ir):
    p = subprocess.run([TPB, "lower", "--format", "json", "-"],
                       input=json.dumps(ir).encode(), capture_output=True, check=False)
    if p.returncode == 0:
        module = json.loads(p.stdout)
        if PLANTED:
            for entry in module["replica_groups"]:
                entry["groups"] = [g[::-1] for g in entry["groups"]]
        return module
    err = p.stderr.decode()
    m = REJECTED.search(err)
    if m is None:
        sys.stderr.write(err)
        return {"error": "unreadable_cli_error", "instruction": 0}
    return {"error": m.group(2), "instruction": int(m.group(1))}


for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "hello":
        out = {"protocol": 1, "name": "lower-via-cli" + (" (planted)" if PLANTED else ""),
               "ops": ["lower"]}
    elif req["op"] == "lower":
        out = {"id": req["id"], **lower(req["ir"])}
    else:
        out = {"id": req["id"], "unsupported": True}
    print(json.dumps(out), flush=True)
