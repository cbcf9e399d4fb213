#!/usr/bin/env bash
# Local dry run of the ClusterFuzzLite / OSS-Fuzz build, outside Docker.
#   1. copies the tracked files of this checkout (a fresh clone plus your uncommitted edits to
#      tracked files; no target/, no fuzz artifacts) to a temporary $SRC/tpb-conform;
#   2. runs that copy's .clusterfuzzlite/build.sh with SRC, OUT and SANITIZER set as the
#      base-builder-rust image sets them, on the nightly toolchain (ASan needs -Zsanitizer);
#   3. checks that every target scripts/fuzz-targets.sh lists (the [[bin]]s of fuzz/Cargo.toml) is in
#      $OUT with its seed corpus zip and dictionary, and that each binary starts and runs 100
#      inputs.
# Usage: scripts/cflite-build.sh [--out DIR] [--keep-src]
#   --out DIR   where the build goes (must not exist; default: a new temporary folder, kept)
#   --keep-src  keep the temporary $SRC copy (default: removed)
# Environment: CFLITE_TOOLCHAIN (default nightly), SANITIZER (default address).
# Takes several minutes (a cold release build of the harness with AddressSanitizer).
# Exit: 0 every target built and shipped; 1 the build or the check failed; 2 bad usage or a
# missing prerequisite (nightly toolchain, cargo-fuzz, zip), named in the message.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=""
keep_src=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    --keep-src) keep_src=1; shift ;;
    *) echo "cflite-build.sh: unknown argument \`$1\` (expected --out DIR, --keep-src)" >&2; exit 2 ;;
  esac
done
toolchain=${CFLITE_TOOLCHAIN:-nightly}
if ! cargo "+$toolchain" --version >/dev/null 2>&1; then
  echo "cflite-build.sh: toolchain \`$toolchain\` not installed (rustup toolchain install $toolchain)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cflite-build.sh: cargo-fuzz not installed (cargo install cargo-fuzz)" >&2
  exit 2
fi
if ! command -v zip >/dev/null; then
  echo "cflite-build.sh: zip not installed" >&2
  exit 2
fi
if [ -z "$out" ]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/cflite-out.XXXXXX")
elif [ -e "$out" ] || [ -L "$out" ]; then
  echo "cflite-build.sh: $out exists already; refusing to write into it (choose a new --out)" >&2
  exit 2
else
  mkdir -p "$out"
fi
src=$(mktemp -d "${TMPDIR:-/tmp}/cflite-src.XXXXXX")
if [ "$keep_src" = 0 ]; then
  trap 'rm -rf "$src"' EXIT
fi
mkdir "$src/tpb-conform"
(cd "$repo" && git ls-files -z | tar --null --ignore-failed-read -cf - -T -) |
  tar -xf - -C "$src/tpb-conform"

echo "=== build.sh: SRC=$src OUT=$out SANITIZER=${SANITIZER:-address} toolchain=$toolchain"
(
  cd "$src"
  unset CARGO_TARGET_DIR
  export SRC="$src" OUT="$out" SANITIZER="${SANITIZER:-address}" RUSTUP_TOOLCHAIN="$toolchain"
  bash -eu "$src/tpb-conform/.clusterfuzzlite/build.sh"
) || { echo "cflite-build.sh: build.sh failed" >&2; exit 1; }

echo "=== check $out"
cd "$src/tpb-conform"
missing=0
n=0
for t in $(scripts/fuzz-targets.sh); do
  n=$((n + 1))
  for f in "$t" "${t}_seed_corpus.zip" "$t.dict"; do
    if [ ! -s "$out/$f" ]; then
      echo "missing: $out/$f" >&2
      missing=1
    fi
  done
  if [ -x "$out/$t" ] && ! "$out/$t" -runs=100 -seed=1 >"$out/$t.smoke.log" 2>&1; then
    echo "$t: 100 runs failed (see $out/$t.smoke.log)" >&2
    missing=1
  fi
  rm -f "$out/$t.smoke.log"
done
if [ "$n" = 0 ] || [ "$missing" = 1 ]; then
  echo "cflite-build.sh: FAIL ($n targets listed)" >&2
  exit 1
fi
echo "cflite-build.sh: OK: $n targets, each with <t>_seed_corpus.zip and <t>.dict, in $out"
