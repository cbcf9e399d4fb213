#!/usr/bin/env bash
# Release gate: build tpbconform (release) and run `tpbconform gate`, passing every argument
# through (e.g. --cases, --seconds, --seed, --shard i/n, --targets, --report-dir).
# Exit code: the gate's (0 pass, 1 discrepancy / failure, 2 bad usage or input).
# Used by .github/workflows/release.yml, .github/workflows/nightly.yml and scripts/nightly.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p tpbconform --bin tpbconform
exec "${CARGO_TARGET_DIR:-target}/release/tpbconform" gate "$@"
