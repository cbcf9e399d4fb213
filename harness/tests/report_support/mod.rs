//! Support for the report tests: JSON files and resealing a hand-edited
//! report folder (scratch folders and copying: `common`).
#![allow(dead_code)]

use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Output;

/// A JSON file.
pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Writes a JSON file (pretty).
pub fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn sha256(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Recomputes the integrity record of a hand-edited folder the way
/// reports/README.md documents it (so edits test the other checks): every
/// file but run.json with its size and SHA-256, and the SHA-256 of run.json
/// pretty-printed without `integrity`. A folder without run.json or without
/// a record is left alone.
pub fn reseal(dir: &Path) {
    if !dir.join("run.json").is_file() {
        return;
    }
    let mut m = read_json(&dir.join("run.json"));
    if m.get("integrity").is_none() {
        return;
    }
    m.as_object_mut().unwrap().remove("integrity");
    let facts = format!("{}\n", serde_json::to_string_pretty(&m).unwrap());
    let mut files = serde_json::Map::new();
    let mut walk = vec![(String::new(), dir.to_path_buf())];
    while let Some((prefix, d)) = walk.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let rel = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk.push((format!("{rel}/"), e.path()));
            } else if rel != "run.json" {
                let b = std::fs::read(e.path()).unwrap();
                files.insert(
                    rel,
                    serde_json::json!({"bytes": b.len(), "sha256": sha256(&b)}),
                );
            }
        }
    }
    m["integrity"] = serde_json::json!({
        "algorithm": "sha-256", "facts": sha256(facts.as_bytes()), "files": files
    });
    write_json(&dir.join("run.json"), &m);
}

/// Takes `n` generated cases off run.json's generations (after a target's
/// cases were removed), oldest generation first.
pub fn take_ran(m: &mut Value, n: u64) {
    let mut left = n;
    for g in m["generations"].as_array_mut().unwrap() {
        let have = g["ran"].as_u64().unwrap();
        let take = have.min(left);
        g["ran"] = Value::from(have - take);
        left -= take;
    }
}

/// Asserts that `o` (a `report merge` into `out`) was refused: exit 2,
/// stderr naming `what`, and no `out` left behind. `context` is added to
/// the first message.
pub fn assert_refused(o: &Output, out: &Path, what: &str, context: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "expected a refusal naming `{what}`{context}; stderr: {err}"
    );
    assert!(err.contains(what), "stderr should say `{what}`: {err}");
    assert!(
        std::fs::symlink_metadata(out).is_err(),
        "refusal wrote {}",
        out.display()
    );
}
