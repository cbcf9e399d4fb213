#!/usr/bin/env python3
"""Independent vectors from the seeds and FACTS alone (seed 000, seed 003, FACTS §1, §2, §6, §8).

Written without reading core's or the oracle's code or tables: the roster comes from the shared
opcodes table (FACTS §1 [H]); the validators, record maps and enum sets are transcribed below
from the seed text. Prints a corpus/vectors file (format: corpus/vectors/README.md).
"""
import sys

GENS = ["v2", "v3", "v4", "v5"]
TSV = sys.argv[1] if len(sys.argv) > 1 else "isa/opcodes.tsv"
ROSTER = {g: set() for g in GENS}
NAMES = {}
for line in open(TSV):
    if line.startswith("#") or line.startswith("opcode"):
        continue
    p = line.rstrip("\n").split("\t")
    op = int(p[0], 16)
    NAMES[op] = p[1]
    for i, g in enumerate(GENS):
        if p[2 + i] == "1":
            ROSTER[g].add(op)
assert [len(ROSTER[g]) for g in GENS] == [144, 149, 158, 164]

# FACTS §2 [H] common.h L313-330 / L347-370 (INVALID 0xFF excluded; unquoted *_REG_* unknown).
WAIT = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0E, 0x0F, 0x81, 0x82, 0x83, 0x84, 0x85}
UPD = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x07, 0x09, 0x11, 0x12, 0x13, 0x14, 0x15, 0x17, 0x19, 0x99}


def le(b, o, n):
    return int.from_bytes(b[o:o + n], "little")


def front(b, g):  # seed 000 (1), (2)
    if b[0] not in ROSTER[g]:
        return "valid_opcode"
    if b[1] != 0x10:
        return "inst_word_len"
    if b[4] not in WAIT or b[6] not in UPD:
        return "has_valid_neuron_events"
    return None


def header(b, g):  # seed 000 is_valid_custom_op_header (3)..(5)
    r = front(b, g)
    if r:
        return r
    if b[0] != 0x85:
        return "is_custom_op_header_opcode"
    if (le(b, 0x10, 4) | le(b, 0x1C, 4)) & 0xFFFFFF00 or any(b[0x20:0x40]):
        return "custom_op_header_reserved_zero"
    if (le(b, 0x10, 8) & 0xFFFFFFFF000000FF) | (le(b, 0x18, 8) & 0xFFFFFFFFFF):
        if b[0x10] == 0 or le(b, 0x18, 4) == 0 or b[0x1C] == 0:
            return "custom_op_header_scratch_space_val"
    return None


def payload(b, g):  # seed 000 is_valid_custom_op_payload (3), (4)
    r = front(b, g)
    if r:
        return r
    if b[0] != 0x86:
        return "is_custom_op_payload_opcode"
    if le(b, 0x0C, 4) & 0x00FFFFFF:
        return "custom_op_payload_reserved_zero"
    return None


# Seed 003 record maps. A byte not named here is written by no store of the encoder: zero.
PRE = set(range(0x01, 0x10))          # FACTS §6 pre-v4 column: tags 0x01..0x0F
V4 = set(range(0x01, 0x11))           # FACTS §6 v4 column adds 0x10 (float4_e2m1fn_x4)


def tags(g):
    return V4 if g in ("v4", "v5") else PRE


def skel(m):
    m[4] = ("wait_mode", lambda v, g: v in WAIT)
    m[6] = ("update_mode", lambda v, g: v in UPD)
    for o in (2, 3, 5, 7, 8, 9, 10, 11):
        m[o] = ("any", None)
    return m


def span(m, a, n):
    for o in range(a, a + n):
        m[o] = ("any", None)
    return m


DT = lambda name: (name, lambda v, g: v in tags(g))
REC = {}
m = skel({}); m[0x0C] = ("cce_op", lambda v, g: v in (0x00, 0x04)); m[0x0D] = DT("dtype")
m[0x0E] = ("kind", lambda v, g: 0x01 <= v <= 0x09); span(m, 0x10, 48)
REC[0xD9] = ("CollectiveCompute", m, "v2")                            # S003 §3.1
m = {}; span(m, 0x04, 2); m[0x0C] = ("cce_op", lambda v, g: v in (0x00, 0x04)); m[0x0D] = DT("dtype")
m[0x0E] = ("kind", lambda v, g: 0x01 <= v <= 0x09); span(m, 0x10, 48)
REC[0xDA] = ("CollectiveComputeSecondary", m, "v2")                   # S003 §3.2, §3.4 (raw stamp)
m = skel({}); span(m, 0x10, 8); span(m, 0x30, 16)
REC[0xCB] = ("CollectiveSendRecv", m, "v2")                           # S003 §4.1
m = skel({}); m[0x0C] = DT("src_dtype"); m[0x0D] = DT("dst_dtype"); span(m, 0x10, 16)
m[0x20] = ("cross_core_enable", lambda v, g: v == 1); m[0x21] = ("any", None); span(m, 0x30, 16)
REC[0xBF] = ("Gpsimdsb2sb", m, "v3")                                  # S003 §5
m = skel({}); m[0x0C] = DT("dtype"); m[0x0E] = ("any", None); m[0x0F] = ("any", None)
span(m, 0x10, 32)
REC[0xBE] = ("GetSequenceBounds", m, "v3")                            # S003 §6
m = skel({}); span(m, 0x0C, 8); span(m, 0x20, 32)
REC[0xD8] = ("CoreBarrier", m, "v3")                                  # S003 §7
m = skel({}); m[0x0C] = ("valid", lambda v, g: v in (0, 1)); m[0x17] = ("any", None)
REC[0xDC] = ("GetGlobalRankId", m, "v2")                              # S003 §8.1
m = skel({}); span(m, 0x0C, 7); span(m, 0x14, 2)
REC[0xDB] = ("GetCurProcessingRankID", m, "v2")                       # S003 §8.2
m = skel({}); span(m, 0x0C, 5)
REC[0xDE] = ("TensorCompletion", m, "v2")                             # S003 §9

BASE = {
    0xD9: "d91000000000000000000000040a0100" + "a5" * 48,
    0xDA: "da0000003412000000000000040a0100" + "5a" * 48,
    0xCB: "cb100000000000000000000000000000" + "11" * 8 + "00" * 24 + "22" * 8 + "33" * 8,
    0xBF: "bf100000000000000000000006060000" + "44" * 16 + "0107" + "00" * 14 + "55" * 16,
    0xBE: "be10000000000000000000000a000100" + "66" * 16 + "77" * 16 + "00" * 16,
    0xD8: "d8100000000000000000000003000000" + "09000000" + "00" * 12 + "88" * 32,
    0xDC: "dc100000000000000000000001000000" + "00" * 7 + "05" + "00" * 40,
    0xDB: "db100000000000000000000001000200" + "0300" + "04" + "00" + "0500" + "00" * 42,
    0xDE: "de100000000000000000000078563412" + "42" + "00" * 47,
}
ORDER = {"v2": 0, "v3": 1, "v4": 2, "v5": 3}


def decode_expect(op, b, g):
    name, m, since = REC[op]
    if ORDER[g] < ORDER[since]:
        return "err opcode"           # S003 "At a glance": CoreV3+ only
    want = 0x00 if op == 0xDA else 0x10
    if b[1] != want:
        return "err inst_word_len"
    for o in range(2, 64):
        if o in m:
            f, pred = m[o]
            if pred is not None and not pred(b[o], g):
                return "err " + f
        elif b[o]:
            return "err reserved@0x%02x" % o
    return "ok " + name


out = []


def emit(hexs, expect_by_gen, comment):
    groups = {}
    for g in GENS:
        groups.setdefault(expect_by_gen[g], []).append(g)
    for exp, gs in groups.items():
        out.append("%s %s arch=%s # %s" % (hexs, exp, ",".join(gs), comment))


out.append("# Independent vectors: expectations computed by scripts/facts_vectors.py, a model written")
out.append("# from the seeds and FACTS alone (not from core, the oracle or their tables). Format:")
out.append("# corpus/vectors/README.md. Regenerate: python3 scripts/facts_vectors.py")
out.append("#")
out.append("# 1. Every opcode byte through the header validator, per generation (FACTS §1 [H]).")
for op in range(256):
    b = bytearray(64); b[0] = op; b[1] = 0x10
    exp = {}
    for g in GENS:
        r = header(bytes(b), g)
        exp[g] = "header " + ("valid -" if r is None else "invalid " + r)
    emit(bytes(b).hex(), exp, "opcode 0x%02x %s" % (op, NAMES.get(op, "(not in any enum)")))
out.append("# 2. The payload validator on edge opcodes, per generation.")
for op in (0x00, 0x01, 0x85, 0x86, 0x87, 0xB7, 0xBE, 0xD8, 0xEB, 0xF3, 0xFF):
    b = bytearray(64); b[0] = op; b[1] = 0x10; b[0x0F] = 1
    exp = {}
    for g in GENS:
        r = payload(bytes(b), g)
        exp[g] = "payload " + ("valid -" if r is None else "invalid " + r)
    emit(bytes(b).hex(), exp, "opcode 0x%02x %s, byte 0x0F = 1" % (op, NAMES.get(op, "(not in any enum)")))
out.append("# 3. The header's scratch descriptor: byte 0x10, addr 0x14..0x17, size 0x18..0x1B,")
out.append("#    byte 0x1C, each zero or nonzero in one byte position (seed 000 (5)).")
for m10 in (0, 1):
    for addr_pos in (None, 0x14, 0x17):
        for size_pos in (None, 0x18, 0x1B):
            for m1c in (0, 0x80):
                b = bytearray(64); b[0] = 0x85; b[1] = 0x10
                b[0x10] = m10; b[0x1C] = m1c
                if addr_pos: b[addr_pos] = 0x40
                if size_pos: b[size_pos] = 0x02
                r = header(bytes(b), "v2")
                exp = {g: "header " + ("valid -" if r is None else "invalid " + r) for g in GENS}
                emit(bytes(b).hex(), exp, "scratch: 0x10=%d addr@%s size@%s 0x1C=%#x" % (m10, addr_pos and hex(addr_pos), size_pos and hex(size_pos), m1c))
out.append("# 4. Each header/payload byte 0x02..0x3F alone set to 0xFF on a valid record.")
for kind, base, fn in (("header", "85100000000000000000000003000701", header), ("payload", "86100000000000000000000000000001", payload)):
    bb = bytes.fromhex(base + "00" * 48)
    for o in range(2, 64):
        b = bytearray(bb); b[o] = 0xFF
        r = fn(bytes(b), "v2")
        exp = {g: kind + " " + ("valid -" if r is None else "invalid " + r) for g in GENS}
        emit(bytes(b).hex(), exp, "%s byte 0x%02x = ff" % (kind, o))
out.append("# 5. Record decoding (seed 003 field maps): each byte 0x01..0x3F of a valid record set to")
out.append("#    0x01, 0x10 and 0xFF; bytes no store writes must be zero.")
seen = set()
for op, h in BASE.items():
    base = bytes.fromhex(h)
    cands = [base]
    for o in range(1, 64):
        for v in (0x01, 0x10, 0xFF):
            b = bytearray(base); b[o] = v
            cands.append(bytes(b))
    for b in cands:
        if b in seen:
            continue
        seen.add(b)
        exp = {g: decode_expect(op, b, g) for g in GENS}
        diff = [o for o in range(64) if b[o] != base[o]]
        what = "base" if not diff else "byte 0x%02x = %02x" % (diff[0], b[diff[0]])
        emit(b.hex(), exp, "%s %s" % (REC[op][0], what))
print("\n".join(out))
