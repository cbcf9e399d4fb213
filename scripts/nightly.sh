#!/usr/bin/env bash
# Nightly campaign:
#   1. run every cargo-fuzz target for FUZZ_SECONDS (default 300) seconds, stable toolchain
#      (-s none), each with its dictionary; corpora grow in corpus/<target>/ (fuzz/corpus links there);
#   2. `cargo fuzz cmin -s none` each target's corpus;
#   3. `tpbconform minimize corpus` (one file per signature, crash-safe rewrite);
#   4. the release gate (scripts/gate.sh), report in reports/nightly-<UTC date>/ (suffix -N if taken).
# Environment: FUZZ_SECONDS (per target), FUZZ_TARGETS (space-separated; default: all),
#   GATE_ARGS (extra gate arguments, e.g. "--cases 5000000 --seconds 600").
# Exit code: 0 only if no fuzz target crashed and the gate passed. Crash artifacts stay in
# fuzz/artifacts/<target>/ and are listed with their replay commands in
# reports/nightly-<date>.fuzz.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
B="${FUZZ_SECONDS:-300}"
date=$(date -u +%Y-%m-%d)
report="reports/nightly-$date"
n=1
while [ -e "$report" ]; do report="reports/nightly-$date-$n"; n=$((n + 1)); done
log="$report.fuzz.txt"
mkdir -p reports

if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked || exit 2
fi
# baseline_* targets are speed references (scripts/fuzz_speed.sh), not properties.
targets="${FUZZ_TARGETS:-$(cargo fuzz list --fuzz-dir fuzz | grep -v '^baseline_')}"
status=0
: > "$log.partial"
for t in $targets; do
  echo "=== fuzz $t for ${B}s"
  dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  if ! cargo fuzz run --fuzz-dir fuzz -s none "$t" -- -max_total_time="$B" "${dict[@]}"; then
    status=1
    echo "fuzz target $t FAILED" | tee -a "$log.partial"
    for a in fuzz/artifacts/"$t"/*; do
      [ -f "$a" ] && echo "  tpbconform replay --target $t $a" | tee -a "$log.partial"
    done
  fi
done
for t in $targets; do
  echo "=== cmin $t"
  cargo fuzz cmin --fuzz-dir fuzz -s none "$t" || status=1
done
echo "=== minimize corpus"
cargo run --release --locked -p tpbconform --bin tpbconform -- minimize corpus || status=1
mv "$log.partial" "$log"
echo "=== gate -> $report"
# shellcheck disable=SC2086
scripts/gate.sh --report-dir "$report" ${GATE_ARGS:-} || status=1
exit "$status"
