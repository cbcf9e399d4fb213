#!/usr/bin/env bash
# subject_bench.sh: the issue 19 subject performance figures, all in one run
# (docs/measurements.md "Subjects at library speed"). From the repository
# root:  scripts/subject_bench.sh      (CASES=… and PY_CASES=… to resize)
#
# 1. a C library subject on validate_header: cases/s into the subject (the
#    gate's own figure, summary.md "cases/s", one gate thread) and the same
#    function's plain-loop call rate (scripts/bench/plain_loop.c);
# 2. gate wall time with one C library subject receiving every generated
#    case of the validator and LUT targets vs the same gate without it:
#    PAIRS (default 5) alternated pairs, each pair's ratio and the median,
#    and the same for the machine's busy CPU time (every process);
# 3. the Python example: batch64 framing vs JSON lines (summary.md cases/s).
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${CASES:-2000000}
PY_CASES=${PY_CASES:-100000}
PAIRS=${PAIRS:-5}
CC=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --release -q -p tpbconform --bin tpbconform
T=target/release/tpbconform
"$CC" -O2 -fPIC -shared -Iinclude -o "$work/libsubject.so" scripts/bench/lut_subject.c
"$CC" -O2 -Iinclude -o "$work/plain_loop" scripts/bench/plain_loop.c

# cases/s of a summary.md's subject table ("subject | says it is | … |
# cases/s | …": column 7 of the first row with 9 or more columns; the
# per-target rows before it have fewer). Fails if there is none.
rate() {
  awk -F'|' '/^\| `(lib|cmd):/ && NF >= 10 { gsub(/ /, "", $7); print $7; found = 1; exit }
    END { if (!found) { print "subject_bench: no cases/s row in " FILENAME > "/dev/stderr"; exit 1 } }' \
    "$1/summary.md"
}
now() { date +%s.%N; }

plain=$("$work/plain_loop" "$CASES")

"$T" gate --quiet --threads 1 --arch v2 --targets validate_header --cases "$CASES" \
  --subject "lib:$work/libsubject.so" --subject-cases 1000000000 --report-dir "$work/r1" || true
into=$(rate "$work/r1")

TARGETS=validate_header,validate_payload,collective_lut,alu_lut,cce_lut,dge_lut,dtype_lut,dtype_v4_lut,wait_mode_lut,update_mode_lut
without() {
  rm -rf "$work/r2"
  "$T" gate --quiet --arch v2 --targets "$TARGETS" --cases "$CASES" --report-dir "$work/r2" >/dev/null
}
with() {
  rm -rf "$work/r3"
  "$T" gate --quiet --arch v2 --targets "$TARGETS" --cases "$CASES" \
    --subject "lib:$work/libsubject.so" --subject-cases 1000000000 --report-dir "$work/r3" >/dev/null
}
# Busy CPU of the whole machine, in clock ticks (/proc/stat: user, nice,
# system, irq, softirq): the gate and its subject workers alike, and less
# sensitive than wall time to the host taking the CPUs away.
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat 2>/dev/null || echo 0; }
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
# "wall:cpu" seconds of one run of "$@".
timed() {
  local t0 c0
  t0=$(now) c0=$(busy)
  "$@"
  awk -v a="$t0" -v b="$(now)" -v c="$c0" -v d="$(busy)" -v hz="$HZ" \
    'BEGIN { printf "%.3f:%.2f", b - a, (d - c) / hz }'
}
ratios=""
for p in $(seq 1 "$PAIRS"); do
  # Alternated: odd pairs run the gate without the subject first.
  if [ $((p % 2)) = 1 ]; then a=$(timed without); b=$(timed with); else b=$(timed with); a=$(timed without); fi
  ratios="$ratios $a:$b"  # wall_without:cpu_without:wall_with:cpu_with
done

PY="python3 examples/subjects/custom_op.py"
"$T" gate --quiet --arch v2 --targets validate_header,validate_payload --cases "$PY_CASES" \
  --subject "cmd:$PY" --subject-cases 1000000000 --report-dir "$work/r4" || true
"$T" gate --quiet --arch v2 --targets validate_header,validate_payload --cases "$PY_CASES" \
  --subject "cmd:$PY --batch64" --subject-cases 1000000000 --report-dir "$work/r5" || true
json=$(rate "$work/r4")
batch=$(rate "$work/r5")

awk -v plain="$plain" -v into="$into" -v json="$json" -v batch="$batch" -v cases="$CASES" \
    -v ratios="$ratios" '
function median(x, n,   i, j, y) {
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { y = x[i]; x[i] = x[j]; x[j] = y }
  return (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
}
BEGIN {
  printf "C validate_header plain loop:          %12.0f calls/s\n", plain
  printf "C validate_header into the subject:    %12.0f cases/s  (%.2fx plain loop; goal >= 10 M/s and >= 0.15x)\n", into, into / plain
  n = split(ratios, pairs, " ")
  for (i = 1; i <= n; i++) {
    split(pairs[i], t, ":")
    r[i] = t[3] / t[1]
    c[i] = t[2] > 0 ? t[4] / t[2] : 0
    printf "gate wall, pair %d (%d cases/target): without %6.2f s, with lib subject %6.2f s: %.2fx  (CPU %.2f / %.2f s: %.2fx)\n", i, cases, t[1], t[3], r[i], t[2], t[4], c[i]
  }
  printf "gate wall with / without, median of %d pairs: %.2fx  (goal <= 1.5x)\n", n, median(r, n)
  printf "gate CPU with / without (every process), median of %d pairs: %.2fx\n", n, median(c, n)
  printf "Python JSON lines:                     %12.0f cases/s\n", json
  printf "Python batch64:                        %12.0f cases/s  (%.1fx; goal >= 5x)\n", batch, batch / json
}'
