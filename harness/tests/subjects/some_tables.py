#!/usr/bin/env python3
"""A tpb-subject/1 subject for the harness tests that implements two LUT
tables only, the compiler's events tables of SPEC §6.5 (BIR wait mode
0, 1, 2 -> 07 05 85; BIR update mode 0..5 -> 11 15 17 13 14 19; past a table:
out_of_range), and declares exactly those in the hello's `tables`. argv[1]
`refuse` answers `unsupported` to every update_mode lookup although the hello
declares that table (a finding)."""
import json
import sys

REFUSE = sys.argv[1:] == ["refuse"]
TABLES = {
    "wait_mode": [0x07, 0x05, 0x85],
    "update_mode": [0x11, 0x15, 0x17, 0x13, 0x14, 0x19],
}

for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "hello":
        out = {"protocol": 1, "name": "some-tables", "ops": ["lut"], "tables": list(TABLES)}
    elif req["op"] == "lut" and req["table"] in TABLES and not (
            REFUSE and req["table"] == "update_mode"):
        table = TABLES[req["table"]]
        n = req["input"]
        out = {"id": req["id"], **({"wire": table[n]} if n < len(table) else
                                   {"refused": "out_of_range"})}
    else:
        out = {"id": req["id"], "unsupported": True}
    print(json.dumps(out), flush=True)
