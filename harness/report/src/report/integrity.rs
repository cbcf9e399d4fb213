//! The integrity record of a report folder ([`seal`]): the size and SHA-256 of every other file
//! and the SHA-256 of `run.json`'s own facts ([`super::run_json::render`]); `report merge`
//! recomputes it ([`verify`]). A seal against edits, not a signature: `reports/README.md`.

use crate::subjects::hex;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const ALGORITHM: &str = "sha-256";

/// Most files one folder may hold (a report has five plus one per divergence).
pub const MAX_FILES: usize = 100_000;

wire! {
    pub struct Integrity {
        pub algorithm: String,
        /// SHA-256 (hex) of `run.json` without its `integrity` key.
        pub facts: String,
        /// Every other file, by folder-relative path (`/`-separated).
        pub files: BTreeMap<String, FileDigest>,
    }

    pub struct FileDigest {
        pub bytes: u64,
        pub sha256: String,
    }
}

pub fn sha256(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The record of `facts` (`run.json` without `integrity`) and the folder's other `files`.
pub fn seal(facts: &str, files: &[(String, Vec<u8>)]) -> Integrity {
    let digest = |(path, b): &(String, Vec<u8>)| {
        let (bytes, sha256) = (b.len() as u64, sha256(b));
        (path.clone(), FileDigest { bytes, sha256 })
    };
    Integrity {
        algorithm: ALGORITHM.into(),
        facts: sha256(facts.as_bytes()),
        files: files.iter().map(digest).collect(),
    }
}

fn fails(what: impl std::fmt::Display) -> String {
    format!("integrity: {what}")
}

fn unreadable(file: impl std::fmt::Display, e: impl std::fmt::Display) -> String {
    fails(format_args!("{file}: cannot read: {e}"))
}

/// The folder's files but `own` (relative, `/`-separated, sorted), at most two levels deep.
fn walk(dir: &Path, own: &str) -> Result<Vec<(String, PathBuf)>, String> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), dir.to_path_buf(), 0u8)];
    while let Some((prefix, d, depth)) = stack.pop() {
        let rd = std::fs::read_dir(&d).map_err(|e| unreadable(d.display(), e))?;
        for e in rd {
            let e = e.map_err(|e| unreadable(d.display(), e))?;
            let name = e.file_name().to_string_lossy().to_string();
            let rel = format!("{prefix}{name}");
            let ft = e.file_type().map_err(|x| unreadable(&rel, x))?;
            if ft.is_dir() && depth == 0 {
                stack.push((format!("{rel}/"), e.path(), depth + 1));
            } else if ft.is_file() {
                if rel != own {
                    out.push((rel, e.path()));
                }
            } else {
                return Err(fails(format_args!("{rel} is not a regular file")));
            }
            if out.len() > MAX_FILES {
                return Err(fails(format_args!("more than {MAX_FILES} files")));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn digest_file(rel: &str, path: &Path) -> Result<(u64, String), String> {
    let read = |e| unreadable(rel, e);
    let mut f = std::fs::File::open(path).map_err(read)?;
    let mut h = Sha256::new();
    let n = std::io::copy(&mut f, &mut h).map_err(read)?;
    Ok((n, hex(&h.finalize())))
}

/// Checks `dir` against `rec`, read from its file `own`, whose facts without it are `facts`.
pub fn verify(dir: &Path, own: &str, rec: Option<&Integrity>, facts: &str) -> Result<(), String> {
    let rec = rec.ok_or_else(|| fails("run.json has no integrity record"))?;
    let algorithm = &rec.algorithm;
    let m = format!("unknown algorithm `{algorithm}`");
    refuse!(algorithm != ALGORITHM, fails(m));
    let m = "digest mismatch: run.json was edited after the gate wrote it";
    refuse!(sha256(facts.as_bytes()) != rec.facts, fails(m));
    let found = walk(dir, own)?;
    for (rel, path) in &found {
        let unlisted = || fails(format_args!("{rel} is not listed (added later?)"));
        let want = rec.files.get(rel).ok_or_else(unlisted)?;
        let (bytes, sha) = digest_file(rel, path)?;
        let m = format!("digest mismatch: {rel} was changed after the gate wrote it");
        refuse!(bytes != want.bytes || sha != want.sha256, fails(m));
    }
    let absent = |rel: &&String| !found.iter().any(|(r, _)| r == *rel);
    if let Some(rel) = rec.files.keys().find(absent) {
        return Err(fails(format_args!("{rel} is listed but absent")));
    }
    Ok(())
}
