//! Why a NEFF was refused: one flat enum, each variant carrying the member (or header field)
//! it is about and the bad value. `Display` is the one-line message the CLI prints.

use std::fmt;

/// Why a NEFF (or an unpacked NEFF folder) could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NeffError {
    /// The file or a member of a folder could not be opened or read.
    Io {
        /// The path.
        path: String,
        /// The OS error text.
        error: String,
    },
    /// The input is not a regular file (a symlink, FIFO, device, socket; or a folder where a
    /// file is needed).
    NotRegular {
        /// The path.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Shorter than the 1024-byte header (FACTS §10).
    TooShort {
        /// The file size.
        size: u64,
    },
    /// header_size is not 1024 (FACTS §10: the one header check besides data_size).
    HeaderSize {
        /// The value read.
        header_size: u64,
    },
    /// 1024 + data_size is more than the file holds (FACTS §10).
    DataSize {
        /// The value read.
        data_size: u64,
        /// Bytes after the header.
        available: u64,
    },
    /// data_size is 0: no payload.
    EmptyPayload,
    /// The payload is neither gzip (1f 8b) nor tar (`ustar` at +257) (FACTS §10).
    UnknownPayload {
        /// Its first bytes.
        first: [u8; 4],
    },
    /// The payload's digest is not the header's (FACTS §10: pkg_version 1 SHA-256, 2 MD5).
    HashMismatch {
        /// `sha-256` or `md5`.
        algorithm: &'static str,
        /// The header's hash (hex).
        expected: String,
        /// The payload's (hex).
        found: String,
    },
    /// The gzip stream is corrupt or cut short.
    Gzip {
        /// The member being read when it failed (between members: `(the header after M)`).
        member: String,
        /// What the decoder said.
        reason: String,
    },
    /// The tar ends inside a header or a member's data.
    Truncated {
        /// The member cut short (or `(the header after M)`, `(the first member's header)`).
        member: String,
        /// Payload offset (decompressed) where the data ran out.
        offset: u64,
    },
    /// A tar header that is not one (bad checksum, bad number field, bad PAX record).
    BadTarHeader {
        /// The member it describes, where known (`-` else).
        member: String,
        /// Decompressed payload offset of the header.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A member name that could leave the archive's folder or names nothing.
    UnsafePath {
        /// The name as stored.
        member: String,
        /// Why (`..` component, absolute, empty, not UTF-8, NUL).
        reason: &'static str,
    },
    /// A symbolic or hard link member.
    Link {
        /// The member.
        member: String,
        /// What it points at.
        target: String,
        /// `symlink` or `hard link`.
        kind: &'static str,
    },
    /// A device, FIFO or other special member.
    Special {
        /// The member.
        member: String,
        /// `character device`, `block device`, `FIFO`.
        kind: &'static str,
    },
    /// A member type this reader does not read (GNU sparse, multi-volume, unknown flags).
    UnsupportedType {
        /// The member.
        member: String,
        /// The tar typeflag (or `S` for PAX sparse).
        typeflag: char,
    },
    /// Two members with the same name (after stripping `./`).
    Duplicate {
        /// The name.
        member: String,
    },
    /// Two members whose names differ only in case, and a name looked up without regard to
    /// case matches both.
    Ambiguous {
        /// The name looked up.
        named: String,
        /// The JSON member that named it.
        by: String,
        /// The members it matches.
        candidates: Vec<String>,
    },
    /// A size past a cap (decompressed payload, a PAX or long-name record, a JSON member, the
    /// member count).
    TooBig {
        /// The member being read (`-` if none).
        member: String,
        /// Which cap.
        what: &'static str,
        /// The cap.
        cap: u64,
    },
    /// A JSON member that is not the JSON expected (FACTS §10 def.json, engine JSON).
    Json {
        /// The member.
        member: String,
        /// What is wrong, with the key path.
        reason: String,
    },
    /// A JSON member names a member the archive does not have as a regular file.
    Missing {
        /// The JSON member that names it.
        by: String,
        /// Its key.
        key: String,
        /// The name it gives.
        named: String,
        /// `no such member` or `a folder, not a regular member`.
        reason: &'static str,
    },
}

impl fmt::Display for NeffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use NeffError::*;
        match self {
            Io { path, error } => write!(f, "{path}: cannot read: {error}"),
            NotRegular { path, kind } => {
                write!(f, "{path}: is a {kind}, not a regular file (refused)")
            }
            TooShort { size } => write!(
                f,
                "header: file of {size} bytes is shorter than the 1024-byte NEFF header"
            ),
            HeaderSize { header_size } => write!(
                f,
                "header: header_size is {header_size}, not 1024 (not a NEFF, or a damaged one)"
            ),
            DataSize {
                data_size,
                available,
            } => write!(
                f,
                "header: data_size {data_size} is more than the {available} bytes after the header"
            ),
            EmptyPayload => write!(f, "header: data_size is 0: no payload"),
            UnknownPayload { first } => write!(
                f,
                "payload: neither gzip (1f 8b) nor tar (ustar at +257); it starts {:02x} {:02x} {:02x} {:02x}",
                first[0], first[1], first[2], first[3]
            ),
            HashMismatch {
                algorithm,
                expected,
                found,
            } => write!(
                f,
                "payload: {algorithm} hash mismatch: the header says {expected}, the payload's is {found}"
            ),
            Gzip { member, reason } => write!(f, "{member}: gzip payload: {reason}"),
            Truncated { member, offset } => write!(
                f,
                "{member}: the tar payload ends inside it (at decompressed offset {offset})"
            ),
            BadTarHeader {
                member,
                offset,
                reason,
            } => write!(
                f,
                "{member}: bad tar header at decompressed offset {offset}: {reason}"
            ),
            UnsafePath { member, reason } => {
                write!(f, "{member}: unsafe member name: {reason} (refused)")
            }
            Link {
                member,
                target,
                kind,
            } => write!(f, "{member}: a {kind} to {target:?} (links are refused)"),
            Special { member, kind } => {
                write!(f, "{member}: a {kind} member (only regular files are read)")
            }
            UnsupportedType { member, typeflag } => write!(
                f,
                "{member}: tar member type {typeflag:?} is not read by this reader (refused)"
            ),
            Duplicate { member } => write!(f, "{member}: two members have this name"),
            Ambiguous {
                named,
                by,
                candidates,
            } => write!(
                f,
                "{by}: names {named:?}, which matches {} members without regard to case: {}",
                candidates.len(),
                candidates.join(", ")
            ),
            TooBig { member, what, cap } => write!(f, "{member}: {what} exceeds the cap of {cap}"),
            Json { member, reason } => write!(f, "{member}: {reason}"),
            Missing {
                by,
                key,
                named,
                reason,
            } => write!(f, "{by}: key {key} names {named:?}: {reason}"),
        }
    }
}

impl std::error::Error for NeffError {}

impl NeffError {
    /// Wraps this error in an `io::Error` (so it can cross a `Read`), recovered by
    /// [`NeffError::from_io`].
    pub(crate) fn into_io(self) -> std::io::Error {
        std::io::Error::other(self)
    }

    /// The `NeffError` an `io::Error` carries, if it carries one.
    pub(crate) fn from_io(e: &std::io::Error) -> Option<NeffError> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<NeffError>())
            .cloned()
    }
}
