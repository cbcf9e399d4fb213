//! Repository hygiene (issue 18 item 5): one spec version, no dangling
//! citations, every FACTS citation resolves inside the repository
//! (`docs/sources.md`), measurement logs in `docs/measurements.md`.

mod common;

use common::repo_root;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use tpbconform::{fuzz_entry::CORPUS_VERSION, SPEC_VERSION};

/// Folders that hold build output, fuzzing output, reports or corpus data,
/// not sources (relative to the root).
fn is_output(rel: &Path) -> bool {
    let s = rel.to_string_lossy();
    rel.file_name()
        .is_some_and(|n| n == "target" || n == ".git")
        || ["fuzz/artifacts", "fuzz/corpus"].contains(&&*s)
        || (s.starts_with("reports/") && rel.components().count() >= 2)
        || (s.starts_with("corpus/") && s != "corpus/vectors")
}

/// Every regular file under the root outside [`is_output`] folders, as
/// (path relative to the root, text); files that are not UTF-8 are skipped,
/// and so is this file (its examples are not citations).
fn sources() -> Vec<(PathBuf, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            let ty = e.file_type().unwrap();
            if ty.is_dir() && !is_output(&rel) {
                walk(root, &p, out);
            } else if ty.is_file() && rel != Path::new(file!()) {
                if let Ok(t) = fs::read_to_string(&p) {
                    out.push((rel, t));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&repo_root(), &repo_root(), &mut out);
    assert!(out.len() > 100, "only {} source files found", out.len());
    out
}

fn ext(p: &Path) -> &str {
    p.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// The prose of a file: a Rust file's comment lines, a Markdown file whole.
fn prose(p: &Path, text: &str) -> Option<String> {
    match ext(p) {
        "rs" => Some(
            text.lines()
                .filter(|l| l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        "md" => Some(text.to_string()),
        _ => None,
    }
}

#[test]
fn one_spec_version_everywhere() {
    assert_eq!(CORPUS_VERSION, SPEC_VERSION);
    let root = repo_root();
    let spec = fs::read_to_string(root.join("SPEC.md")).unwrap();
    assert!(
        spec.contains(&format!("Spec version: `{SPEC_VERSION}`")),
        "SPEC.md does not state `Spec version: `{SPEC_VERSION}``"
    );
    let corpus = fs::read_to_string(root.join("corpus/VERSION")).unwrap();
    assert_eq!(corpus.trim(), SPEC_VERSION, "corpus/VERSION");
    let mut seen = 0;
    let mut wrong = Vec::new();
    for (p, t) in sources() {
        for (i, _) in t.match_indices("tpb-spec-") {
            let v: String = t[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            seen += 1;
            if v != SPEC_VERSION {
                wrong.push(format!("{}: {v}", p.display()));
            }
        }
    }
    assert!(seen >= 3, "only {seen} mentions of the spec version found");
    assert!(wrong.is_empty(), "not {SPEC_VERSION}: {wrong:#?}");
}

/// The repository paths a text cites: tokens of path characters that contain
/// a `/`, start at a top-level entry of the repository (or `src/`, `tests/`,
/// `../`) and name a file (an extension) or a folder (a trailing `/`); paths
/// of build or run output (`target/`, `fuzz/artifacts`, `reports/<run>`) are
/// not citations.
fn cited_paths(text: &str, tops: &BTreeSet<String>) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    text.split(|c: char| !is_path_char(c))
        .map(|t| t.trim_end_matches('.'))
        .filter(|t| t.contains('/') && !t.starts_with('/') && !t.contains("//"))
        .filter(|t| {
            let first = t.split('/').next().unwrap_or("");
            tops.contains(first) || ["src", "tests", ".."].contains(&first)
        })
        .filter(|t| {
            let last = t.rsplit('/').next().unwrap_or("");
            t.ends_with('/') || last.contains('.')
        })
        .filter(|t| {
            !(t.starts_with("target/")
                || t.starts_with("fuzz/target")
                || t.starts_with("fuzz/artifacts")
                || t.starts_with("fuzz/corpus")
                || (t.starts_with("reports/") && *t != "reports/README.md"))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_cited_repository_path_exists() {
    let root = repo_root();
    let tops: BTreeSet<String> = fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "target" && n != ".git")
        .collect();
    let mut checked = 0;
    let mut missing = Vec::new();
    for (p, t) in sources() {
        let Some(text) = prose(&p, &t) else { continue };
        let dir = p.parent().unwrap_or(Path::new(""));
        // The crates the file belongs to: `tests/x.rs` in a crate's docs is the crate's,
        // or the enclosing package's (the harness's layer crates sit inside `harness/`,
        // whose `tests/` serves them all).
        let krates: Vec<&Path> = dir
            .ancestors()
            .filter(|a| root.join(a).join("Cargo.toml").is_file())
            .collect();
        for c in cited_paths(&text, &tops) {
            checked += 1;
            if ![Path::new(""), dir]
                .iter()
                .chain(&krates)
                .any(|base| root.join(base).join(&c).exists())
            {
                missing.push(format!("{}: `{c}`", p.display()));
            }
        }
    }
    all_resolve(checked, 150, "cited paths that do not exist", &missing);
}

/// More than `min` citations were checked (the scan found them) and none is in `bad`.
fn all_resolve(checked: usize, min: usize, what: &str, bad: &[String]) {
    assert!(checked > min, "only {checked} checked ({what})");
    assert!(bad.is_empty(), "{what}: {bad:#?}");
}

#[test]
fn cited_paths_finds_citations_and_skips_outputs() {
    let tops: BTreeSet<String> = ["core", "fuzz", "reports"].map(String::from).into();
    assert_eq!(
        cited_paths(
            "see `core/SPEC_sync.md`, [x](../fuzz/README.md), core/src/lib.rs. and core/oracle; \
             fuzz/target/x.json reports/nightly/a.md reports/README.md src/a.rs",
            &tops
        ),
        [
            "core/SPEC_sync.md",
            "../fuzz/README.md",
            "core/src/lib.rs",
            "reports/README.md",
            "src/a.rs"
        ]
    );
}

/// Section numbers cited as `FACTS §N`, `F§N` or `sources.md §N`, and names
/// cited as `FACTS "Name"`.
fn facts_citations(text: &str) -> (BTreeSet<u32>, BTreeSet<String>) {
    let mut nums = BTreeSet::new();
    for pat in ["FACTS §", "F§", "sources.md §"] {
        for (i, _) in text.match_indices(pat) {
            let n: String = text[i + pat.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(n) = n.parse() {
                nums.insert(n);
            }
        }
    }
    let mut names = BTreeSet::new();
    for (i, _) in text.match_indices("FACTS \"") {
        let rest = &text[i + 7..];
        if let Some(end) = rest.find('"') {
            names.insert(rest[..end].to_string());
        }
    }
    (nums, names)
}

#[test]
fn every_facts_citation_has_a_section_in_docs_sources() {
    let sources_md = fs::read_to_string(repo_root().join("docs/sources.md")).unwrap();
    let headings: Vec<&str> = sources_md
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    let has = |n: u32| {
        headings.iter().any(|h| {
            h.strip_prefix(&format!("§{n}"))
                .is_some_and(|r| r.is_empty() || r.starts_with(' '))
        })
    };
    let mut cited = 0;
    let mut unresolved = Vec::new();
    for (p, t) in sources() {
        if !matches!(ext(&p), "rs" | "md") {
            continue;
        }
        let (nums, names) = facts_citations(&t);
        for n in nums {
            cited += 1;
            if !has(n) {
                unresolved.push(format!("{}: §{n}", p.display()));
            }
        }
        for name in names {
            cited += 1;
            if !headings.iter().any(|h| h.contains(&name)) {
                unresolved.push(format!("{}: \"{name}\"", p.display()));
            }
        }
    }
    all_resolve(
        cited,
        50,
        "citations without a heading in docs/sources.md",
        &unresolved,
    );
}

#[test]
fn facts_citations_parses_each_form() {
    let (n, names) =
        facts_citations("FACTS §2 [H]; F§8; (docs/sources.md §9); FACTS \"Generations\"; F§x");
    assert_eq!(n, [2, 8, 9].into());
    assert_eq!(names, ["Generations".to_string()].into());
}

#[test]
fn measurement_log_lives_in_docs_measurements() {
    let root = repo_root();
    let fuzz = fs::read_to_string(root.join("fuzz/README.md")).unwrap();
    let log = fs::read_to_string(root.join("docs/measurements.md")).unwrap();
    assert!(
        fuzz.contains("docs/measurements.md"),
        "fuzz/README.md links the log"
    );
    for section in [
        "## Power",
        "### Gate throughput",
        "### Bundle targets and validators",
    ] {
        assert!(
            !fuzz.contains(section),
            "fuzz/README.md still has {section}"
        );
        assert!(
            log.contains(section),
            "docs/measurements.md lacks {section}"
        );
    }
}

/// `SPEC §N` / `SPEC.md §N.M` citations, as section numbers.
fn spec_citations(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for pat in ["SPEC §", "SPEC.md §"] {
        for (i, _) in text.match_indices(pat) {
            let n: String = text[i + pat.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let n = n.trim_end_matches('.');
            if !n.is_empty() {
                out.insert(n.to_string());
            }
        }
    }
    out
}

#[test]
fn every_spec_section_citation_has_a_heading() {
    let spec = fs::read_to_string(repo_root().join("SPEC.md")).unwrap();
    // `## 5. The encoders` → "5"; `### 5.1 Decoding` → "5.1".
    let sections: BTreeSet<String> = spec
        .lines()
        .filter(|l| l.starts_with("## ") || l.starts_with("### "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(|n| n.trim_end_matches('.').to_string())
        .collect();
    assert!(
        sections.contains("5.1") && sections.contains("10"),
        "{sections:?}"
    );
    assert_eq!(
        spec_citations("SPEC §5.1, SPEC §3 #6. SPEC.md §9."),
        ["3", "5.1", "9"].map(String::from).into()
    );
    let mut cited = 0;
    let mut unresolved = Vec::new();
    for (p, t) in sources() {
        if !matches!(ext(&p), "rs" | "md") {
            continue;
        }
        for n in spec_citations(&t) {
            cited += 1;
            if !sections.contains(&n) {
                unresolved.push(format!("{}: SPEC §{n}", p.display()));
            }
        }
    }
    all_resolve(cited, 100, "SPEC sections that do not exist", &unresolved);
}

/// `scripts/planted.sh` (docs/measurements.md's time-to-find table) applies
/// `scripts/planted/bugs.patch` to a clone of HEAD: the patch must still apply to the tree
/// (it had gone stale twice, so the documented measurement could not be re-run).
#[test]
fn the_planted_bug_patch_applies_to_the_tree() {
    let o = std::process::Command::new("git")
        .current_dir(repo_root())
        .args(["apply", "--check", "scripts/planted/bugs.patch"])
        .output();
    let Ok(o) = o else {
        println!("SKIPPED: no git");
        return;
    };
    if !repo_root().join(".git").exists() {
        println!("SKIPPED: not a git checkout");
        return;
    }
    assert!(
        o.status.success(),
        "scripts/planted/bugs.patch no longer applies: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
