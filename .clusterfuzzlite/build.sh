#!/bin/bash -eu
# Builds every cargo-fuzz target of fuzz/ for ClusterFuzzLite / OSS-Fuzz and ships each
# with its seed corpus (corpus/<target>/) and dictionary (fuzz/dict/<target>.dict).
cd "$SRC/tpb-conform"
cargo fuzz build --fuzz-dir fuzz -O --debug-assertions
out_dir=fuzz/target/x86_64-unknown-linux-gnu/release
for src in fuzz/fuzz_targets/*.rs; do
  t=$(basename "$src" .rs)
  case "$t" in baseline_*) continue ;; esac # speed references, not properties
  cp "$out_dir/$t" "$OUT/"
  if [ -d "corpus/$t" ] && [ -n "$(ls -A "corpus/$t")" ]; then
    (cd "corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
  if [ -f "fuzz/dict/$t.dict" ]; then
    cp "fuzz/dict/$t.dict" "$OUT/$t.dict"
  fi
done
