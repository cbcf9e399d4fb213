#!/usr/bin/env bash
# Throughput of `tpbconform check --format summary` on a 1 GiB stream of mixed instructions
# (issue 20 "Performance"): >= 1 GB/s and >= 0.5x a plain read (`cat FILE > /dev/null`) of the
# same file, measured in the same run (page cache warm, best of N alternating runs each).
# The stream: mostly roster opcodes without a record (random bodies: "mostly matmuls and
# activations", issue 20) with the well-formed program of examples/samples/program.hex (a group,
# a 0xD9 + 0xDA pair, a 128-byte 0xD4, records) mixed in; RECORD_SHARE (percent of picks that
# are a whole program; default 2) raises the share of records.
# Usage: scripts/check_bench.sh [TPBCONFORM] [RUNS]   (default: target/release/tpbconform, 5)
# Needs python3 (to write the stream) and GNU time-free bash builtins only.
# Exit: 0 both figures hold, 1 one does not, 2 a prerequisite is missing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tool=${1:-$repo/target/release/tpbconform}
runs=${2:-5}
share=${RECORD_SHARE:-2}
[ -x "$tool" ] || { echo "no $tool: cargo build --release -p tpbconform --bin tpbconform" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to write the stream" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
file=$dir/mixed.bin
python3 - "$repo" "$file" "$share" <<'EOF'
import random, sys
repo, out, share = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, f"{repo}/scripts")
from mixed_stream import block
random.seed(20)
block = block(repo, share)
with open(out, "wb") as f:
    for _ in range(1024):
        f.write(block)
EOF
bytes=$(stat -c %s "$file")
cat "$file" > /dev/null
now() { date +%s.%N; }
best_cat=999; best_check=999
for _ in $(seq "$runs"); do
  t0=$(now); cat "$file" > /dev/null; t1=$(now)
  "$tool" check --format summary "$file" > "$dir/summary.txt" || true
  t2=$(now)
  best_cat=$(echo "$t1 $t0 $best_cat" | awk '{d=$1-$2; print (d<$3)?d:$3}')
  best_check=$(echo "$t2 $t1 $best_check" | awk '{d=$1-$2; print (d<$3)?d:$3}')
done
cat "$dir/summary.txt"
awk -v b="$bytes" -v c="$best_cat" -v k="$best_check" 'BEGIN {
  printf "cat: %.3f s (%.2f GB/s); check --format summary: %.3f s (%.2f GB/s); ratio %.2f\n",
    c, b/c/1e9, k, b/k/1e9, c/k
  exit !((b/k/1e9 >= 1.0) && (c/k >= 0.5))
}'
