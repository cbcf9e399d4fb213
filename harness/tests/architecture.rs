//! Structure rules, checked on the sources:
//!
//! (The target registry vs the cargo-fuzz package: `tests/cflite.rs`.)
//! - no library module of the harness imports `cli`;
//! - no crate of the workspace has an import cycle between its modules
//!   (file granularity; `#[cfg(test)]` tails are ignored; for `core` and
//!   the `cli` front end, a child module's use of its ancestors is not
//!   counted).

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

/// Every path `crate::…` / `super::…` / `self::…` in `code`, absolute,
/// with `use` groups (`a::{b, c::d}`) expanded.
fn paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let boundary =
            i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_' || s[i - 1] == b':');
        let (word, j) = ident_at(s, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
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
    let s = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let boundary =
            i == 0 || !(s[i - 1].is_ascii_alphanumeric() || s[i - 1] == b'_' || s[i - 1] == b':');
        let (word, j) = ident_at(s, i);
        if word.is_empty() {
            i += 1;
            continue;
        }
        if boundary && code[j..].starts_with("::") {
            let mut child = module.to_vec();
            child.push(word);
            if known.contains(&child) {
                out.push(child);
            }
        }
        i = j;
    }
    out
}

/// Module-level import graph of the crate whose sources are `src`.
fn graph(src: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mods = modules(src);
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
        ("harness/src", true),
        ("oracles/src", true),
        ("core/src", false),
    ] {
        let mut g = graph(&repo_root().join(krate));
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
    let g = graph(&repo_root().join("harness/src"));
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
