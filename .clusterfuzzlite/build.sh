#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script (runs in the base-builder-rust image, or outside Docker
# through scripts/cflite-build.sh). Builds every cargo-fuzz target that fuzz/Cargo.toml declares
# (scripts/fuzz-targets.sh: `cargo fuzz list` minus the baseline_* speed references; a new
# [[bin]] is picked up with no edit here or in the workflows) and ships
# each one as $OUT/<target>, with its seed corpus (corpus/<target>/ -> $OUT/<target>_seed_corpus.zip)
# and dictionary (fuzz/dict/<target>.dict -> $OUT/<target>.dict).
# Environment: SRC, OUT (set by the image); SANITIZER (address, or coverage for the coverage
# build: the image's `cargo` wrapper reads it). `cargo fuzz build` uses the toolchain on PATH,
# nightly in the image.
cd "$SRC/tpb-conform"
targets=$(scripts/fuzz-targets.sh)
if [ -z "$targets" ]; then
  echo "build.sh: scripts/fuzz-targets.sh printed no target" >&2
  exit 1
fi
cargo fuzz build --fuzz-dir fuzz -O --debug-assertions
out_dir=fuzz/target/x86_64-unknown-linux-gnu/release
for t in $targets; do
  cp "$out_dir/$t" "$OUT/"
  if [ -d "corpus/$t" ] && [ -n "$(ls -A "corpus/$t")" ]; then
    rm -f "$OUT/${t}_seed_corpus.zip"
    (cd "corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  else
    echo "build.sh: warning: no seed corpus corpus/$t/" >&2
  fi
  if [ -f "fuzz/dict/$t.dict" ]; then
    cp "fuzz/dict/$t.dict" "$OUT/$t.dict"
  else
    echo "build.sh: warning: no dictionary fuzz/dict/$t.dict" >&2
  fi
done
