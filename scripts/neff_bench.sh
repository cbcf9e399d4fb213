#!/usr/bin/env bash
# `check --format summary` on a NEFF holding 1 GiB of engine streams (issue 33) against
# decompressing its payload alone (`tail -c +1025 FILE | gzip -dc > /dev/null`), measured in
# the same run, alternating, best of N each. Target: at most 1.25x.
# The NEFF (built in a scratch folder, never committed): two subgraphs, schema <eng>_instr,
# five engines each ~102 MiB of the mixed stream of scripts/mixed_stream.py (mostly roster
# opcodes with random bodies, the sample program mixed in), gzip -6, pkg_version 1 (SHA-256).
# Usage: scripts/neff_bench.sh [TPBCONFORM] [RUNS]   (default: target/release/tpbconform, 5)
# Exit: 0 the ratio holds, 1 it does not, 2 a prerequisite is missing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tool=${1:-$repo/target/release/tpbconform}
runs=${2:-5}
[ -x "$tool" ] || { echo "no $tool: cargo build --release -p tpbconform --bin tpbconform" >&2; exit 2; }
command -v python3 >/dev/null && command -v gzip >/dev/null && command -v tar >/dev/null \
  || { echo "python3, gzip and tar are needed" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$repo" "$dir/tree" <<'PY'
import os, random, sys
repo, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, f"{repo}/scripts")
from mixed_stream import block
random.seed(33)
engines = ["PE", "Activation", "Pool", "DVE", "SP"]
per = (1 << 30) // 10 // (1 << 20)  # MiB per stream: 10 streams, 1 GiB in all
for sg in ("sg00", "sg01"):
    os.makedirs(f"{out}/{sg}", exist_ok=True)
    with open(f"{out}/{sg}/def.json", "w") as f:
        f.write("{" + ", ".join(f'"{e.lower()[:3] if e == "Activation" else e.lower()}_instr": "{e}.bin"' for e in engines) + "}")
    for e in engines:
        data = block(repo, 2)
        with open(f"{out}/{sg}/{e}.bin", "wb") as f:
            for _ in range(per):
                f.write(data)
PY
# def.json first in each subgraph (ORDER=any: the order tar reads the folder, where a stream
# may come before its def.json and, past the 256 MiB held, be read in a second pass).
if [ "${ORDER:-def-first}" = any ]; then
  (cd "$dir/tree" && tar --format=ustar -cf - sg00 sg01) | gzip -6 > "$dir/payload"
else
  (cd "$dir/tree" && tar --format=ustar -cf - sg00/def.json sg00/*.bin sg01/def.json sg01/*.bin) | gzip -6 > "$dir/payload"
fi
python3 - "$dir/payload" "$dir/big.neff" <<'PY'
import hashlib, struct, sys
payload, out = sys.argv[1], sys.argv[2]
h = hashlib.sha256(); n = 0
with open(payload, "rb") as f:
    while chunk := f.read(1 << 20):
        h.update(chunk); n += len(chunk)
hdr = bytearray(1024)
struct.pack_into("<QQQQQ", hdr, 0, 1, 1024, n, 2, 0)
struct.pack_into("<I", hdr, 0xA8, 2)
hdr[0xAC:0xCC] = h.digest()
with open(out, "wb") as o, open(payload, "rb") as f:
    o.write(hdr)
    while chunk := f.read(1 << 20):
        o.write(chunk)
PY
rm -rf "$dir/tree" "$dir/payload"
file=$dir/big.neff
cat "$file" > /dev/null
now() { date +%s.%N; }
best_gz=999; best_check=999
for _ in $(seq "$runs"); do
  t0=$(now); tail -c +1025 "$file" | gzip -dc > /dev/null; t1=$(now)
  "$tool" check --format summary "$file" > "$dir/summary.txt" || true
  t2=$(now)
  best_gz=$(echo "$t1 $t0 $best_gz" | awk '{d=$1-$2; print (d<$3)?d:$3}')
  best_check=$(echo "$t2 $t1 $best_check" | awk '{d=$1-$2; print (d<$3)?d:$3}')
done
tail -1 "$dir/summary.txt"
awk -v g="$best_gz" -v c="$best_check" -v s="$(stat -c %s "$file")" 'BEGIN {
  printf "NEFF %d bytes: gzip -dc %.3f s, check --format summary %.3f s, ratio %.2fx (target <= 1.25x)\n", s, g, c, c / g
  exit (c / g <= 1.25) ? 0 : 1 }'
