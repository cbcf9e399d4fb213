"""The mixed stream of the throughput benches (scripts/check_bench.sh, scripts/neff_bench.sh):
mostly 64-byte roster opcodes without a record (isa/opcodes.tsv; random bodies: "mostly matmuls
and activations", issue 20) with the well-formed program of examples/samples/program.hex (a
group, a 0xD9 + 0xDA pair, a 128-byte 0xD4, records) mixed in. Draws from `random` (the caller
seeds it)."""
import random


def block(repo, share):
    """1 MiB of the stream; `share` is the percent of picks that are a whole program."""
    prog = b"".join(bytes.fromhex(l.split("#")[0].strip())
                    for l in open(f"{repo}/examples/samples/program.hex")
                    if l.split("#")[0].strip())
    rows = [l.rstrip("\n").split("\t") for l in open(f"{repo}/isa/opcodes.tsv")
            if l.startswith("0x")]
    plain = [int(r[0], 16) for r in rows if r[2] == "1" and r[6] == "64"
             and r[0] not in ("0x85", "0x86", "0xD9", "0xDA")]
    out = bytearray()
    while len(out) < (1 << 20):
        if random.randrange(100) < share:
            out += prog
        else:
            b = bytearray(64)
            b[0] = random.choice(plain)
            b[1] = 0x10
            b[12:] = random.randbytes(52)
            out += b
    return bytes(out[: 1 << 20])
