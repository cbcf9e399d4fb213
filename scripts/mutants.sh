#!/usr/bin/env bash
# Mutation score of tpb-core and tpb-oracle: cargo-mutants, with the short differential run
# (harness/tests/differential.rs + smoke + every crate's unit tests + core's and the oracle's
# integration tests) as the test command.
#
# Usage: scripts/mutants.sh [cargo-mutants arguments...]
#   everything (about 1,400 mutants; hours on 2 cores):   scripts/mutants.sh
#   a sample, every 16th mutant:                          scripts/mutants.sh --shard 0/16 --sharding round-robin
#   one file:                                             scripts/mutants.sh --file core/src/validate.rs
# Environment:
#   MUTANTS_TIMEOUT  seconds per test run before a mutant counts as a timeout (default 300)
#   MUTANTS_JOBS     parallel builds (default 1)
#   MUTANTS_OUT      output directory (default target/mutants); mutants.out/ lands in it
#   MUTANTS_TESTS    cargo test target selection (default: every crate's unit tests, the
#                    harness's differential and smoke runs, and core's and the oracle's own
#                    integration tests except the slow totality sweeps)
# Equivalent mutants: scripts/mutants-equivalent.txt, one per line as
#   <mutant name as in mutants.out/missed.txt, file:line:col included>  # <one-line reason>
# Output: the counts, the score = caught / (caught + missed - equivalent) over viable mutants
# (timeouts count as caught: the mutant changed behaviour), and the non-equivalent survivors in
# $MUTANTS_OUT/survivors.txt. An "equivalent" entry whose mutant got caught is reported as stale.
# Exit: 0 no non-equivalent survivor; 1 survivors (or stale equivalents); 2 tool or usage error.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="${MUTANTS_OUT:-target/mutants}"
equiv="$root/scripts/mutants-equivalent.txt"
if ! cargo mutants --version >/dev/null 2>&1; then
  cargo install cargo-mutants --locked || exit 2
fi
mkdir -p "$out" || exit 2
default_tests="--lib --test differential --test smoke"
for f in core/tests/*.rs oracles/tests/*.rs; do
  t=$(basename "$f" .rs)
  [ "$t" = totality ] || default_tests+=" --test $t"
done
read -r -a tests <<<"${MUTANTS_TESTS:-$default_tests}"
# as --cargo-arg so that the build phase builds only these test targets too
sel=()
for a in "${tests[@]}"; do sel+=("--cargo-arg=$a"); done
nice cargo mutants \
  -p tpb-core -p tpb-oracle \
  --test-workspace=true \
  --baseline=skip \
  --timeout "${MUTANTS_TIMEOUT:-300}" \
  --jobs "${MUTANTS_JOBS:-1}" \
  --no-shuffle \
  --output "$out" \
  "${sel[@]}" \
  "$@"
rc=$?
# cargo-mutants: 0 all caught, 2 missed, 3 timeouts; anything else is a tool/usage failure.
case $rc in 0 | 2 | 3) ;; *) echo "cargo mutants failed (exit $rc)" >&2; exit 2 ;; esac
mo="$out/mutants.out"
count() { local n=0; [ -f "$mo/$1.txt" ] && n=$(grep -c . "$mo/$1.txt"); echo "${n:-0}"; }
caught=$(count caught); missed=$(count missed); timeout=$(count timeout); unviable=$(count unviable)
# Equivalents are matched by the exact outcome-file name, line:col included: names without a
# position are ambiguous (every `|` -> `^` of one function has the same one). When code moves,
# its entry stops matching and the mutant shows up as a survivor again (fail closed).
names() { grep -v '^#' "$equiv" 2>/dev/null | sed -n 's/  #.*//p' | grep -v '^[[:space:]]*$' | sort -u; }
outcome() { [ -f "$mo/$1.txt" ] && sort -u "$mo/$1.txt"; }
eq_missed=$(outcome missed | comm -12 - <(names) | grep -c .)
stale=$(outcome caught | comm -12 - <(names))
outcome missed | comm -23 - <(names) >"$out/survivors.txt"
survivors=$(grep -c . "$out/survivors.txt")
killed=$((caught + timeout))
denom=$((killed + survivors))
echo
echo "mutants: caught $caught, timeout $timeout, missed $missed (equivalent $eq_missed), unviable $unviable"
if [ "$denom" -gt 0 ]; then
  awk -v k="$killed" -v d="$denom" 'BEGIN { printf "mutation score: %d / %d = %.1f%% (viable, non-equivalent)\n", k, d, 100 * k / d }'
fi
if [ "$survivors" -gt 0 ]; then
  echo "non-equivalent survivors ($out/survivors.txt):"
  sed 's/^/  /' "$out/survivors.txt"
fi
if [ -n "$stale" ]; then
  echo "stale entries in scripts/mutants-equivalent.txt (these mutants were caught):"
  echo "$stale" | sed 's/^/  /'
fi
[ "$survivors" -eq 0 ] && [ -z "$stale" ]
