#!/usr/bin/env bash
# Fuzz throughput as same-run ratios: runs each target for SECONDS (default 10) from an EMPTY
# temporary corpus (the project corpus is neither read nor written), ROUNDS times (default 2),
# interleaving the targets so machine load hits all of them alike, and prints each target's
# mean exec/s and its ratio to `baseline_empty` (a target that does nothing).
# Usage: scripts/fuzz_speed.sh [target...]   (default: baseline_empty validate_header structured_diff)
# Environment: SECONDS_PER_RUN, ROUNDS, NO_BUILD=1 (skip `cargo fuzz build -s none`).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${SECONDS_PER_RUN:-10}"
rounds="${ROUNDS:-2}"
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(baseline_empty validate_header structured_diff)
case " ${targets[*]} " in *" baseline_empty "*) ;; *) targets=(baseline_empty "${targets[@]}") ;; esac
if [ -z "${NO_BUILD:-}" ]; then
  rm -f fuzz/target/.rustc_info.json
  cargo fuzz build -s none "${targets[@]/#/}" >/dev/null 2>&1 || cargo fuzz build -s none
fi
bin="fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A sum
for t in "${targets[@]}"; do sum[$t]=0; done
for r in $(seq 1 "$rounds"); do
  for t in "${targets[@]}"; do
    rm -rf "$work/c" && mkdir -p "$work/c"
    "$bin/$t" "$work/c" -max_total_time="$secs" -print_final_stats=1 -seed="$r" \
      -artifact_prefix="$work/" >"$work/log" 2>&1 || true
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    t_s=$(sed -n 's/^stat::.*//p' "$work/log" >/dev/null; echo "$secs")
    eps=$(( ${n:-0} / t_s ))
    echo "round $r  $t: ${n:-0} execs in ${secs}s = $eps exec/s"
    sum[$t]=$(( ${sum[$t]} + eps ))
  done
done
base=$(( ${sum[baseline_empty]} / rounds ))
printf '\n| target | exec/s (mean of %s x %ss) | ratio to baseline_empty |\n|---|---|---|\n' "$rounds" "$secs"
for t in "${targets[@]}"; do
  m=$(( ${sum[$t]} / rounds ))
  printf '| %s | %s | %s |\n' "$t" "$m" "$(awk -v a="$m" -v b="$base" 'BEGIN{printf "%.3f", (b>0)?a/b:0}')"
done
