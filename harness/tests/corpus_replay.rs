//! Replays every seed in `corpus/<target>/` through the differential engine,
//! and checks `corpus/VERSION` against the harness's spec version.

use std::fs;
use std::path::PathBuf;
use tpbconform::fuzz_entry::{self, fnv1a64, fuzz_targets, CORPUS_VERSION};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

#[test]
fn corpus_version_is_current() {
    let v = fs::read_to_string(corpus().join("VERSION")).expect("corpus/VERSION unreadable");
    assert_eq!(
        v.trim(),
        CORPUS_VERSION,
        "stale corpus: regenerate with `cargo run -p tpbconform --example gen_corpus`"
    );
}

#[test]
fn replay_every_seed() {
    let mut failures = Vec::new();
    let mut total = 0;
    for t in fuzz_targets() {
        let dir = corpus().join(t);
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut n = 0;
        for entry in entries {
            let path = entry.expect("readable directory entry").path();
            let data = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
            if let Err(f) = fuzz_entry::check(t, &data) {
                failures.push(format!("{}:\n{f}", path.display()));
            }
        }
        assert!(n > 0, "{}: no seeds", dir.display());
        total += n;
    }
    println!("replayed {total} seeds");
    assert!(
        failures.is_empty(),
        "{} diverging seeds; first: {}",
        failures.len(),
        failures[0]
    );
}

#[test]
fn seed_names_are_content_hashes() {
    for t in fuzz_targets() {
        for entry in fs::read_dir(corpus().join(t)).expect("seed folder") {
            let path = entry.expect("entry").path();
            let data = fs::read(&path).expect("seed");
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            // libFuzzer writes new finds as sha1 names (40 hex); generated seeds use FNV-1a 64.
            if name.len() == 16 {
                assert_eq!(
                    name,
                    format!("{:016x}", fnv1a64(&data)),
                    "{}",
                    path.display()
                );
            }
        }
    }
}
