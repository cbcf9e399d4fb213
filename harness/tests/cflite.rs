//! ClusterFuzzLite / OSS-Fuzz packaging of the fuzz targets.
//!
//! - `fuzz_manifest_matches_the_registry` (always runs, fast): the `[[bin]]`s
//!   of fuzz/Cargo.toml minus the `baseline_*` speed references — the list
//!   `scripts/fuzz-targets.sh` gives `.clusterfuzzlite/build.sh` — are exactly
//!   the harness's registered fuzz targets, and each has its source, a
//!   non-empty seed corpus `corpus/<t>/` and dictionary `fuzz/dict/<t>.dict`.
//! - `cflite_dry_build` (ignored by default: a cold AddressSanitizer release
//!   build takes minutes): runs `scripts/cflite-build.sh` (build.sh outside
//!   Docker with temporary SRC/OUT) and checks that every registered target is
//!   in OUT as an executable, with `<t>_seed_corpus.zip` holding its corpus
//!   folder and `<t>.dict` equal to the dictionary. Run it with
//!   `cargo test -p tpbconform --test cflite -- --ignored --nocapture`; it
//!   skips, saying why, when the nightly toolchain or cargo-fuzz is missing.

mod common;

use common::repo_root;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use tpbconform::targets;

/// The harness's fuzz targets: the corpus folders of the target registry
/// (`tpbconform::targets`).
fn registered() -> BTreeSet<String> {
    targets::folders().iter().map(|t| t.to_string()).collect()
}

/// The names of the entries of `dir` that are folders (`dirs`) or files,
/// with `suffix` stripped (entries without it are skipped).
fn names_in(dir: &Path, suffix: &str, dirs: bool) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir() == dirs)
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_suffix(suffix).map(str::to_string)
        })
        .collect()
}

/// `(name, path)` of the `[[bin]]` tables of fuzz/Cargo.toml.
fn fuzz_bins() -> Vec<(String, String)> {
    let t = std::fs::read_to_string(repo_root().join("fuzz/Cargo.toml")).unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut in_bin = false;
    let value = |rest: &str| {
        rest.trim_start()
            .strip_prefix('=')
            .map(|v| v.trim().trim_matches('"').to_string())
    };
    for l in t.lines().map(str::trim) {
        if l.starts_with('[') {
            in_bin = l == "[[bin]]";
            if in_bin {
                out.push((String::new(), String::new()));
            }
        } else if in_bin {
            let last = out.last_mut().unwrap();
            if let Some(v) = l.strip_prefix("name").and_then(value) {
                last.0 = v;
            } else if let Some(v) = l.strip_prefix("path").and_then(value) {
                last.1 = v;
            }
        }
    }
    out
}

/// The shipped targets, by the rule of scripts/fuzz-targets.sh.
fn shipped() -> BTreeSet<String> {
    fuzz_bins()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !n.starts_with("baseline_"))
        .collect()
}

fn works(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn files_and_dirs(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        n += 1;
        if e.path().is_dir() {
            n += files_and_dirs(&e.path());
        }
    }
    n
}

#[test]
fn fuzz_manifest_matches_the_registry() {
    let bins = fuzz_bins();
    assert!(
        bins.iter().all(|(n, _)| !n.is_empty()),
        "a [[bin]] without name"
    );
    for (n, p) in &bins {
        assert!(
            repo_root().join("fuzz").join(p).is_file(),
            "fuzz/Cargo.toml: bin {n}: no source fuzz/{p}"
        );
    }
    assert_eq!(
        shipped(),
        registered(),
        "fuzz/Cargo.toml [[bin]]s (minus baseline_*) vs the harness's fuzz target registry"
    );
    for t in registered() {
        let corpus = repo_root().join("corpus").join(&t);
        assert!(
            corpus.is_dir() && files_and_dirs(&corpus) > 0,
            "fuzz target {t}: no seed corpus corpus/{t}/"
        );
        let dict = repo_root().join("fuzz/dict").join(format!("{t}.dict"));
        assert!(
            std::fs::metadata(&dict).is_ok_and(|m| m.len() > 0),
            "fuzz target {t}: no dictionary fuzz/dict/{t}.dict"
        );
    }
    // The script build.sh uses gives the same list (needs cargo-fuzz).
    if works("cargo", &["fuzz", "--version"]) {
        let o = Command::new(repo_root().join("scripts/fuzz-targets.sh"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let listed: BTreeSet<String> = String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        assert_eq!(listed, registered(), "scripts/fuzz-targets.sh");
    } else {
        println!("note: cargo-fuzz absent: scripts/fuzz-targets.sh not compared");
    }
    // And nothing of a fuzz target exists without a registry entry.
    let corpus: BTreeSet<String> = names_in(&repo_root().join("corpus"), "", true)
        .into_iter()
        .filter(|n| n != "vectors")
        .collect();
    assert_eq!(
        corpus,
        registered(),
        "corpus/<name>/ folders vs the registry"
    );
    let dicts = names_in(&repo_root().join("fuzz/dict"), ".dict", false);
    assert_eq!(dicts, registered(), "fuzz/dict/<name>.dict vs the registry");
    let files: BTreeSet<String> = names_in(&repo_root().join("fuzz/fuzz_targets"), ".rs", false)
        .into_iter()
        .filter(|n| !n.starts_with("baseline_"))
        .collect();
    assert_eq!(
        files,
        registered(),
        "fuzz/fuzz_targets/<name>.rs vs the registry"
    );
    for t in registered() {
        let src =
            std::fs::read_to_string(repo_root().join(format!("fuzz/fuzz_targets/{t}.rs"))).unwrap();
        // `Entry::of` picks the entry path at compile time (the bundle targets'
        // lean path links only what they check); `run` picks it at run time.
        let entry = src.contains(&format!("Entry::of(\"{t}\")")) && src.contains("ENTRY.run(data)");
        let run = src.contains(&format!("fuzz_entry::run(\"{t}\", data)"));
        assert!(
            (entry || run) && src.lines().count() <= 5,
            "fuzz/fuzz_targets/{t}.rs: a few lines running Entry::of(\"{t}\") (or fuzz_entry::run(\"{t}\", data))"
        );
        let lean = tpbconform::fuzz_entry::Entry::find(&t)
            .is_some_and(|e| !matches!(e, tpbconform::fuzz_entry::Entry::Judge(_)));
        assert!(
            entry || !lean,
            "fuzz/fuzz_targets/{t}.rs: a lean target must name its entry as a const (Entry::of), \
             else the binary links the whole engine"
        );
    }
}

/// Entry count of a zip file (its end-of-central-directory record).
fn zip_entries(bytes: &[u8]) -> Option<usize> {
    if bytes.len() < 22 || bytes[..4] != *b"PK\x03\x04" {
        return None;
    }
    let eocd = (0..=bytes.len() - 22)
        .rev()
        .find(|&i| bytes[i..i + 4] == *b"PK\x05\x06")?;
    Some(usize::from(u16::from_le_bytes([
        bytes[eocd + 10],
        bytes[eocd + 11],
    ])))
}

#[test]
#[ignore = "slow (cold ASan release build, minutes): cargo test -p tpbconform --test cflite -- --ignored --nocapture"]
fn cflite_dry_build() {
    let toolchain = std::env::var("CFLITE_TOOLCHAIN").unwrap_or_else(|_| "nightly".into());
    if !works("cargo", &[&format!("+{toolchain}"), "--version"]) {
        println!(
            "SKIPPED cflite_dry_build: the {toolchain} toolchain is not installed \
             (rustup toolchain install {toolchain}); ASan builds need -Zsanitizer"
        );
        return;
    }
    if !works("cargo", &["fuzz", "--version"]) {
        println!(
            "SKIPPED cflite_dry_build: cargo-fuzz is not installed (cargo install cargo-fuzz)"
        );
        return;
    }
    let tmp = std::env::temp_dir().join(format!("tpb-cflite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let out = tmp.join("out");
    let st = Command::new(repo_root().join("scripts/cflite-build.sh"))
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success(), "scripts/cflite-build.sh failed: {st}");
    let mut executables = BTreeSet::new();
    for e in std::fs::read_dir(&out).unwrap().flatten() {
        let md = e.metadata().unwrap();
        #[cfg(unix)]
        let exec = std::os::unix::fs::PermissionsExt::mode(&md.permissions()) & 0o111 != 0;
        #[cfg(not(unix))]
        let exec = !e.file_name().to_string_lossy().contains('.');
        if md.is_file() && exec {
            executables.insert(e.file_name().to_string_lossy().to_string());
        }
    }
    assert_eq!(executables, registered(), "fuzzers in OUT");
    for t in registered() {
        let zip = std::fs::read(out.join(format!("{t}_seed_corpus.zip")))
            .unwrap_or_else(|e| panic!("{t}_seed_corpus.zip: {e}"));
        assert_eq!(
            zip_entries(&zip),
            Some(files_and_dirs(&repo_root().join("corpus").join(&t))),
            "{t}_seed_corpus.zip entries vs corpus/{t}/"
        );
        assert_eq!(
            std::fs::read(out.join(format!("{t}.dict"))).ok(),
            std::fs::read(repo_root().join("fuzz/dict").join(format!("{t}.dict"))).ok(),
            "{t}.dict"
        );
    }
    println!(
        "cflite_dry_build: {} targets in {}",
        executables.len(),
        out.display()
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}
