//! Why a set of shard folders cannot be merged ([`MergeError`], exit 2), and the capped
//! reading of a shard's files.

use std::fmt;
use std::io::Read;
use std::path::Path;

/// Cap on `run.json`, `summary.md`, `junit.xml` and one jsonl line.
pub const MAX_BYTES: u64 = 16 << 20;

/// One line naming the folder, file or line and what is wrong.
#[derive(Debug)]
pub struct MergeError(pub String);

impl MergeError {
    pub fn at(at: impl fmt::Display, message: impl fmt::Display) -> Self {
        MergeError(format!("{at}: {message}"))
    }

    pub fn read(path: &Path, error: impl fmt::Display) -> Self {
        Self::at(path.display(), format_args!("cannot read: {error}"))
    }

    /// At 1-based `line` of `path`.
    pub fn line(path: &Path, line: usize, message: impl fmt::Display) -> Self {
        Self::at(format_args!("{}:{line}", path.display()), message)
    }

    pub fn incomplete(dir: &Path, shard: &str) -> Self {
        let m = format!("shard {shard} is INCOMPLETE (cut short); re-run it");
        Self::at(dir.display(), m)
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MergeError {}

/// `path` opened, refused unless it is a regular file (no symlink).
pub fn open_regular(path: &Path) -> Result<std::fs::File, MergeError> {
    let read = |e| MergeError::read(path, e);
    let md = std::fs::symlink_metadata(path).map_err(read)?;
    refuse!(!md.is_file(), path.display(), "not a regular file");
    std::fs::File::open(path).map_err(read)
}

/// The text of the regular file `path`, refused over [`MAX_BYTES`].
pub fn read_text(path: &Path) -> Result<String, MergeError> {
    let mut text = String::new();
    open_regular(path)?
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| MergeError::read(path, e))?;
    let over = text.len() as u64 > MAX_BYTES;
    refuse!(over, path.display(), "larger than {MAX_BYTES} bytes");
    Ok(text)
}
