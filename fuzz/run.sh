#!/usr/bin/env bash
# Usage: fuzz/run.sh <target> [libFuzzer flags...]
# `cargo fuzz run` on the stable toolchain (-s none) with the target's dictionary wired in and a
# time limit (-max_total_time=60 unless the flags give one). libFuzzer writes new inputs to the
# FIRST corpus folder: here a scratch folder (printed on stderr), with corpus/<target>/ read as
# seeds, so the repository stays clean; GROW_CORPUS=1 writes them into corpus/<target>/ instead.
# Set SANITIZER=address (and use a nightly toolchain, e.g. RUSTUP_TOOLCHAIN=nightly) for ASan.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
target=${1:?usage: fuzz/run.sh <target> [libFuzzer flags...]}
shift
limit=(-max_total_time=60)
for a in "$@"; do
  case $a in -max_total_time=*) limit=() ;; esac
done
if [ "${GROW_CORPUS:-0}" = 1 ]; then
  dirs=("$root/corpus/$target")
else
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-$target.XXXXXX")
  echo "fuzz/run.sh: new inputs go to $scratch (GROW_CORPUS=1 grows corpus/$target/)" >&2
  dirs=("$scratch" "$root/corpus/$target")
fi
exec cargo fuzz run --fuzz-dir "$here" -s "${SANITIZER:-none}" "$target" "${dirs[@]}" -- \
    -dict="$here/dict/$target.dict" ${limit[@]+"${limit[@]}"} "$@"
