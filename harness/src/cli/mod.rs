//! The subcommands of `tpbconform`. `main.rs` holds the clap definitions and
//! dispatches to one `run` function per subcommand; each returns an exit code
//! or a [`CliError`] (exit 2).
//!
//! Exit codes: [`EXIT_OK`] 0 = every bundle valid, [`EXIT_INVALID`] 1 = some
//! bundle invalid, [`EXIT_BAD_INPUT`] 2 = bad input or usage,
//! [`EXIT_BROKEN_PIPE`] 141 = stdout closed by its reader (quiet).

pub mod check;
pub mod decode;
pub mod encode;
pub mod explain;
pub mod gate;
pub mod layout;
pub mod minimize;
pub mod replay;
pub mod report;
pub mod subject_worker;

use crate::input::InputError;
use crate::subject::{CoreSubject, DecodeFail, Decoded, Subject, Value};
use std::fmt;
use std::io::{self, Write};

/// Every bundle valid.
pub const EXIT_OK: u8 = 0;
/// Some bundle invalid.
pub const EXIT_INVALID: u8 = 1;
/// Bad input or usage.
pub const EXIT_BAD_INPUT: u8 = 2;
/// The reader of stdout went away (e.g. `| head -1`): the run stopped
/// quietly, its verdict unknown. 141 = 128 + SIGPIPE, what a shell reports
/// for a tool killed by SIGPIPE; neither "valid" (0) nor "bad input" (2).
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// A failure that makes the CLI exit 2. `Display` is the one-line message.
#[derive(Debug)]
pub enum CliError {
    /// Unreadable or malformed bundle input.
    Input(InputError),
    /// A bad line in a JSONL input.
    Jsonl {
        /// Path or `<stdin>`.
        source: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Bad `replay` input.
    Replay(replay::ReplayError),
    /// Writing the output failed.
    Output(String),
    /// Stdout was closed by its reader: exit [`EXIT_BROKEN_PIPE`] quietly.
    BrokenPipe,
}

impl CliError {
    /// The exit code of this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::BrokenPipe => EXIT_BROKEN_PIPE,
            _ => EXIT_BAD_INPUT,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Input(e) => write!(f, "{e}"),
            CliError::Jsonl {
                source,
                line,
                message,
            } => write!(f, "{source}:{line}: bad jsonl: {message}"),
            CliError::Replay(e) => write!(f, "{e}"),
            CliError::Output(m) => write!(f, "cannot write output: {m}"),
            CliError::BrokenPipe => write!(f, "stdout closed by its reader"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        CliError::Input(e)
    }
}

impl From<io::Error> for CliError {
    /// An error writing stdout; [`io::ErrorKind::BrokenPipe`] becomes
    /// [`CliError::BrokenPipe`].
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Output(e.to_string())
        }
    }
}

/// Result of a subcommand: the exit code (0 or 1) or an error (exit 2).
pub type CliResult = Result<u8, CliError>;

/// Which validator `check` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Validator {
    /// 0x85 → header validator, 0x86 → payload validator, any other opcode →
    /// valid iff it decodes and re-encodes to the same bytes.
    Auto,
    /// The SPEC §3 header validator on every bundle.
    #[value(name = "custom_op_header")]
    CustomOpHeader,
    /// The SPEC §4 payload validator on every bundle.
    #[value(name = "custom_op_payload")]
    CustomOpPayload,
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One human-readable line per bundle.
    Text,
    /// One JSON object per line.
    Jsonl,
}

/// The verdict `check`/`explain` give one bundle: `None` = valid, else the
/// failing predicate or decode field, with the byte offset when known.
pub fn judge(b: &[u8; 64], v: Validator) -> Option<(String, Option<usize>)> {
    let core = CoreSubject;
    let by_validator = |p: Option<&'static str>| p.map(|p| (p.to_string(), None));
    match (v, b[0]) {
        (Validator::CustomOpHeader, _) => by_validator(core.validate_header(b)),
        (Validator::CustomOpPayload, _) => by_validator(core.validate_payload(b)),
        (Validator::Auto, 0x85) => by_validator(core.validate_header(b)),
        (Validator::Auto, 0x86) => by_validator(core.validate_payload(b)),
        (Validator::Auto, _) => match core.decode(b) {
            Err(DecodeFail { field, offset }) => Some((field, Some(offset))),
            Ok(d) => match core.encode(d.opcode, &d.fields) {
                Ok(e) if &e == b => None,
                Ok(_) => Some(("roundtrip".to_string(), None)),
                Err(f) => Some((format!("roundtrip:{f}"), None)),
            },
        },
    }
}

/// `0xNN` with uppercase digits.
pub fn opcode_str(op: u8) -> String {
    format!("0x{op:02X}")
}

/// The mnemonic of an opcode: SPEC §5.2 for the eleven, else core's roster
/// name when it has one.
pub fn mnemonic_of(op: u8) -> Option<&'static str> {
    crate::subject::mnemonic(op).or_else(|| tpb_core::roster::mnemonic(op))
}

/// A field value as JSON (ints as numbers, names as strings, bytes as hex).
pub fn value_json(v: &Value) -> serde_json::Value {
    match v {
        Value::Int(n) => serde_json::Value::from(*n),
        Value::Name(s) => serde_json::Value::from(s.clone()),
        Value::Bytes(b) => serde_json::Value::from(crate::subject::hex(b)),
    }
}

/// The `fields` object of `decode`'s output: SPEC §5.2 order, `sync.*` fields
/// nested in a `"sync"` object (placed where the first one appears).
pub fn fields_json(d: &Decoded) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (name, v) in &d.fields {
        if let Some(k) = name.strip_prefix("sync.") {
            let e = m
                .entry("sync")
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            if let serde_json::Value::Object(s) = e {
                s.insert(k.to_string(), value_json(v));
            }
        } else {
            m.insert(name.clone(), value_json(v));
        }
    }
    serde_json::Value::Object(m)
}

/// Writes `s` plus a newline.
pub fn emit(out: &mut impl Write, s: &str) -> Result<(), CliError> {
    out.write_all(s.as_bytes())?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Where a bundle came from, for messages: `file:line` or `file@offset`.
pub fn location(l: &crate::input::Loaded) -> String {
    match l.line {
        Some(n) => format!("{}:{n}", l.source),
        None => format!("{}@0x{:X}", l.source, l.offset),
    }
}
