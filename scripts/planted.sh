#!/usr/bin/env bash
# Time-to-find of the four planted-bug classes of issue 12 (the table in docs/measurements.md).
#
# Clones HEAD into a scratch directory, applies scripts/planted/bugs.patch there (core gains
# four bugs, bug n switched on at run time by TPB_PLANT=n, so one build serves all four),
# builds tpbconform and the fuzz targets in the clone, then for each bug:
#   - the README's main job, `tpbconform gate` with default arguments: caught or not;
#   - `structured_diff` and the raw-byte target for that class, from an EMPTY corpus, one run
#     per seed, capped at CAP seconds: wall seconds to the first crash ("nf" = not found).
# The working tree and the project corpus are never touched.
#
# Usage: scripts/planted.sh
# Environment: CAP (default 60), SEEDS (default "1 2"), BUGS (default "1 2 3 4"),
#   GATE=0 (skip the gate runs), WORK (scratch dir, default a mktemp dir, kept),
#   WARM_TARGET=<dir> (copy <dir>/target/release and <dir>/fuzz/target into the clone first,
#   to reuse compiled third-party dependencies; the workspace crates' fingerprints and
#   artifacts are dropped from the copy, so they are rebuilt from the patched sources).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cap="${CAP:-60}"
work="${WORK:-$(mktemp -d /tmp/tpb-planted.XXXXXX)}"
clone="$work/repo"
# bug n: description | raw target
names=(
  ""
  "header: reserved check skips tail byte 0x3F"
  "correlated: reserved dwords 0x10/0x1C combined with XOR (caught only when equal nonzero bytes)"
  "deep decode: 0xD9 with kind byte 0x03 refused only when dtype is 0x0F"
  "deep stream: a group announcing 37 arguments mis-parsed"
)
raw=("" validate_header validate_header decode_any custom_op_stream)

if [ ! -d "$clone" ]; then
  git clone -q "$root" "$clone"
  git -C "$clone" checkout -q "$(git rev-parse HEAD)"
  git -C "$clone" apply "$root/scripts/planted/bugs.patch"
  if [ -n "${WARM_TARGET:-}" ]; then
    mkdir -p "$clone/target" "$clone/fuzz"
    cp -r "$WARM_TARGET/target/release" "$clone/target/" 2>/dev/null || true
    cp -r "$WARM_TARGET/fuzz/target" "$clone/fuzz/" 2>/dev/null || true
    # The copies are newer than the clone's sources, so cargo's mtime check would take the
    # warm tree's workspace crates (unpatched core, maybe another oracle) as fresh: drop every
    # workspace unit (fingerprint, build script output, artifacts, incremental state) so only
    # third-party crates, which cargo keys by version, are reused.
    for rel in "$clone/target/release" "$clone"/fuzz/target/*/release "$clone/fuzz/target/release"; do
      [ -d "$rel" ] || continue
      rm -rf "$rel"/.fingerprint/tpb-* "$rel"/build/tpb-* "$rel"/deps/libtpb_* "$rel"/deps/tpb_* \
        "$rel"/.fingerprint/tpbconform-* "$rel"/deps/libtpbconform* "$rel"/deps/tpbconform-* \
        "$rel"/incremental
      for t in $(sed -n 's/^name = "\(.*\)"$/\1/p' "$clone/fuzz/Cargo.toml"); do
        rm -rf "$rel/deps/$t"-* "$rel/$t" "$rel/$t.d"
      done
    done
  fi
fi
(cd "$clone" && cargo build --release -q -p tpbconform --bin tpbconform)
(cd "$clone" && rm -f fuzz/target/.rustc_info.json &&
  cargo fuzz build -s none structured_diff >/dev/null 2>&1 &&
  for t in validate_header decode_any custom_op_stream; do cargo fuzz build -s none "$t" >/dev/null 2>&1; done)
bin="$clone/fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release"

# seconds until target $1 crashes under bug $2 with seed $3 (or "nf")
ttf() {
  local c="$work/corpus-$1-$2-$3"
  rm -rf "$c" && mkdir -p "$c"
  local t0 t1
  t0=$(date +%s.%N)
  if TPB_PLANT="$2" "$bin/$1" "$c" -seed="$3" -max_total_time="$cap" \
    -artifact_prefix="$work/art-$1-$2-$3-" >"$work/log-$1-$2-$3" 2>&1; then
    echo nf
  else
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
  fi
}

echo "| planted bug (core only) | default gate | \`structured_diff\` (s, seeds ${SEEDS:-1 2}) | raw target | raw, empty corpus (s) |"
echo "|---|---|---|---|---|"
for n in ${BUGS:-1 2 3 4}; do
  gate="-"
  if [ "${GATE:-1}" != 0 ]; then
    rd="$work/gate-$n"
    rm -rf "$rd"
    t0=$(date +%s)
    if (cd "$clone" && TPB_PLANT="$n" target/release/tpbconform gate --report-dir "$rd" >"$work/gate-$n.log" 2>&1); then
      gate="**missed** ($(( $(date +%s) - t0 )) s)"
    else
      gate="caught ($(( $(date +%s) - t0 )) s run)"
    fi
  fi
  s="" r=""
  for seed in ${SEEDS:-1 2}; do
    s="$s${s:+ / }$(ttf structured_diff "$n" "$seed")"
    r="$r${r:+ / }$(ttf "${raw[$n]}" "$n" "$seed")"
  done
  echo "| ${names[$n]} | $gate | $s | \`${raw[$n]}\` | $r |"
done
echo
echo "cap ${cap} s per run; logs, artifacts and gate reports in $work"
