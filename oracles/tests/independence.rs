//! The oracle must not depend on tpb-core in any way: its whole value is independence.

use std::path::Path;
use std::process::Command;

const MANIFEST_DIR: &str = env!("CARGO_MANIFEST_DIR");

/// Lines inside dependency tables of the manifest (`[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, `[target.*.dependencies]`, `[dependencies.name]`, ...) that would name
/// the core crate. Other sections (e.g. `description`) may mention it in prose.
fn offending_manifest_lines(text: &str) -> Vec<String> {
    let mut in_deps = false;
    let mut bad = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            in_deps = line.contains("dependencies");
        }
        let names_core = line.contains("tpb-core")
            || line.contains("tpb_core")
            || line.contains("../core")
            || line.contains("main/core");
        if in_deps && names_core {
            bad.push(line.to_string());
        }
    }
    bad
}

#[test]
fn manifest_has_no_core_dependency() {
    let path = Path::new(MANIFEST_DIR).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).expect("read oracles/Cargo.toml");
    let bad = offending_manifest_lines(&text);
    assert!(
        bad.is_empty(),
        "oracles/Cargo.toml mentions tpb-core: {bad:?}"
    );
}

#[test]
fn manifest_check_would_catch_a_core_dependency() {
    let planted = "[dependencies]\ntpb-core = { path = \"../core\" }\n";
    assert!(!offending_manifest_lines(planted).is_empty());
    let planted_dev = "[dev-dependencies]\ncore = { package = \"tpb-core\", path = \"../core\" }\n";
    assert!(!offending_manifest_lines(planted_dev).is_empty());
    let planted_table = "[target.'cfg(unix)'.dev-dependencies.tpb-core]\npath = \"../core\"\n";
    assert!(!offending_manifest_lines(planted_table).is_empty());
    let prose = "[package]\ndescription = \"Shares no code with tpb-core.\"\n[dependencies]\n";
    assert!(offending_manifest_lines(prose).is_empty());
}

/// The `"dependencies":[...]` array of package `name` in `cargo metadata` JSON, by bracket match.
fn dependencies_of(json: &str, name: &str) -> Option<String> {
    let key = format!("\"name\":\"{name}\"");
    let mut search_from = 0;
    while let Some(rel) = json.get(search_from..)?.find(&key) {
        let at = search_from + rel;
        let rest = json.get(at..)?;
        // The package object has "dependencies" shortly after its name; a dependency entry
        // with the same name would not be followed by "version" + "id" in this order, but to be
        // safe take the first "dependencies":[ after the key and bracket-match it.
        if let Some(dep_rel) = rest.find("\"dependencies\":[") {
            let start = at + dep_rel + "\"dependencies\":".len();
            let mut depth = 0i32;
            for (i, ch) in json.get(start..)?.char_indices() {
                match ch {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            return json.get(start..start + i + 1).map(str::to_string);
                        }
                    }
                    _ => {}
                }
            }
        }
        search_from = at + key.len();
    }
    None
}

#[test]
fn cargo_metadata_lists_no_core_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(MANIFEST_DIR)
        .output();
    let Ok(out) = out else {
        eprintln!("cargo metadata could not run; manifest test still applies");
        return;
    };
    if !out.status.success() {
        // e.g. a sibling crate's manifest is mid-edit; the manifest text test still applies.
        eprintln!(
            "cargo metadata failed (skipping this half): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let json = String::from_utf8_lossy(&out.stdout);
    let deps = dependencies_of(&json, "tpb-oracle").expect("tpb-oracle in cargo metadata");
    assert!(
        !deps.contains("\"name\":\"tpb-core\""),
        "cargo metadata lists tpb-core as a dependency of tpb-oracle: {deps}"
    );
}

#[test]
fn metadata_parser_finds_a_planted_dependency() {
    let json = r#"{"packages":[{"name":"tpb-oracle","version":"0.1.0","dependencies":[{"name":"tpb-core","features":[]}],"x":1}]}"#;
    let deps = dependencies_of(json, "tpb-oracle").unwrap();
    assert!(deps.contains("\"name\":\"tpb-core\""));
}

#[test]
fn sources_do_not_mention_the_core_crate() {
    let src = Path::new(MANIFEST_DIR).join("src");
    for entry in std::fs::read_dir(src).expect("read src") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !text.contains("tpb_core::")
                && !text.contains("use tpb_core")
                && !text.contains("extern crate tpb_core"),
            "{} mentions the core crate",
            path.display()
        );
    }
}
