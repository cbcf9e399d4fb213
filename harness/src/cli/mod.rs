//! The subcommands of `tpbconform`: one `run` each, returning an exit code or a [`CliError`];
//! what each code means per subcommand: [`help`].

pub mod check;
pub mod check_neff;
pub mod check_output;
pub mod check_read;
pub mod check_sync;
pub mod color;
pub mod decode;
pub mod encode;
pub mod explain;
pub mod gate;
pub mod help;
pub mod lower;
pub mod minimize;
pub mod neff;
pub mod panic_hook;
pub mod progress;
pub mod replay;
pub mod report;
pub mod stream_context;
pub mod subject_check;
pub mod subject_worker;

pub use crate::explain::opcode_str;
use crate::generation::Generation;
use crate::input::InputError;
pub use crate::report::format::shown;
pub use crate::subjects::registry::mnemonic_of;
use std::fmt;
use std::io;

pub const EXIT_OK: u8 = 0;
/// A negative verdict.
pub const EXIT_INVALID: u8 = 1;
pub const EXIT_BAD_INPUT: u8 = 2;
/// Stdout's reader went away: stopped quietly, the verdict unknown (128 + SIGPIPE).
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// A failure that makes the CLI exit 2 (141: a closed stdout). `Display` is the one-line message.
#[derive(Debug)]
pub enum CliError {
    BrokenPipe,
    /// Bad input or usage, a refusal before anything changed, an output error.
    Refused(String),
}

impl CliError {
    pub fn refused(e: impl fmt::Display) -> Self {
        CliError::Refused(e.to_string())
    }

    /// `<source>: <message>`.
    pub fn bad(source: impl fmt::Display, message: impl fmt::Display) -> Self {
        CliError::Refused(format!("{source}: {message}"))
    }

    pub fn output(m: impl fmt::Display) -> Self {
        CliError::Refused(format!("cannot write output: {m}"))
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::BrokenPipe => write!(f, "stdout closed by its reader"),
            // One line whatever names it carries (a path, a NEFF member).
            CliError::Refused(m) => f.write_str(&shown(m)),
        }
    }
}

/// A test hook: environment variable `name` parsed, if set and well-formed.
pub fn debug_env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        CliError::refused(e)
    }
}

impl From<io::Error> for CliError {
    /// An error writing stdout.
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::output(e)
        }
    }
}

pub type CliResult = Result<u8, CliError>;

#[derive(Clone, Copy, Debug, clap::Args)]
pub struct CheckArgs {
    /// Read hex text (one bundle per line) instead of raw binary.
    #[arg(long)]
    pub hex: bool,
    /// Which validator to run on every bundle.
    #[arg(long, value_enum, default_value_t = ValidatorChoice::Auto)]
    pub validator: ValidatorChoice,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Hardware generation (v2 Sunda, v3 Cayman, v4 Mariana, v5 Maverick).
    #[arg(long, default_value = "v2")]
    pub arch: Generation,
    /// Stop at the bundle where the Nth error is found (invalid verdicts and stream errors,
    /// counted over all inputs; that bundle's reports are all printed).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_errors: Option<u64>,
    /// Add per-opcode counts (valid / skeleton / invalid) to each stream's summary (text:
    /// one line per opcode seen; jsonl: "per_opcode" in the summary object).
    #[arg(long)]
    pub per_opcode: bool,
    /// Do not run the engine model (SPEC §11) on multi-engine input: a NEFF's subgraphs or
    /// several --engine streams. On by default; its findings are advisory.
    #[arg(long)]
    pub no_sync: bool,
    /// The gzip-bomb cap of a NEFF: its payload may inflate to at most N times its compressed
    /// size (never less than 64 MiB; SPEC §12). Raise it for a NEFF of mostly-zero constants.
    #[arg(long, value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_ratio: u64,
}

/// Which validator `check` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ValidatorChoice {
    /// Lint the stream (SPEC §5.3 "Linting a stream": the skeleton of every opcode, the body
    /// where a record is modelled, the stream rules); `explain` and `decode` give each bundle
    /// the same verdict.
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
    /// `check` only: the closing summary of each stream, nothing per bundle.
    Summary,
    /// `check` only: the lane picture of each multi-engine subgraph's engine model (SPEC
    /// §11) as one HTML page; no lines per bundle.
    Html,
}
