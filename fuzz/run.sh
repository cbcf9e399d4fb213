#!/usr/bin/env bash
# Usage: fuzz/run.sh <target> [libFuzzer flags...]
# `cargo fuzz run` on the stable toolchain (-s none) with the target's dictionary wired in.
# Set SANITIZER=address (and use a nightly toolchain, e.g. RUSTUP_TOOLCHAIN=nightly) for ASan.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target=${1:?usage: fuzz/run.sh <target> [libFuzzer flags...]}
shift
exec cargo fuzz run --fuzz-dir "$here" -s "${SANITIZER:-none}" "$target" -- \
    -dict="$here/dict/$target.dict" "$@"
