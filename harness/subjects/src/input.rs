//! Reading bundles from files or stdin: raw binary (length a multiple of 64) or
//! hex text (one bundle per line).
//!
//! Every reader streams with bounded memory: [`stream_bundles`] yields one
//! bundle at a time, [`Lines`] holds at most [`MAX_LINE`] bytes, whole-file
//! inputs ([`read_capped`], [`read_corpus_file`]) stop at [`MAX_INPUT`].
//! Corpus files are opened non-blocking and must be regular files.
//!
//! Hex format: each non-blank line holds exactly 128 hex digits (either case);
//! spaces and tabs are ignored; `#` starts a comment that runs to the end of
//! the line; blank and comment-only lines are skipped.
//!
//! Every error names the source (path or `<stdin>`), the line/column or byte offset, and what
//! is wrong.

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

pub const BUNDLE: usize = 64;

/// Why an input could not be read: its `source` (the path or `<stdin>`) and the [`Problem`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub source: String,
    pub problem: Problem,
}

/// What is wrong with an input (lines and columns 1-based, a column a byte position).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    Io(String),
    IsDirectory,
    Empty,
    /// Binary input whose length is not a multiple of 64; the trailing partial bundle starts at
    /// `partial_offset`.
    Length {
        len: usize,
        partial_offset: usize,
    },
    /// Not a hex digit, space, tab or comment (lossy for non-ASCII bytes).
    BadHexDigit {
        line: usize,
        column: usize,
        found: char,
    },
    /// Line `.0` is longer than [`MAX_LINE`].
    LineTooLong(usize),
    /// A whole-file input bigger than [`MAX_INPUT`].
    TooBig,
    /// Binary input that starts like this module's hex text (hex digits, spaces, `#` comments,
    /// line breaks): most likely `--hex` was forgotten.
    LooksLikeHex,
    /// Binary input that starts like a NEFF ([`looks_like_neff`]): read as bundles, its header
    /// and compressed payload would be verdicts on garbage.
    LooksLikeNeff,
    HexLineLength {
        line: usize,
        digits: usize,
    },
}

impl InputError {
    pub fn new(source: &str, problem: Problem) -> InputError {
        InputError {
            source: source.to_string(),
            problem,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = &self.source;
        match self.problem {
            Problem::Io(ref error) => write!(f, "{source}: cannot read: {error}"),
            Problem::IsDirectory => {
                write!(f, "{source}: is a directory, expected a file of bundles")
            }
            Problem::Empty => write!(f, "{source}: empty input: no bundle found"),
            Problem::LooksLikeHex => write!(
                f,
                "{source}: looks like hex text: did you mean --hex? (read as raw binary, it \
                 would be bundles of ASCII bytes)"
            ),
            Problem::LooksLikeNeff => write!(
                f,
                "{source}: looks like a NEFF (header_size 1024, then a gzip or tar payload), not \
                 bundles: give its path to `check` or `neff info` (a NEFF is read from a regular \
                 file, not from a pipe or stdin)"
            ),
            Problem::Length {
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
            Problem::BadHexDigit {
                line,
                column,
                found,
            } => write!(
                f,
                "{source}:{line}:{column}: bad hex digit {found:?} (expected 0-9, a-f, A-F, \
                 space or '#'){}",
                bom_hint(found)
            ),
            Problem::LineTooLong(line) => write!(
                f,
                "{source}:{line}: line longer than {MAX_LINE} bytes (the cap of every line reader)"
            ),
            Problem::TooBig => write!(f, "{source}: input larger than {MAX_INPUT} bytes (the cap)"),
            Problem::HexLineLength { line, digits } => {
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

/// The hint for a U+FEFF: a byte-order mark, which no reader here takes (RFC 8259 §8.1).
pub fn bom_hint(found: char) -> &'static str {
    if found == '\u{FEFF}' {
        ": a UTF-8 byte-order mark (BOM); save the file without it"
    } else {
        ""
    }
}

/// [`Problem::Io`] of `source`.
pub fn io_error(source: &str, e: &std::io::Error) -> InputError {
    InputError::new(source, Problem::Io(e.to_string()))
}

/// One bundle read from an input: its 0-based index, its 1-based line (hex) or byte offset
/// (binary; 0 for hex).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub source: String,
    pub index: usize,
    pub line: Option<usize>,
    pub offset: usize,
    pub bytes: [u8; 64],
}

/// `-` is `<stdin>`.
pub fn source_name(path: &str) -> String {
    if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    }
}

/// Longest line (bytes, comments included) a line reader accepts, so memory stays bounded
/// whatever the input (e.g. `/dev/zero`).
pub const MAX_LINE: usize = 1 << 20;

/// Largest whole-file input (`replay FILE`, corpus files).
pub const MAX_INPUT: u64 = 1 << 20;

/// Opens a path argument for streaming (`-` = stdin). FIFOs and devices named on the command
/// line are read like any stream (the caller asked for them).
pub fn open_source(path: &str) -> Result<Box<dyn BufRead>, InputError> {
    let source = source_name(path);
    if path == "-" {
        return Ok(Box::new(std::io::stdin().lock()));
    }
    let io = |e| io_error(&source, &e);
    let f = File::open(path).map_err(io)?;
    if f.metadata().map_err(io)?.is_dir() {
        return Err(InputError::new(&source, Problem::IsDirectory));
    }
    Ok(Box::new(BufReader::with_capacity(64 * 1024, f)))
}

/// Reads a whole input of at most [`MAX_INPUT`] bytes (`-` = stdin).
pub fn read_capped(path: &str) -> Result<Vec<u8>, InputError> {
    let source = source_name(path);
    match read_max(open_source(path)?) {
        Ok(Some(buf)) => Ok(buf),
        Ok(None) => Err(InputError::new(&source, Problem::TooBig)),
        Err(e) => Err(io_error(&source, &e)),
    }
}

/// All of `r` if it is at most [`MAX_INPUT`] bytes (`None`: longer; one byte past the cap is
/// read).
fn read_max(r: impl Read) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    r.take(MAX_INPUT + 1).read_to_end(&mut buf)?;
    Ok((buf.len() as u64 <= MAX_INPUT).then_some(buf))
}

/// The lines of a stream, at most [`MAX_LINE`] bytes buffered: `(1-based line, bytes)`.
pub struct Lines<R> {
    source: String,
    inner: R,
    line: usize,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> Lines<R> {
    pub fn new(source: &str, inner: R) -> Self {
        Lines {
            source: source.to_string(),
            inner,
            line: 0,
            buf: Vec::new(),
            done: false,
        }
    }

    /// The slice is valid until the next call.
    pub fn next_line(&mut self) -> Option<Result<(usize, &[u8]), InputError>> {
        if self.done {
            return None;
        }
        self.buf.clear();
        self.line += 1;
        // One byte past the cap: a line that long without its newline is too long.
        let cap = MAX_LINE as u64 + 1;
        let read = (&mut self.inner).take(cap).read_until(b'\n', &mut self.buf);
        let error = match read {
            Err(e) => io_error(&self.source, &e),
            Ok(_) if self.buf.last() == Some(&b'\n') => {
                self.buf.pop();
                return Some(Ok((self.line, &self.buf)));
            }
            // The end of the input (not read again: stdin may be a terminal).
            Ok(n) if self.buf.len() <= MAX_LINE => {
                self.done = true;
                return (n > 0).then_some(Ok((self.line, &self.buf)));
            }
            Ok(_) => InputError::new(&self.source, Problem::LineTooLong(self.line)),
        };
        self.done = true;
        Some(Err(error))
    }
}

/// Does `start`, the first bytes of an input read as raw binary, look like hex text (the format
/// of this module: hex digits, spaces and tabs, `#` comments, line breaks) with at least two
/// digits? A raw bundle never does unless every byte outside `#`…newline runs is one of those
/// characters (an instruction's byte 1, inst_word_len 0x10, is none of them).
pub fn looks_like_hex(start: &[u8]) -> bool {
    let mut digits = 0usize;
    for line in start.split(|&b| b == b'\n') {
        let body = line
            .iter()
            .position(|&b| b == b'#')
            .map_or(line, |i| &line[..i]);
        for &c in body {
            if c.is_ascii_hexdigit() {
                digits += 1;
            } else if !matches!(c, b' ' | b'\t' | b'\r') {
                return false;
            }
        }
    }
    digits >= 2
}

/// Does `start`, the first bytes of an input, begin like a NEFF (FACTS §10: header_size 1024,
/// little-endian, at bytes 8..16; the payload after the 1024-byte header starts gzip `1f 8b`, or
/// is a tar with `ustar` at +257)? Needs 1026 bytes (gzip) or 1286 (tar).
pub fn looks_like_neff(start: &[u8]) -> bool {
    start.len() >= 1026
        && start[8..16] == 1024u64.to_le_bytes()
        && (start[1024..1026] == [0x1f, 0x8b] || start.get(1281..1286) == Some(&b"ustar"[..]))
}

/// Streams the bundles of one source, binary or hex lines, in bounded memory; an error ends
/// the stream.
pub struct Bundles<R> {
    source: String,
    kind: Kind<R>,
    offset: usize,
    count: usize,
    done: bool,
}

enum Kind<R> {
    Binary(R),
    Hex(Lines<R>),
}

impl<R: BufRead> Bundles<R> {
    pub fn new(source: &str, inner: R, hex: bool) -> Self {
        Bundles {
            source: source.to_string(),
            kind: if hex {
                Kind::Hex(Lines::new(source, inner))
            } else {
                Kind::Binary(inner)
            },
            offset: 0,
            count: 0,
            done: false,
        }
    }

    fn step(&mut self) -> Result<Option<Loaded>, InputError> {
        let (source, index) = (&self.source, self.count);
        let bad = |p| Err(InputError::new(source, p));
        let loaded = |line, offset, bytes| Loaded {
            source: source.clone(),
            index,
            line,
            offset,
            bytes,
        };
        match &mut self.kind {
            Kind::Binary(r) => {
                if self.offset == 0 {
                    // The first bytes, peeked: hex text given without --hex, or a NEFF, is a
                    // usage mistake.
                    let start = r.fill_buf().map_err(|e| io_error(source, &e))?;
                    if looks_like_hex(start) {
                        return bad(Problem::LooksLikeHex);
                    }
                    if looks_like_neff(start) {
                        return bad(Problem::LooksLikeNeff);
                    }
                }
                let mut b = [0u8; 64];
                let mut got = 0;
                while got < BUNDLE {
                    match r.read(&mut b[got..]) {
                        Ok(0) => break,
                        Ok(n) => got += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(io_error(source, &e)),
                    }
                }
                let at = self.offset;
                self.offset += got;
                match got {
                    0 => Ok(None),
                    BUNDLE => Ok(Some(loaded(None, at, b))),
                    _ => bad(Problem::Length {
                        len: self.offset,
                        partial_offset: at,
                    }),
                }
            }
            Kind::Hex(lines) => loop {
                let Some(next) = lines.next_line() else {
                    return Ok(None);
                };
                let (lineno, text) = next?;
                let digits = match hex_nibbles(text, true) {
                    Ok(d) => d,
                    Err(e) => {
                        return bad(Problem::BadHexDigit {
                            line: lineno,
                            column: e.index + 1,
                            found: e.found,
                        })
                    }
                };
                if digits.is_empty() {
                    continue;
                }
                if digits.len() != 2 * BUNDLE {
                    return bad(Problem::HexLineLength {
                        line: lineno,
                        digits: digits.len(),
                    });
                }
                let mut b = [0u8; 64];
                b.copy_from_slice(&pack_nibbles(&digits));
                return Ok(Some(loaded(Some(lineno), 0, b)));
            },
        }
    }
}

impl<R: BufRead> Iterator for Bundles<R> {
    type Item = Result<Loaded, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = match self.step() {
            Ok(None) if self.count == 0 => Some(Err(InputError::new(&self.source, Problem::Empty))),
            r => r.transpose(),
        };
        self.count += 1;
        self.done = !matches!(r, Some(Ok(_)));
        r
    }
}

/// [`Bundles`] of one input (`-` = stdin).
pub fn stream_bundles(path: &str, hex: bool) -> impl Iterator<Item = Result<Loaded, InputError>> {
    let (bundles, failed) = match open_source(path) {
        Ok(r) => (Some(Bundles::new(&source_name(path), r, hex)), None),
        Err(e) => (None, Some(Err(e))),
    };
    failed.into_iter().chain(bundles.into_iter().flatten())
}

/// A character that is not a hex digit, space, tab or CR, at a 0-based byte index (shown
/// whole).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadDigit {
    pub index: usize,
    pub found: char,
}

/// The one hex scanner of the harness: the nibbles of `text`, skipping spaces, tabs and CRs;
/// with `comments`, stopping at `#`.
pub fn hex_nibbles(text: &[u8], comments: bool) -> Result<Vec<u8>, BadDigit> {
    let mut digits = Vec::with_capacity(text.len());
    for (index, &c) in text.iter().enumerate() {
        match c {
            b'#' if comments => break,
            b' ' | b'\t' | b'\r' => {}
            _ => match char::from(c).to_digit(16) {
                Some(v) => digits.push(v as u8),
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

/// Bytes from nibble pairs; a trailing odd nibble is ignored (callers check the count).
pub fn pack_nibbles(digits: &[u8]) -> Vec<u8> {
    digits.chunks_exact(2).map(|p| (p[0] << 4) | p[1]).collect()
}

/// Opens a corpus or vector file without following a symlink ([`symlink_skip`]; `O_NOFOLLOW`
/// against a swap), without blocking (`O_NONBLOCK`: a FIFO without a writer does not hang),
/// checked on the open descriptor to be a regular file of at most `max` bytes (so `/dev/zero`
/// is caught). `Ok(Err(why))`: skipped, `why` the reason (the caller names the path).
pub fn open_regular(path: &Path, max: u64) -> std::io::Result<Result<File, String>> {
    if let Some(why) = symlink_skip(path)? {
        return Ok(Err(why));
    }
    use std::os::unix::fs::OpenOptionsExt;
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Ok(Err("symlink, not followed".into()))
        }
        Err(e) => return Err(e),
    };
    let md = f.metadata()?;
    Ok(if !md.is_file() {
        let kind = crate::atomic::file_kind(&md.file_type());
        Err(format!("{kind}, not a regular file"))
    } else if md.len() > max {
        Err(format!("{} bytes, over the cap of {max} bytes", md.len()))
    } else {
        Ok(f)
    })
}

/// Reads one corpus file ([`open_regular`]) up to [`MAX_INPUT`] + 1 bytes: one that grew past
/// the cap while read is skipped too. `Ok(Err(why))`: skipped, `why` naming the path.
pub fn read_corpus_file(path: &Path) -> std::io::Result<Result<Vec<u8>, String>> {
    let skipped = |why| Ok(Err(format!("{}: {why}", path.display())));
    match open_regular(path, MAX_INPUT)? {
        Ok(f) => match read_max(f)? {
            Some(buf) => Ok(Ok(buf)),
            None => skipped(format!("larger than {MAX_INPUT} bytes")),
        },
        Err(why) => skipped(why),
    }
}

/// A corpus walk never follows a symlink (it stays inside its folder): for a symlink,
/// `Ok(Some(why))` naming what it points to; a dangling one is an error; else `Ok(None)`.
pub fn symlink_skip(path: &Path) -> std::io::Result<Option<String>> {
    if !std::fs::symlink_metadata(path)?.file_type().is_symlink() {
        return Ok(None);
    }
    let to = std::fs::metadata(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("dangling symlink: {e}")))?;
    let kind = crate::atomic::file_kind(&to.file_type());
    Ok(Some(if to.is_file() || to.is_dir() {
        format!("symlink to a {kind}, not followed")
    } else {
        format!("{kind}, not a regular file (through a symlink)")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hex text held in memory: `(1-based line, bundle)` pairs.
    fn parse_hex(source: &str, text: &[u8]) -> Result<Vec<(usize, [u8; 64])>, InputError> {
        Bundles::new(source, text, true)
            .map(|r| r.map(|l| (l.line.unwrap_or(0), l.bytes)))
            .collect()
    }

    /// Raw binary held in memory, as bundles.
    fn parse_binary(source: &str, data: &[u8]) -> Result<Vec<[u8; 64]>, InputError> {
        Bundles::new(source, data, false)
            .map(|r| r.map(|l| l.bytes))
            .collect()
    }

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
            InputError::new(
                "f",
                Problem::BadHexDigit {
                    line: 1,
                    column: 2,
                    found: 'g'
                }
            )
        );
        let e = parse_hex("f", b"\n012").unwrap_err();
        assert!(e.to_string().contains("f:2: hex line has 3 digits (odd"));
        assert!(matches!(
            parse_hex("f", b"# only\n"),
            Err(InputError {
                problem: Problem::Empty,
                ..
            })
        ));
    }

    #[test]
    fn binary_errors() {
        assert!(matches!(
            parse_binary("f", &[]),
            Err(InputError {
                problem: Problem::Empty,
                ..
            })
        ));
        let e = parse_binary("f", &[0u8; 65]).unwrap_err();
        assert!(e.to_string().contains("byte offset 64"), "{e}");
        assert_eq!(parse_binary("f", &[0u8; 128]).unwrap().len(), 2);
    }
}
