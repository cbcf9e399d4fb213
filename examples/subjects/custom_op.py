#!/usr/bin/env python3
"""custom_op.py: an example tpb-conform subject in Python (stdlib only).

It speaks the process protocol tpb-subject/1 (docs/subject-protocol.md) on
stdin/stdout and implements, for the v2 (Sunda) generation only, the two
CUSTOM_OP validators of SPEC.md and the custom-op stream rules
(`validate_stream`, SPEC §5.3); every other operation is answered
"unsupported". For any other generation its hello declares no operation.

    tpbconform subject-check cmd:"python3 examples/subjects/custom_op.py"
    tpbconform gate --subject cmd:"python3 examples/subjects/custom_op.py"

Written from SPEC.md §3/§4 and seed 000 (§is_valid_custom_op_header,
§is_valid_custom_op_payload), with the events rule of FACTS §2 and the v2
opcode roster of FACTS §1; it shares no code with tpb-core.

`--batch64` also offers the binary batch framing (docs/subject-protocol.md
"Batch framing"): the harness then sends validator chunks as frames of raw
64-byte records to a second instance and reads one tpb_verdict id per record
(`serve_batch64` below); JSON lines stay the default.

`--planted-bug` runs a copy with one planted bug (the header reserved-zero
check forgets byte 0x3F); the harness tests use it to show the gate catches it
and names custom_op_header_reserved_zero. `--planted-stream-bug` plants a
stream-rule mistake instead (a group is closed one payload early: the header's
num_arguments payloads, not num_arguments + 1). Other modules may import this
one and call `serve()` with their own handlers (the harness tests do).
"""
import json
import struct
import sys

PLANTED_BUG = "--planted-bug" in sys.argv[1:]
PLANTED_STREAM_BUG = "--planted-stream-bug" in sys.argv[1:]

# FACTS §1: the v2 NEURON_ISA_TPB_OPCODE enum (144 values) as inclusive ranges.
V2_OPCODE_RANGES = [
    (0x01, 0x05), (0x21, 0x24), (0x30, 0x30), (0x41, 0x4F), (0x51, 0x54), (0x58, 0x58),
    (0x5E, 0x74), (0x76, 0x7F), (0x82, 0x88), (0x8A, 0x8F), (0x92, 0x96), (0x98, 0xAB),
    (0xB0, 0xB3), (0xB5, 0xB5), (0xB8, 0xB8), (0xBB, 0xBB), (0xC1, 0xD6), (0xD8, 0xDF),
    (0xE5, 0xE8), (0xEA, 0xEA), (0xF0, 0xF0),
]
V2_OPCODES = frozenset(o for lo, hi in V2_OPCODE_RANGES for o in range(lo, hi + 1))

# FACTS §2: WAIT_MODE and UPDATE_MODE members (INVALID 0xFF excluded).
WAIT_MODES = frozenset([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                        0x0E, 0x0F, 0x81, 0x82, 0x83, 0x84, 0x85])
UPDATE_MODES = frozenset([0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09,
                          0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x19, 0x99])

HEADER_RESERVED_END = 0x3F if PLANTED_BUG else 0x40  # SPEC §3 #5: [0x20..0x3F]


def front_end(b, opcode, not_opcode):
    """SPEC §3/§4 predicates 1..3 (seed 000 Algorithm (1), (2)), then #4: byte 0 is `opcode`
    (else the predicate `not_opcode`)."""
    if b[0] not in V2_OPCODES:
        return "valid_opcode"
    if b[1] != 0x10:
        return "inst_word_len"
    if b[4] not in WAIT_MODES or b[6] not in UPDATE_MODES:
        return "has_valid_neuron_events"
    if b[0] != opcode:
        return not_opcode
    return None


def validate_header(b):
    """SPEC §3: the CUSTOM_OP header validator (0x85)."""
    failed = front_end(b, 0x85, "is_custom_op_header_opcode")
    if failed:
        return failed
    if any(b[0x11:0x14]) or any(b[0x1D:0x20]) or any(b[0x20:HEADER_RESERVED_END]):
        return "custom_op_header_reserved_zero"
    non_empty = b[0x10] or any(b[0x14:0x18]) or any(b[0x18:0x1D])
    if non_empty and not (b[0x10] and any(b[0x18:0x1C]) and b[0x1C]):
        return "custom_op_header_scratch_space_val"
    return None


def validate_payload(b):
    """SPEC §4: the CUSTOM_OP payload validator (0x86)."""
    failed = front_end(b, 0x86, "is_custom_op_payload_opcode")
    if failed:
        return failed
    if any(b[0x0C:0x0F]):  # byte 0x0F (arg_type, FACTS §8) is not checked
        return "custom_op_payload_reserved_zero"
    return None


def validate_stream(data):
    """SPEC §5.3: the first custom-op stream error as (name, index), or None.

    Checked at each bundle, in this order (D-15): a bundle that is not a 0x86
    first closes an open group (short_group, at the header's index); then
    invalid_record (a 0x85 / 0x86 failing its validator); then for a header
    payload_count_mismatch (num_payloads at 0x0C, u16 LE, must be
    num_arguments at 0x0F + 2); for a 0x86, stray_payload when no group is
    open. A group closes once it has num_arguments + 1 payloads."""
    if len(data) % 64:
        return ("trailing_bytes", len(data))  # reported with the length
    group = None  # [header index, payloads expected, payloads found]
    for i in range(len(data) // 64):
        b = data[64 * i:64 * i + 64]
        if b[0] != 0x86 and group is not None:
            return ("short_group", group[0])
        if (b[0] == 0x85 and validate_header(b)) or (b[0] == 0x86 and validate_payload(b)):
            return ("invalid_record", i)
        if b[0] == 0x86:
            if group is None:
                return ("stray_payload", i)
            group[2] += 1
            if group[2] == group[1]:
                group = None
        elif b[0] == 0x85:
            num_payloads = b[0x0C] | b[0x0D] << 8
            num_arguments = b[0x0F]
            if num_payloads != num_arguments + 2:
                return ("payload_count_mismatch", i)
            group = [i, num_arguments + (0 if PLANTED_STREAM_BUG else 1), 0]
            if group[1] == 0:  # only with the planted bug: nothing to wait for
                group = None
    if group is not None:
        return ("short_group", group[0])
    return None


VALIDATORS = {
    "validate_header": validate_header,
    "validate_payload": validate_payload,
    "validate_stream": validate_stream,
}
NAME = "example-python-custom-op 1.0" + (
    " (planted bug)" if PLANTED_BUG else " (planted stream bug)" if PLANTED_STREAM_BUG else "")


def answer(req, validators):
    """The answer object for one request (without its id)."""
    op = req.get("op")
    check = validators.get(op)
    if check is None:
        return {"unsupported": True}
    if op == "validate_stream":
        error = check(bytes.fromhex(req["hex"]))
        if error is None:
            return {"valid": True}
        return {"stream_error": error[0], "index": error[1]}
    return {"failed": check(bytes.fromhex(req["hex"]))}


# include/tpb_subject.h `tpb_verdict`: 0 = valid, then the SPEC §3/§4
# predicates in this order (the batch framing answers these ids).
VERDICT_IDS = {None: 0, **{p: i + 1 for i, p in enumerate([
    "valid_opcode", "inst_word_len", "has_valid_neuron_events",
    "is_custom_op_header_opcode", "custom_op_header_reserved_zero",
    "custom_op_header_scratch_space_val", "is_custom_op_payload_opcode",
    "custom_op_payload_reserved_zero"])}}
FRAME_OPS = {1: "validate_header", 2: "validate_payload"}


def read_frames(inp):
    """The batch64 input frames (`u32 seq, u32 n, u8 op, 3 zero bytes,
    n x 64-byte bundles`, little-endian) until stdin closes: (seq, op name,
    the bundles)."""
    while True:
        head = inp.read(12)
        if len(head) < 12:
            return
        seq, n, op = struct.unpack_from("<IIB", head)
        data = inp.read(64 * n)
        yield seq, FRAME_OPS.get(op), [data[i:i + 64] for i in range(0, 64 * n, 64)]


def write_frame(out, seq, ids):
    """One batch64 answer frame: `u32 seq, u32 n, n x u16 verdict id`."""
    out.write(struct.pack("<II%dH" % len(ids), seq, len(ids), *ids))
    out.flush()


def serve_batch64(validators, inp, out):
    """The batch64 framing, after its hello: one answer frame per input
    frame (read_frames, write_frame), until stdin closes."""
    for seq, op, bundles in read_frames(inp):
        check = validators.get(op)
        write_frame(out, seq, [VERDICT_IDS[check(b)] for b in bundles])


def serve(validators=VALIDATORS, name=NAME, answer=answer, framings=()):
    """Runs the protocol on stdin/stdout until stdin closes. `framings`
    (e.g. ["batch64"]) are offered in the hello answer."""
    out = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "hello":
            ops = list(validators) if req.get("arch") == "v2" else []
            reply = {"protocol": 1, "name": name, "ops": ops}
            if req.get("framing") == "batch64" and "batch64" in framings:
                reply["framing"] = "batch64"
                out.write(json.dumps(reply) + "\n")
                out.flush()
                return serve_batch64(validators, sys.stdin.buffer, sys.stdout.buffer)
            if framings:
                reply["framings"] = list(framings)
        else:
            reply = {"id": req["id"], **answer(req, validators)}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    serve(framings=["batch64"] if "--batch64" in sys.argv[1:] else [])
