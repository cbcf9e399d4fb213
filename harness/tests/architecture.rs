//! Structure rules of `harness/ARCHITECTURE.md`, checked on the sources
//! (code only: comments, string literals and `#[cfg(test)]` tails are
//! ignored). One test per rule:
//!
//! - `no_import_cycles_in_any_crate`: no crate of the workspace has an
//!   import cycle between its modules (file granularity; for `core` and the
//!   `cli` front end, a child module's use of its ancestors is not counted);
//! - `no_library_module_imports_the_cli`;
//! - `the_crate_graph_points_down`: the harness's crates ([`CRATES`]) hold
//!   the layers in order and depend only on the crates below them;
//! - `layers_point_down`: each top-level harness module imports only its own
//!   layer or the layers below it ([`LAYERS`]; the crates read as one);
//! - `only_the_listed_modules_name_core_or_oracle` ([`NAMES_CORE`],
//!   [`NAMES_ORACLE`]);
//! - `the_two_implementations_name_neither_the_other_nor_the_harness` (nor
//!   depend on a harness crate);
//! - `only_kinds_and_the_registry_name_the_kind_checks`: outside `kinds/` and
//!   `targets.rs`, code names only the parameterised checks
//!   ([`PARAMETER_CHECKS`]), so a new kind is one file plus one row;
//! - `only_the_judge_extends_the_judge`: no `impl Judge` outside `judge/`.
//!
//! - `one_prng_in_the_workspace`: the only PRNG of library, tests, benches
//!   and examples is `generators::SplitMix64` (`generators/rng.rs`; core and
//!   the oracle include that file with `#[path]`).
//!
//! `the_checker_sees_every_rule_broken` runs each checker on a planted
//! violation, so none passes vacuously. (The target registry vs the
//! cargo-fuzz package: `tests/cflite.rs`; the oracle's manifest:
//! `oracles/tests/independence.rs`.)

mod common;

use common::repo_root;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src` with its module path (`lib.rs` = root).
fn modules(src: &Path) -> Vec<(Vec<String>, PathBuf)> {
    fn walk(dir: &Path, prefix: &[String], out: &mut Vec<(Vec<String>, PathBuf)>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                let mut q = prefix.to_vec();
                q.push(name);
                walk(&p, &q, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let mut q = prefix.to_vec();
                if name != "mod" && name != "lib" && name != "main" {
                    q.push(name.clone());
                }
                if name != "main" {
                    out.push((q, p));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(src, &[], &mut out);
    out
}

/// The code of a file without comments, string literals and its
/// `#[cfg(test)]` tail.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => &text[..],
    };
    let mut out = String::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i + 1 < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // a char literal such as '"' or '\''
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn ident_at(s: &[u8], mut i: usize) -> (String, usize) {
    let start = i;
    while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
        i += 1;
    }
    (String::from_utf8_lossy(&s[start..i]).to_string(), i)
}

/// The identifier starting at `s[i]`, where it ends, and whether it can start
/// a path (no identifier character or `:` before it); `None` if none starts there.
fn word_at(s: &[u8], i: usize) -> Option<(String, usize, bool)> {
    let (word, j) = ident_at(s, i);
    let boundary =
        i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_' || s[i - 1] == b':');
    (!word.is_empty()).then_some((word, j, boundary))
}

/// Every path `crate::…` / `super::…` / `self::…` in `code`, absolute,
/// with `use` groups (`a::{b, c::d}`) expanded.
fn paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let Some((word, j, boundary)) = word_at(s, i) else {
            i += 1;
            continue;
        };
        if !boundary
            || !matches!(word.as_str(), "crate" | "super" | "self")
            || !code[j..].starts_with("::")
        {
            i = j;
            continue;
        }
        let mut base: Vec<String> = match word.as_str() {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            _ => module[..module.len().saturating_sub(1)].to_vec(),
        };
        let mut k = j;
        while code[k..].starts_with("::") {
            k += 2;
            if s.get(k) == Some(&b'{') {
                // a use group: split at top-level commas
                let mut depth = 0;
                let mut item = String::new();
                let mut items = Vec::new();
                for (off, c) in code[k..].char_indices() {
                    match c {
                        '{' => {
                            depth += 1;
                            if depth > 1 {
                                item.push(c);
                            }
                        }
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                items.push(std::mem::take(&mut item));
                                k += off + 1;
                                break;
                            }
                            item.push(c);
                        }
                        ',' if depth == 1 => items.push(std::mem::take(&mut item)),
                        _ => item.push(c),
                    }
                }
                for it in items {
                    let seg: Vec<String> = it
                        .split("::")
                        .map(|x| x.trim().trim_start_matches('{').trim().to_string())
                        .take_while(|x| {
                            !x.is_empty() && x.chars().all(|c| c.is_alphanumeric() || c == '_')
                        })
                        .collect();
                    let mut p = base.clone();
                    p.extend(seg);
                    out.push(p);
                }
                break;
            }
            let (seg, e) = ident_at(s, k);
            if seg.is_empty() {
                break;
            }
            if seg == "super" {
                base.pop();
            } else {
                base.push(seg);
            }
            k = e;
        }
        if !out
            .last()
            .is_some_and(|p: &Vec<String>| p.starts_with(&base))
        {
            out.push(base);
        }
        i = k.max(j);
    }
    out
}

/// Paths relative to `module` that start with one of its child modules
/// (`corpus::run()`, `pub use config::X`).
fn child_paths(code: &str, module: &[String], known: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (word, j, boundary) in words(code.as_bytes()) {
        if boundary && code[j..].starts_with("::") {
            let mut child = module.to_vec();
            child.push(word);
            if known.contains(&child) {
                out.push(child);
            }
        }
    }
    out
}

/// Every identifier of `s` in order, as [`word_at`] reads it.
fn words(s: &[u8]) -> Vec<(String, usize, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        match word_at(s, i) {
            Some(w) => {
                i = w.1;
                out.push(w);
            }
            None => i += 1,
        }
    }
    out
}

/// The harness's crates, lowest first: folder, package, and the layers of
/// [`LAYERS`] it holds, in order. A crate's `[dependencies]` (and dev- and
/// build-dependencies) may name only the crates listed before it
/// (`the_crate_graph_points_down`), so Cargo refuses an upward import; each
/// crate's root imports the lower crates' modules it uses, so that the
/// module paths (`crate::arch`) and the rules below read the crates as one.
const CRATES: &[(&str, &str, &[&str])] = &[
    ("harness/subjects", "tpb-subjects", &["data", "subjects"]),
    ("harness/generators", "tpb-generators", &["generators"]),
    ("harness/judge", "tpb-judge", &["judge"]),
    ("harness/gate", "tpb-gate", &["campaigns"]),
    ("harness/report", "tpb-report", &["report"]),
    ("harness", "tpbconform", &["cli"]),
];

/// The `src` folders of the harness's crates ([`CRATES`]).
fn harness_srcs() -> Vec<PathBuf> {
    CRATES
        .iter()
        .map(|(dir, _, _)| repo_root().join(dir).join("src"))
        .collect()
}

/// Every module of the harness's crates, as [`modules`] gives them; the
/// crates' top-level modules have distinct names, so they read as one crate.
fn harness_modules() -> Vec<(Vec<String>, PathBuf)> {
    harness_srcs().iter().flat_map(|s| modules(s)).collect()
}

/// Module-level import graph of the crate whose sources are `src`.
fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    graph_of(modules(src))
}

/// Module-level import graph of the modules `mods`.
fn graph_of(mods: Vec<(Vec<String>, PathBuf)>) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let known: BTreeSet<Vec<String>> = mods.iter().map(|(m, _)| m.clone()).collect();
    let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, path) in &mods {
        let edges = g.entry(m.clone()).or_default();
        let code = code(path);
        let mut ps = paths(&code, m);
        ps.extend(child_paths(&code, m, &known));
        for p in ps {
            let target = (0..=p.len())
                .rev()
                .map(|n| p[..n].to_vec())
                .find(|q| known.contains(q))
                .unwrap_or_default();
            if !target.is_empty() && target != *m {
                edges.insert(target);
            }
        }
    }
    g
}

fn find_cycle(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<String>> {
    fn dfs(
        n: &Vec<String>,
        g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<String>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|x| x == m).unwrap_or(0);
                    let mut c: Vec<String> = stack[from..].iter().map(|x| x.join("::")).collect();
                    c.push(m.join("::"));
                    return Some(c);
                }
                0 => {
                    if let Some(c) = dfs(m, g, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = dfs(n, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_import_cycles_in_any_crate() {
    // `true`: every edge counts, including a child module's `super::` use of
    // its parent (harness, oracle). `false` (core, not restructured yet):
    // a child's use of its own ancestors is its namespace, not a cycle.
    for (krate, strict) in [
        ("harness", true),
        ("oracles/src", true),
        ("capi/src", true),
        ("neff/src", true),
        ("core/src", false),
    ] {
        let mut g = if krate == "harness" {
            graph_of(harness_modules())
        } else {
            graph(&repo_root().join(krate))
        };
        for (m, edges) in g.iter_mut() {
            // The CLI front end (top layer) keeps its shared helpers in
            // `cli/mod.rs`; a subcommand's use of them is not a cycle.
            let front_end = m.first().is_some_and(|x| x == "cli");
            if !strict || front_end {
                edges.retain(|e| !m.starts_with(e));
            }
        }
        assert!(g.len() > 3, "{krate}: found only {} modules", g.len());
        if let Some(c) = find_cycle(&g) {
            panic!("{krate}: import cycle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn no_library_module_imports_the_cli() {
    let g = graph_of(harness_modules());
    let cli = vec!["cli".to_string()];
    for (m, edges) in &g {
        if m.first().is_some_and(|x| x == "cli") {
            continue;
        }
        let bad: Vec<_> = edges.iter().filter(|e| e.starts_with(&cli)).collect();
        assert!(
            bad.is_empty(),
            "library module {} imports {bad:?}",
            m.join("::")
        );
    }
}

#[test]
fn the_checker_sees_cycles_and_cli_imports() {
    // The parser on a known shape, so the two tests above cannot pass vacuously.
    let m = vec!["gate".to_string(), "corpus".to_string()];
    let p = paths(
        "use super::{outcome::GateRun, x}; use crate::cli::layout; fn f() { crate::triage::go() }",
        &m,
    );
    assert!(
        p.contains(&vec!["gate".into(), "outcome".into(), "GateRun".into()]),
        "{p:?}"
    );
    assert!(p.contains(&vec!["cli".into(), "layout".into()]), "{p:?}");
    assert!(p.contains(&vec!["triage".into(), "go".into()]), "{p:?}");
    let known = BTreeSet::from([m.clone(), vec!["gate".to_string()]]);
    let top = vec!["gate".to_string()];
    let c = child_paths(
        "pub use corpus::replay; fn f() { x::corpus::y() }",
        &top,
        &known,
    );
    assert_eq!(c, vec![m.clone()]);
    let mut g = BTreeMap::new();
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    g.insert(a.clone(), BTreeSet::from([b.clone()]));
    g.insert(b.clone(), BTreeSet::from([a.clone()]));
    assert!(find_cycle(&g).is_some());
    g.insert(b, BTreeSet::new());
    assert!(find_cycle(&g).is_none());
}

/// The layers of the harness, lowest first: a top-level module may import
/// modules of its own layer (the cycle test keeps those acyclic) and of the
/// layers below, never above. `lib.rs` (each crate root) imports or re-exports
/// the lower crates' modules and is not checked. Every top-level module must
/// be listed, in its layer's crate ([`CRATES`]).
const LAYERS: &[(&str, &[&str])] = &[
    (
        "data",
        &["generation", "layout", "atomic", "interrupt", "strict_json"],
    ),
    (
        "subjects",
        &[
            "subjects",
            "targets",
            "input",
            "fields_json",
            "lower_input",
            "external",
        ],
    ),
    ("generators", &["generators"]),
    // One layer: the judge's engine (`judge/nway.rs`) is below the kinds,
    // its one entry (`judge/batch.rs`) above them; the cycle test keeps the
    // modules apart, and only `judge/` extends `Judge`
    // (`only_the_judge_extends_the_judge`).
    (
        "judge",
        &["judge", "kinds", "reach", "findings", "blame", "explain"],
    ),
    ("campaigns", &["gate", "triage", "minimize", "fuzz_entry"]),
    ("report", &["report"]),
    ("cli", &["cli"]),
];

fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&top))
}

/// Every import of a top-level module into a higher layer, as
/// `"from -> to"`; and every top-level module no layer lists.
fn upward_imports(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> (Vec<String>, Vec<String>) {
    let (mut up, mut unlisted) = (Vec::new(), BTreeSet::new());
    for (m, edges) in g {
        let Some(from) = m.first() else { continue };
        let Some(lf) = layer_of(from) else {
            unlisted.insert(from.clone());
            continue;
        };
        for e in edges {
            let Some(to) = e.first() else { continue };
            match layer_of(to) {
                Some(lt) if lt > lf => up.push(format!(
                    "{} ({}) -> {} ({})",
                    m.join("::"),
                    LAYERS[lf].0,
                    e.join("::"),
                    LAYERS[lt].0
                )),
                Some(_) => {}
                None => {
                    unlisted.insert(to.clone());
                }
            }
        }
    }
    (up, unlisted.into_iter().collect())
}

#[test]
fn layers_point_down() {
    let g = graph_of(harness_modules());
    let (up, unlisted) = upward_imports(&g);
    assert!(
        unlisted.is_empty(),
        "top-level modules in no layer of LAYERS: {unlisted:?}"
    );
    assert!(
        up.is_empty(),
        "imports into a higher layer:\n{}",
        up.join("\n")
    );
}

/// The harness files (relative to their crate's `src`; a trailing `/` is a whole
/// folder) whose code may name `tpb_core`: the subject adapters and their
/// vocabulary, the modules that read core's generated instruction table
/// (`generation`, `layout`, `reach`) and the generators that encode with core's
/// encoders, the CLI commands whose reference is core (`check`, `lower`) and
/// the IR readers. No kind: every kind asks through `Subject` (issue 18).
const NAMES_CORE: &[&str] = &[
    "subjects/",
    "generators/",
    "generation.rs",
    "layout.rs",
    "reach.rs",
    "cli/check.rs",
    "cli/check_neff.rs",
    "cli/check_output.rs",
    "cli/check_sync.rs",
    "cli/lower.rs",
    "cli/stream_context.rs",
    "lower_input.rs",
    "external/lower_json.rs",
];

/// The harness files whose code may name `tpb_oracle`: the oracle adapter
/// (which translates to and from the oracle) and the sync vocabulary of `subjects/` (no
/// kind: issue 18).
const NAMES_ORACLE: &[&str] = &[
    "subjects/oracle_adapter.rs",
    "subjects/sync_types.rs",
    "subjects/types.rs",
];

/// Whether `word` stands in `code` as a whole identifier.
fn names(code: &str, word: &str) -> bool {
    let s = code.as_bytes();
    code.match_indices(word).any(|(i, _)| {
        let before = i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_');
        let j = i + word.len();
        let after = j >= s.len() || !(s[j].is_ascii_alphanumeric() || s[j] == b'_');
        before && after
    })
}

/// Files of `src` (relative paths, `/`-separated) whose code names `word`.
fn files_naming(src: &Path, word: &str) -> BTreeSet<String> {
    modules(src)
        .into_iter()
        .filter(|(_, p)| names(&code(p), word))
        .map(|(_, p)| {
            p.strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect()
}

/// Files of the harness's crates (relative to their `src`) whose code names `word`.
fn harness_files_naming(word: &str) -> BTreeSet<String> {
    harness_srcs()
        .iter()
        .flat_map(|src| files_naming(src, word))
        .collect()
}

/// Files naming the crate that `allowed` does not cover, and the listed
/// files (not folders) that no longer name it (the list must stay true).
fn naming_violations(found: &BTreeSet<String>, allowed: &[&str]) -> (Vec<String>, Vec<String>) {
    let covered = |f: &String| {
        allowed.iter().any(|a| {
            if a.ends_with('/') {
                f.starts_with(a)
            } else {
                f == a
            }
        })
    };
    let extra = found.iter().filter(|f| !covered(f)).cloned().collect();
    let stale = allowed
        .iter()
        .filter(|a| !a.ends_with('/') && !found.contains(**a))
        .map(|a| a.to_string())
        .collect();
    (extra, stale)
}

/// The files naming `krate` are exactly those `allowed` covers (`where_` says what they are).
fn assert_names(found: &BTreeSet<String>, allowed: &[&str], krate: &str, where_: &str) {
    let (extra, stale) = naming_violations(found, allowed);
    assert!(
        extra.is_empty(),
        "{krate} named outside {where_}: {extra:?}"
    );
    assert!(
        stale.is_empty(),
        "listed as naming {krate} but no longer do (shrink the list and ARCHITECTURE.md): {stale:?}"
    );
}

#[test]
fn only_the_listed_modules_name_core_or_oracle() {
    for (krate, allowed) in [("tpb_core", NAMES_CORE), ("tpb_oracle", NAMES_ORACLE)] {
        let found = harness_files_naming(krate);
        assert_names(&found, allowed, krate, "the modules ARCHITECTURE.md allows");
    }
}

/// The library names of the harness's crates (`tpb_subjects`, ..., `tpbconform`).
fn harness_lib_names() -> Vec<String> {
    CRATES.iter().map(|(_, p, _)| p.replace('-', "_")).collect()
}

#[test]
fn the_two_implementations_name_neither_the_other_nor_the_harness() {
    for (dir, other) in [("core", "tpb_oracle"), ("oracles", "tpb_core")] {
        let src = repo_root().join(dir).join("src");
        for word in harness_lib_names()
            .iter()
            .map(String::as_str)
            .chain([other])
        {
            let found = files_naming(&src, word);
            assert!(
                found.is_empty(),
                "{} names {word}: {found:?}",
                src.display()
            );
        }
        let deps = manifest_deps(&repo_root().join(dir).join("Cargo.toml"));
        for (_, p, _) in CRATES {
            assert!(!deps.contains(*p), "{dir}/Cargo.toml depends on {p}");
        }
    }
}

/// The packages a `Cargo.toml` depends on, in any dependency table
/// (`[dependencies]`, `[dev-dependencies]`, `[build-dependencies]`, their
/// `[target.'…'.…]` forms, and `[dependencies.name]`); a renamed dependency
/// counts by its `package`.
fn manifest_deps_of(text: &str) -> BTreeSet<String> {
    let tables = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut out = BTreeSet::new();
    let mut in_deps = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            let header = line.trim_matches(|c| c == '[' || c == ']');
            let mut parts = header.rsplitn(2, '.');
            let (last, rest) = (parts.next().unwrap_or(""), parts.next());
            in_deps = tables
                .iter()
                .any(|t| header == *t || header.ends_with(&format!(".{t}")));
            if !in_deps
                && rest.is_some_and(|r| {
                    tables
                        .iter()
                        .any(|t| r == *t || r.ends_with(&format!(".{t}")))
                })
            {
                // `[dependencies.name]`: the table is the dependency
                out.insert(last.trim_matches('"').to_string());
            }
            continue;
        }
        if !in_deps || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let package = value.split_once("package").and_then(|(_, v)| {
            let v = v
                .trim_start()
                .strip_prefix('=')?
                .trim_start()
                .strip_prefix('"')?;
            v.split('"').next()
        });
        out.insert(package.unwrap_or(key.trim().trim_matches('"')).to_string());
    }
    out
}

/// [`manifest_deps_of`] of the file `path`.
fn manifest_deps(path: &Path) -> BTreeSet<String> {
    manifest_deps_of(&fs::read_to_string(path).unwrap())
}

/// Every dependency of a harness crate on a harness crate not listed before it
/// in [`CRATES`], as `"from -> to"`; `deps` is each crate's [`manifest_deps`].
fn upward_crate_deps(deps: &[BTreeSet<String>]) -> Vec<String> {
    let mut up = Vec::new();
    for (i, d) in deps.iter().enumerate() {
        for (j, (_, to, _)) in CRATES.iter().enumerate() {
            if j >= i && d.contains(*to) {
                up.push(format!("{} -> {to}", CRATES[i].1));
            }
        }
    }
    up
}

#[test]
fn the_crate_graph_points_down() {
    // The crates hold the layers in order, all of them.
    let held: Vec<&str> = CRATES
        .iter()
        .flat_map(|(_, _, l)| l.iter().copied())
        .collect();
    let layers: Vec<&str> = LAYERS.iter().map(|(l, _)| *l).collect();
    assert_eq!(
        held, layers,
        "CRATES must hold the layers of LAYERS in order"
    );
    // Each crate's top-level modules are of its own layers.
    for (dir, package, held) in CRATES {
        let src = repo_root().join(dir).join("src");
        let mut tops: BTreeSet<String> = BTreeSet::new();
        for (m, _) in modules(&src) {
            if let Some(top) = m.first() {
                tops.insert(top.clone());
            }
        }
        assert!(
            !tops.is_empty(),
            "{package}: no modules under {}",
            src.display()
        );
        for top in tops {
            let layer = layer_of(&top).map(|l| LAYERS[l].0);
            assert!(
                layer.is_some_and(|l| held.contains(&l)),
                "{package} holds module {top} of layer {layer:?}, not one of {held:?}"
            );
        }
    }
    // Every package folder under harness/ is one of CRATES.
    let mut folders = vec![repo_root().join("harness")];
    for e in fs::read_dir(repo_root().join("harness")).unwrap().flatten() {
        if e.path().join("Cargo.toml").is_file() {
            folders.push(e.path());
        }
    }
    for f in &folders {
        let rel = f
            .strip_prefix(repo_root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        assert!(
            CRATES.iter().any(|(dir, _, _)| *dir == rel),
            "{rel}/Cargo.toml is a harness crate that CRATES does not list"
        );
    }
    // Dependencies point down.
    let deps: Vec<BTreeSet<String>> = CRATES
        .iter()
        .map(|(dir, _, _)| manifest_deps(&repo_root().join(dir).join("Cargo.toml")))
        .collect();
    assert!(
        deps[1].contains(CRATES[0].1),
        "the manifest reader found no harness dependency: {:?}",
        deps[1]
    );
    let up = upward_crate_deps(&deps);
    assert!(
        up.is_empty(),
        "harness crates depending on their own or a higher layer:\n{}",
        up.join("\n")
    );
}

/// The NEFF reader (`neff/`, crate tpb-neff) is a container reader below the harness: it
/// names neither the harness nor either implementation of the ISA (it hands bytes on), and
/// in the harness only the `check` front end and `neff info` name it.
const NAMES_NEFF: &[&str] = &[
    "cli/check_neff.rs",
    "cli/check_output.rs",
    "cli/check_sync.rs",
    "cli/neff.rs",
];

#[test]
fn the_neff_reader_names_no_other_crate_and_only_the_cli_names_it() {
    let src = repo_root().join("neff/src");
    let libs = harness_lib_names();
    for word in libs
        .iter()
        .map(String::as_str)
        .chain(["tpb_core", "tpb_oracle"])
    {
        let found = files_naming(&src, word);
        assert!(found.is_empty(), "neff/src names {word}: {found:?}");
    }
    let deps = manifest_deps(&repo_root().join("neff/Cargo.toml"));
    let packages = CRATES.iter().map(|(_, p, _)| *p);
    for dep in packages.chain(["tpb-core", "tpb-oracle"]) {
        assert!(!deps.contains(dep), "neff/Cargo.toml depends on {dep}");
    }
    let found = harness_files_naming("tpb_neff");
    assert_names(&found, NAMES_NEFF, "tpb_neff", "the CLI");
}

/// The checks that code outside `kinds/` and `targets.rs` may name: the
/// parameterised ones (a validator, the LUT tables) and the bundle checks
/// next to them, which bundle tools (explain, blame, triage, the lean fuzz
/// path, `subject check`) answer by operation. In `judge/` also the typed
/// entries for the raw stream and the IR gates. A kind that is one file
/// (sync, lowering, stream lint, ...) is named only in `kinds/` and the
/// registry.
const PARAMETER_CHECKS: &[&str] = &["Validator", "Decode", "Roundtrip", "Lut"];
const ENGINE_CHECKS: &[&str] = &["StreamRaw", "Ir"];

/// Every `Check::<Variant>` in the code of the harness outside `kinds/` and
/// `targets.rs` that [`PARAMETER_CHECKS`] / [`ENGINE_CHECKS`] do not allow.
fn kind_checks_outside(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (rel, code) in files {
        if rel.starts_with("kinds/") || rel == "targets.rs" {
            continue;
        }
        for (i, _) in code.match_indices("Check::") {
            let b = code.as_bytes();
            if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
                continue;
            }
            let (variant, _) = ident_at(b, i + "Check::".len());
            let ok = PARAMETER_CHECKS.contains(&variant.as_str())
                || (rel.starts_with("judge/") && ENGINE_CHECKS.contains(&variant.as_str()));
            if !ok {
                bad.push(format!("{rel}: Check::{variant}"));
            }
        }
    }
    bad
}

/// The code of every harness source file, with its path under its `src`.
fn harness_files() -> Vec<(String, String)> {
    harness_srcs()
        .iter()
        .flat_map(|src| {
            modules(src).into_iter().map(move |(_, p)| {
                let rel = p
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                (rel, code(&p))
            })
        })
        .collect()
}

/// The files outside `judge/` that extend the judge (`impl Judge`, or a
/// trait implemented for it): a kind calling back into the judge through a
/// block of its own is how comparisons ended up in three places.
fn judge_impls_outside(files: &[(String, String)]) -> Vec<String> {
    files
        .iter()
        .filter(|(rel, _)| !rel.starts_with("judge/"))
        .filter(|(_, code)| {
            code.split("impl").skip(1).any(|rest| {
                let head = rest.split('{').next().unwrap_or("");
                let ty = head.rsplit(" for ").next().unwrap_or(head);
                ty.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                    .any(|w| w == "Judge" || w.ends_with("::Judge"))
            })
        })
        .map(|(rel, _)| rel.clone())
        .collect()
}

#[test]
fn only_the_judge_extends_the_judge() {
    let files = harness_files();
    assert!(files
        .iter()
        .any(|(r, c)| r == "judge/nway.rs" && c.contains("impl Judge")));
    let bad = judge_impls_outside(&files);
    assert!(bad.is_empty(), "`impl Judge` outside judge/: {bad:?}");
}

#[test]
fn only_kinds_and_the_registry_name_the_kind_checks() {
    let files = harness_files();
    let uses = files.iter().filter(|(_, c)| c.contains("Check::")).count();
    assert!(
        uses > 5,
        "found Check:: in only {uses} files: the scan is broken"
    );
    let bad = kind_checks_outside(&files);
    assert!(
        bad.is_empty(),
        "a kind's check named outside kinds/ (route it through kinds::of / a TargetKind method):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_checker_sees_every_rule_broken() {
    // Layers: judge importing gate points up; gate importing judge is fine.
    let e = |a: &str, b: &str| (vec![a.to_string()], BTreeSet::from([vec![b.to_string()]]));
    let g = BTreeMap::from([e("judge", "gate"), e("gate", "judge")]);
    let (up, unlisted) = upward_imports(&g);
    assert_eq!(up.len(), 1, "{up:?}");
    assert!(up[0].starts_with("judge (judge) -> gate"), "{up:?}");
    assert!(unlisted.is_empty());
    let g = BTreeMap::from([e("newthing", "generation")]);
    assert_eq!(upward_imports(&g).1, vec!["newthing".to_string()]);
    // Naming a crate: found outside the list, and a stale listed file.
    let found = BTreeSet::from(["gate/mod.rs".to_string(), "subjects/x.rs".to_string()]);
    let (extra, stale) = naming_violations(&found, &["subjects/", "layout.rs"]);
    assert_eq!(extra, vec!["gate/mod.rs".to_string()]);
    assert_eq!(stale, vec!["layout.rs".to_string()]);
    assert!(names("use tpb_core::Bundle;", "tpb_core"));
    assert!(!names("use tpb_core_x::Bundle;", "tpb_core"));
    assert!(!names(&code_of("// tpb_core\nfn f() {}"), "tpb_core"));
    // Kind checks: Sync in gate/ fails, Validator there and Ir in judge/ pass.
    let files = vec![
        (
            "gate/config.rs".to_string(),
            "Check::Sync => 1, Check::Validator(v) => 2".to_string(),
        ),
        ("judge/nway.rs".to_string(), "Check::Ir".to_string()),
        ("kinds/mod.rs".to_string(), "Check::Sync".to_string()),
        ("minimize.rs".to_string(), "MyCheck::Sync".to_string()),
    ];
    assert_eq!(
        kind_checks_outside(&files),
        vec!["gate/config.rs: Check::Sync".to_string()]
    );
    // `impl Judge` (or a trait for it) outside judge/ fails, a kind's own
    // impl passes.
    let files = vec![
        (
            "kinds/mod.rs".to_string(),
            "impl Judge { fn f() {} }".to_string(),
        ),
        (
            "kinds/x.rs".to_string(),
            "impl Cases for crate::judge::Judge {}".to_string(),
        ),
        (
            "kinds/lut.rs".to_string(),
            "impl TargetKind for LutKind { fn f(e: &Judge) {} }".to_string(),
        ),
        ("judge/batch.rs".to_string(), "impl Judge {}".to_string()),
    ];
    assert_eq!(
        judge_impls_outside(&files),
        vec!["kinds/mod.rs", "kinds/x.rs"]
    );
    // Crate graph: the manifest reader sees every dependency form, and a
    // harness crate depending on its own or a higher one is upward.
    let deps = manifest_deps_of(
        "[package]\nname = \"x\"\n[dependencies]\ntpb-subjects = { path = \"../subjects\" }\n\
         serde = \"1\"\n[dev-dependencies]\nrep = { package = \"tpb-report\", path = \"r\" }\n\
         [target.'cfg(unix)'.build-dependencies]\ncc = \"1\"\n[dependencies.tpb-gate]\npath = \"g\"\n\
         [lints]\nworkspace = true\n",
    );
    let want = ["cc", "serde", "tpb-gate", "tpb-report", "tpb-subjects"];
    assert_eq!(deps, want.iter().map(|s| s.to_string()).collect());
    let mut graph = vec![BTreeSet::new(); CRATES.len()];
    graph[1] = BTreeSet::from(["tpb-subjects".to_string()]);
    assert!(upward_crate_deps(&graph).is_empty());
    graph[2] = BTreeSet::from(["tpb-gate".to_string(), "tpb-judge".to_string()]);
    assert_eq!(
        upward_crate_deps(&graph),
        vec![
            "tpb-judge -> tpb-judge".to_string(),
            "tpb-judge -> tpb-gate".to_string()
        ]
    );
}

/// [`code`] of a text (through a scratch file).
fn code_of(text: &str) -> String {
    let p = std::env::temp_dir().join(format!("tpb-arch-{}.rs", std::process::id()));
    fs::write(&p, text).unwrap();
    let c = code(&p);
    let _ = fs::remove_file(&p);
    c
}

/// Marks of a hand-rolled PRNG: a xorshift step, the xorshift* and PCG /
/// LCG multipliers, the SplitMix64 finaliser constant.
const PRNG_MARKS: &[&str] = &[
    "<< 13;",
    "wrapping_mul(0x2545",
    "wrapping_mul(6364136223846793005",
    "wrapping_mul(0x5851",
    "0xBF58_476D_1CE4_E5B9",
];

/// Lines of `text` (comments skipped) holding a [`PRNG_MARKS`] mark.
fn prng_lines(text: &str) -> Vec<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| PRNG_MARKS.iter().any(|m| l.contains(m)))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn one_prng_in_the_workspace() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p.is_dir() && name != "target" && !name.starts_with('.') {
                walk(&p, out);
            } else if name.ends_with(".rs") {
                out.push(p);
            }
        }
    }
    let root = repo_root();
    let mut files = Vec::new();
    for top in ["core", "oracles", "harness", "fuzz"] {
        walk(&root.join(top), &mut files);
    }
    assert!(files.len() > 50, "found only {} sources", files.len());
    let one = root.join("harness/generators/src/generators/rng.rs");
    let this = root.join("harness/tests/architecture.rs");
    let bad: Vec<String> = files
        .iter()
        .filter(|p| **p != one && **p != this)
        .flat_map(|p| {
            let rel = p.strip_prefix(&root).unwrap().display().to_string();
            let text = fs::read_to_string(p).unwrap();
            prng_lines(&text)
                .into_iter()
                .map(move |n| format!("{rel}:{n}"))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "a PRNG other than generators::SplitMix64 (use it, or include rng.rs with #[path]): {bad:?}"
    );
    assert!(!prng_lines(&fs::read_to_string(&one).unwrap()).is_empty());
}
