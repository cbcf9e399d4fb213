#!/usr/bin/env bash
# Prints the fuzz targets that ship to ClusterFuzzLite / OSS-Fuzz, one per line: every [[bin]] of
# fuzz/Cargo.toml (`cargo fuzz list`) except the `baseline_*` speed references (they check no
# property). The one place this list is derived; used by .clusterfuzzlite/build.sh and
# scripts/cflite-build.sh; harness/tests/cflite.rs checks it against the harness's target registry.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fuzz list --fuzz-dir fuzz | grep -v '^baseline_' || true
