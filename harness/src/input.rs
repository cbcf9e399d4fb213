//! Reading bundles from files or stdin: raw binary (length a multiple of 64) or
//! hex text (one bundle per line).
//!
//! Hex format: each non-blank line holds exactly 128 hex digits (either case);
//! spaces and tabs are ignored; `#` starts a comment that runs to the end of
//! the line; blank and comment-only lines are skipped.
//!
//! Every error names the source (path or `<stdin>`) and the line/column or byte
//! offset, and says what is wrong ([`InputError`]'s `Display`).

use std::fmt;
use std::io::Read;
use std::path::Path;

/// Bundle length in bytes.
pub const BUNDLE: usize = 64;

/// Why an input could not be read. `Display` gives a one-line message naming
/// the source and the position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputError {
    /// The file is missing or unreadable.
    Io {
        /// Path or `<stdin>`.
        source: String,
        /// The OS error text.
        error: String,
    },
    /// The path is a directory.
    IsDirectory {
        /// Path.
        source: String,
    },
    /// No bundle in the input.
    Empty {
        /// Path or `<stdin>`.
        source: String,
    },
    /// Binary input whose length is not a multiple of 64.
    Length {
        /// Path or `<stdin>`.
        source: String,
        /// Total length in bytes.
        len: usize,
        /// Byte offset where the trailing partial bundle starts.
        partial_offset: usize,
    },
    /// A character that is not a hex digit, space, tab or comment.
    BadHexDigit {
        /// Path or `<stdin>`.
        source: String,
        /// 1-based line.
        line: usize,
        /// 1-based column (byte position in the line).
        column: usize,
        /// The offending character (lossy for non-ASCII bytes).
        found: char,
    },
    /// A hex line with the wrong number of digits.
    HexLineLength {
        /// Path or `<stdin>`.
        source: String,
        /// 1-based line.
        line: usize,
        /// Number of hex digits on the line.
        digits: usize,
    },
}

impl InputError {
    /// The source (path or `<stdin>`) the error is about.
    pub fn source_name(&self) -> &str {
        match self {
            InputError::Io { source, .. }
            | InputError::IsDirectory { source }
            | InputError::Empty { source }
            | InputError::Length { source, .. }
            | InputError::BadHexDigit { source, .. }
            | InputError::HexLineLength { source, .. } => source,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Io { source, error } => write!(f, "{source}: cannot read: {error}"),
            InputError::IsDirectory { source } => {
                write!(f, "{source}: is a directory, expected a file of bundles")
            }
            InputError::Empty { source } => write!(f, "{source}: empty input: no bundle found"),
            InputError::Length {
                source,
                len,
                partial_offset,
            } => {
                let odd = if len % 2 == 1 { "odd length; " } else { "" };
                write!(
                    f,
                    "{source}: length {len} bytes is not a multiple of 64 ({odd}trailing partial \
                     bundle of {} bytes at byte offset {partial_offset} (0x{partial_offset:X}))",
                    len - partial_offset
                )
            }
            InputError::BadHexDigit {
                source,
                line,
                column,
                found,
            } => write!(
                f,
                "{source}:{line}:{column}: bad hex digit {found:?} (expected 0-9, a-f, A-F, \
                 space or '#')"
            ),
            InputError::HexLineLength {
                source,
                line,
                digits,
            } => {
                let odd = if digits % 2 == 1 {
                    " (odd number of digits)"
                } else {
                    ""
                };
                write!(
                    f,
                    "{source}:{line}: hex line has {digits} digits{odd}, expected exactly 128 \
                     (one 64-byte bundle per line)"
                )
            }
        }
    }
}

impl std::error::Error for InputError {}

/// One bundle read from an input, with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    /// Path or `<stdin>`.
    pub source: String,
    /// 0-based index over all inputs of one invocation.
    pub index: usize,
    /// 1-based line for hex input, `None` for binary.
    pub line: Option<usize>,
    /// Byte offset in the source for binary input (0 for hex).
    pub offset: usize,
    /// The bundle.
    pub bytes: [u8; 64],
}

/// Display name of a path argument (`-` is `<stdin>`).
pub fn source_name(path: &str) -> String {
    if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    }
}

/// Reads a whole file (or stdin for `-`), mapping failures to [`InputError`].
pub fn read_source(path: &str) -> Result<Vec<u8>, InputError> {
    let source = source_name(path);
    let mut buf = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| InputError::Io {
                source,
                error: e.to_string(),
            })?;
        return Ok(buf);
    }
    let p = Path::new(path);
    if p.is_dir() {
        return Err(InputError::IsDirectory { source });
    }
    std::fs::read(p).map_err(|e| InputError::Io {
        source,
        error: e.to_string(),
    })
}

/// Splits raw binary into bundles. Errors: empty, length not a multiple of 64.
pub fn parse_binary(source: &str, data: &[u8]) -> Result<Vec<[u8; 64]>, InputError> {
    if data.is_empty() {
        return Err(InputError::Empty {
            source: source.to_string(),
        });
    }
    if !data.len().is_multiple_of(BUNDLE) {
        return Err(InputError::Length {
            source: source.to_string(),
            len: data.len(),
            partial_offset: data.len() - data.len() % BUNDLE,
        });
    }
    Ok(data
        .chunks_exact(BUNDLE)
        .map(|c| {
            let mut b = [0u8; 64];
            b.copy_from_slice(c);
            b
        })
        .collect())
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// A character that is not a hex digit, space, tab or CR.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadDigit {
    /// 0-based byte index in the scanned text.
    pub index: usize,
    /// The character found there (multi-byte characters shown whole).
    pub found: char,
}

/// The one hex scanner every hex reader of the harness uses: returns the
/// nibbles of `text`, skipping spaces, tabs and CRs; with `comments`, stops at
/// `#`. Pair them with [`pack_nibbles`].
pub fn hex_nibbles(text: &[u8], comments: bool) -> Result<Vec<u8>, BadDigit> {
    let mut digits = Vec::with_capacity(text.len());
    for (index, &c) in text.iter().enumerate() {
        match c {
            b'#' if comments => break,
            b' ' | b'\t' | b'\r' => {}
            _ => match hex_val(c) {
                Some(v) => digits.push(v),
                None => {
                    // Show the whole (possibly multi-byte) character.
                    let found = String::from_utf8_lossy(&text[index..])
                        .chars()
                        .next()
                        .unwrap_or('\u{FFFD}');
                    return Err(BadDigit { index, found });
                }
            },
        }
    }
    Ok(digits)
}

/// Bytes from nibble pairs; a trailing odd nibble is ignored (callers check
/// the count first).
pub fn pack_nibbles(digits: &[u8]) -> Vec<u8> {
    digits.chunks_exact(2).map(|p| (p[0] << 4) | p[1]).collect()
}

/// Parses hex text: returns `(1-based line, bundle)` pairs. Errors: bad digit
/// (line, column), wrong digit count (line), no bundle at all.
pub fn parse_hex(source: &str, text: &[u8]) -> Result<Vec<(usize, [u8; 64])>, InputError> {
    let mut out = Vec::new();
    for (li, line) in text.split(|&c| c == b'\n').enumerate() {
        let lineno = li + 1;
        let digits = hex_nibbles(line, true).map_err(|e| InputError::BadHexDigit {
            source: source.to_string(),
            line: lineno,
            column: e.index + 1,
            found: e.found,
        })?;
        if digits.is_empty() {
            continue;
        }
        if digits.len() != 2 * BUNDLE {
            return Err(InputError::HexLineLength {
                source: source.to_string(),
                line: lineno,
                digits: digits.len(),
            });
        }
        let mut b = [0u8; 64];
        b.copy_from_slice(&pack_nibbles(&digits));
        out.push((lineno, b));
    }
    if out.is_empty() {
        return Err(InputError::Empty {
            source: source.to_string(),
        });
    }
    Ok(out)
}

/// Loads every input in order (`-` = stdin; an empty list means stdin).
/// Indices run across all inputs. Stops at the first error.
pub fn load_bundles(paths: &[String], hex: bool) -> Result<Vec<Loaded>, InputError> {
    let stdin = ["-".to_string()];
    let paths = if paths.is_empty() { &stdin[..] } else { paths };
    let mut out = Vec::new();
    for p in paths {
        let source = source_name(p);
        let data = read_source(p)?;
        if hex {
            for (line, bytes) in parse_hex(&source, &data)? {
                out.push(Loaded {
                    source: source.clone(),
                    index: out.len(),
                    line: Some(line),
                    offset: 0,
                    bytes,
                });
            }
        } else {
            for (i, bytes) in parse_binary(&source, &data)?.into_iter().enumerate() {
                out.push(Loaded {
                    source: source.clone(),
                    index: out.len(),
                    line: None,
                    offset: i * BUNDLE,
                    bytes,
                });
            }
        }
    }
    Ok(out)
}

/// Lowercase hex of a bundle (128 digits), the format [`parse_hex`] reads.
pub fn to_hex_line(b: &[u8; 64]) -> String {
    crate::subject::hex(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ok_and_comments() {
        let line = "00".repeat(64);
        let text = format!("# c\n\n{line} # tail\n  {}\n", "aB".repeat(64));
        let v = parse_hex("x", text.as_bytes()).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, 3);
        assert_eq!(v[1].1[0], 0xAB);
    }

    #[test]
    fn hex_errors() {
        let e = parse_hex("f", b"0g").unwrap_err();
        assert_eq!(
            e,
            InputError::BadHexDigit {
                source: "f".into(),
                line: 1,
                column: 2,
                found: 'g'
            }
        );
        let e = parse_hex("f", b"\n012").unwrap_err();
        assert!(e.to_string().contains("f:2: hex line has 3 digits (odd"));
        assert!(matches!(
            parse_hex("f", b"# only\n"),
            Err(InputError::Empty { .. })
        ));
    }

    #[test]
    fn binary_errors() {
        assert!(matches!(
            parse_binary("f", &[]),
            Err(InputError::Empty { .. })
        ));
        let e = parse_binary("f", &[0u8; 65]).unwrap_err();
        assert!(e.to_string().contains("byte offset 64"), "{e}");
        assert_eq!(parse_binary("f", &[0u8; 128]).unwrap().len(), 2);
    }
}
