//! Every GitHub workflow under `.github/workflows/` parses as YAML, has the
//! shape GitHub expects (`on`, `jobs`, each job with `runs-on` and `steps`),
//! and passes each action only the inputs that action documents (the tables
//! below, copied from each action's `action.yml`). The ClusterFuzzLite
//! workflows cover the four documented modes, say `language: rust` like
//! `.clusterfuzzlite/project.yaml`, and name no fuzz target (the build script
//! enumerates them, so a new target needs no workflow edit).

mod common;

use common::repo_root;
use std::collections::BTreeSet;
use std::path::PathBuf;
use yaml_rust2::{Yaml, YamlLoader};

/// Documented inputs per action (`owner/repo[/path]`, any ref).
/// Sources: google/clusterfuzzlite `actions/build_fuzzers/action.yml` and
/// `actions/run_fuzzers/action.yml` (v1, commit 40f9a53, 2024-12); the
/// `action.yml` of actions/upload-artifact@v4, actions/download-artifact@v4,
/// dtolnay/rust-toolchain, softprops/action-gh-release@v2,
/// Swatinem/rust-cache@v2, actions/checkout@v4.
const DOCUMENTED: &[(&str, &[&str])] = &[
    (
        "google/clusterfuzzlite/actions/build_fuzzers",
        &[
            "language",
            "dry-run",
            "allowed-broken-targets-percentage",
            "sanitizer",
            "project-src-path",
            "bad-build-check",
            "keep-unaffected-fuzz-targets",
            "storage-repo",
            "storage-repo-branch",
            "storage-repo-branch-coverage",
            "upload-build",
            "github-token",
        ],
    ),
    (
        "google/clusterfuzzlite/actions/run_fuzzers",
        &[
            "language",
            "fuzz-seconds",
            "dry-run",
            "sanitizer",
            "mode",
            "github-token",
            "storage-repo",
            "storage-repo-branch",
            "storage-repo-branch-coverage",
            "report-unreproducible-crashes",
            "minimize-crashes",
            "parallel-fuzzing",
            "output-sarif",
            "report-timeouts",
            "report-ooms",
        ],
    ),
    (
        "actions/upload-artifact",
        &[
            "name",
            "path",
            "if-no-files-found",
            "retention-days",
            "compression-level",
            "overwrite",
            "include-hidden-files",
        ],
    ),
    (
        "actions/download-artifact",
        &[
            "name",
            "artifact-ids",
            "path",
            "pattern",
            "merge-multiple",
            "github-token",
            "repository",
            "run-id",
        ],
    ),
    (
        "dtolnay/rust-toolchain",
        &["toolchain", "targets", "target", "components"],
    ),
    (
        "softprops/action-gh-release",
        &[
            "body",
            "body_path",
            "name",
            "tag_name",
            "draft",
            "prerelease",
            "files",
            "fail_on_unmatched_files",
            "repository",
            "token",
            "target_commitish",
            "generate_release_notes",
            "make_latest",
        ],
    ),
    (
        "Swatinem/rust-cache",
        &[
            "prefix-key",
            "shared-key",
            "key",
            "env-vars",
            "workspaces",
            "cache-directories",
            "cache-targets",
            "cache-on-failure",
            "cache-all-crates",
            "save-if",
            "cache-provider",
        ],
    ),
    (
        "actions/checkout",
        &[
            "repository",
            "ref",
            "token",
            "ssh-key",
            "persist-credentials",
            "path",
            "clean",
            "fetch-depth",
            "fetch-tags",
            "lfs",
            "submodules",
            "sparse-checkout",
        ],
    ),
];

/// Inputs every use must give: the `required: true` ones (GitHub does not
/// enforce them), `mode` (else code-change) and `language` (else c++).
const REQUIRED: &[(&str, &[&str])] = &[
    (
        "google/clusterfuzzlite/actions/run_fuzzers",
        &["github-token", "fuzz-seconds", "mode", "language"],
    ),
    (
        "google/clusterfuzzlite/actions/build_fuzzers",
        &["language"],
    ),
];

/// run_fuzzers `mode` values (its action.yml).
const MODES: [&str; 4] = ["code-change", "batch", "prune", "coverage"];

fn workflows() -> Vec<(PathBuf, String)> {
    let dir = repo_root().join(".github/workflows");
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yml" || x == "yaml"))
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no workflow files");
    out
}

fn key<'a>(y: &'a Yaml, k: &str) -> &'a Yaml {
    &y[k]
}

fn text(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `owner/repo[/path]` of a `uses:` value, and whether it has an `@ref`.
fn action_of(uses: &str) -> (&str, bool) {
    match uses.split_once('@') {
        Some((a, r)) => (a, !r.is_empty()),
        None => (uses, false),
    }
}

/// Every step of every job: (file, job, step index, step).
fn steps(docs: &[(PathBuf, Yaml)]) -> Vec<(String, String, usize, Yaml)> {
    let mut out = Vec::new();
    for (p, doc) in docs {
        let file = p.file_name().unwrap().to_string_lossy().to_string();
        let Some(jobs) = key(doc, "jobs").as_hash() else {
            continue;
        };
        for (name, job) in jobs {
            let name = text(name).unwrap_or_default();
            if let Some(st) = key(job, "steps").as_vec() {
                for (i, s) in st.iter().enumerate() {
                    out.push((file.clone(), name.clone(), i, s.clone()));
                }
            }
        }
    }
    out
}

fn parse_all() -> Vec<(PathBuf, Yaml)> {
    workflows()
        .into_iter()
        .map(|(p, t)| {
            let mut docs =
                YamlLoader::load_from_str(&t).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(docs.len(), 1, "{}: one YAML document", p.display());
            (p, docs.remove(0))
        })
        .collect()
}

#[test]
fn workflows_parse_and_have_jobs_with_steps() {
    for (p, doc) in parse_all() {
        let f = p.display();
        assert!(text(key(&doc, "name")).is_some(), "{f}: no name");
        assert!(!key(&doc, "on").is_badvalue(), "{f}: no `on` trigger");
        let jobs = key(&doc, "jobs")
            .as_hash()
            .unwrap_or_else(|| panic!("{f}: no jobs"));
        assert!(!jobs.is_empty(), "{f}: no jobs");
        for (name, job) in jobs {
            let n = text(name).unwrap_or_default();
            assert!(
                text(key(job, "runs-on")).is_some(),
                "{f}: job {n} has no runs-on"
            );
            let st = key(job, "steps")
                .as_vec()
                .unwrap_or_else(|| panic!("{f}: job {n} has no steps"));
            for (i, s) in st.iter().enumerate() {
                let uses = text(key(s, "uses"));
                let run = text(key(s, "run"));
                assert!(
                    uses.is_some() != run.is_some(),
                    "{f}: job {n} step {i}: exactly one of uses/run"
                );
            }
            if let Some(needs) = text(key(job, "needs")) {
                assert!(
                    jobs.contains_key(&Yaml::String(needs.clone())),
                    "{f}: job {n} needs unknown job {needs}"
                );
            }
        }
    }
}

#[test]
fn actions_get_only_documented_inputs() {
    let docs = parse_all();
    for (file, job, i, step) in steps(&docs) {
        let Some(uses) = text(key(&step, "uses")) else {
            continue;
        };
        let at = format!("{file}: job {job} step {i} ({uses})");
        let (action, pinned) = action_of(&uses);
        assert!(pinned, "{at}: pin the action to a version (@vN)");
        let documented = DOCUMENTED
            .iter()
            .find(|(a, _)| *a == action)
            .unwrap_or_else(|| panic!("{at}: add this action's documented inputs to DOCUMENTED"))
            .1;
        let given: BTreeSet<String> = key(&step, "with")
            .as_hash()
            .map(|h| h.keys().filter_map(text).collect())
            .unwrap_or_default();
        for k in &given {
            assert!(
                documented.contains(&k.as_str()),
                "{at}: input `{k}` is not documented by {action}"
            );
        }
        if let Some((_, req)) = REQUIRED.iter().find(|(a, _)| *a == action) {
            for r in *req {
                assert!(given.contains(*r), "{at}: input `{r}` missing");
            }
        }
    }
}

/// ClusterFuzzLite: language rust (as project.yaml), a documented mode and
/// sanitizer, all four modes present, build and run sanitizers agree, no
/// hard-coded target.
#[test]
fn clusterfuzzlite_workflows_cover_every_mode() {
    let project =
        std::fs::read_to_string(repo_root().join(".clusterfuzzlite/project.yaml")).unwrap();
    assert!(
        project.lines().any(|l| l.trim() == "language: rust"),
        "project.yaml: language: rust"
    );
    let docs = parse_all();
    let mut modes = BTreeSet::new();
    let mut build_sanitizer: Option<String> = None;
    for (file, job, i, step) in steps(&docs) {
        let Some(uses) = text(key(&step, "uses")) else {
            continue;
        };
        let (action, _) = action_of(&uses);
        if !action.starts_with("google/clusterfuzzlite/") {
            continue;
        }
        let at = format!("{file}: job {job} step {i}");
        let with = key(&step, "with");
        assert_eq!(
            text(key(with, "language")).as_deref(),
            Some("rust"),
            "{at}: language"
        );
        // Rust: ASan (the only fuzzing sanitizer for Rust) or the coverage build.
        let san = text(key(with, "sanitizer")).unwrap_or_else(|| "address".into());
        let san = if san.contains("matrix.sanitizer") {
            "address".to_string()
        } else {
            san
        };
        assert!(
            san == "address" || san == "coverage",
            "{at}: sanitizer {san}"
        );
        if action.ends_with("/build_fuzzers") {
            build_sanitizer = Some(san);
        } else {
            let mode = text(key(with, "mode")).unwrap_or_default();
            assert!(MODES.contains(&mode.as_str()), "{at}: mode `{mode}`");
            assert_eq!(
                build_sanitizer.as_deref(),
                Some(san.as_str()),
                "{at}: run_fuzzers sanitizer differs from the build step's"
            );
            assert_eq!(
                mode == "coverage",
                san == "coverage",
                "{at}: coverage mode needs the coverage build, and only it"
            );
            let secs: u64 = text(key(with, "fuzz-seconds"))
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{at}: fuzz-seconds"));
            if mode == "code-change" {
                assert!(secs <= 600, "{at}: PR fuzzing should be short ({secs} s)");
            }
            modes.insert(mode);
        }
    }
    let want: BTreeSet<String> = MODES.iter().map(|m| m.to_string()).collect();
    assert_eq!(modes, want, "ClusterFuzzLite modes run by the workflows");
    // No workflow names a fuzz target: build.sh enumerates them.
    let bins = fuzz_bins();
    assert!(!bins.is_empty());
    for (p, t) in workflows() {
        for b in &bins {
            assert!(
                !t.contains(b.as_str()),
                "{}: names fuzz target {b}; let .clusterfuzzlite/build.sh enumerate them",
                p.display()
            );
        }
    }
}

/// `name`s of the `[[bin]]` tables of fuzz/Cargo.toml.
fn fuzz_bins() -> Vec<String> {
    let t = std::fs::read_to_string(repo_root().join("fuzz/Cargo.toml")).unwrap();
    let mut out = Vec::new();
    let mut in_bin = false;
    for l in t.lines().map(str::trim) {
        if l.starts_with('[') {
            in_bin = l == "[[bin]]";
        } else if in_bin {
            if let Some(v) = l.strip_prefix("name") {
                let v = v
                    .trim_start()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"');
                out.push(v.to_string());
            }
        }
    }
    out
}
