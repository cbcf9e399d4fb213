//! `tpbconform`: check, decode, encode and explain 64-byte TPB ISA bundles.
//!
//! Adding a subcommand: add a variant to [`Command`] (with its doc comment as
//! the help text) and one arm to the `match` in [`run`], calling a module of
//! `tpbconform::cli` (or your own) that returns `CliResult`.

use clap::{Parser, Subcommand};
use std::process::ExitCode;
use tpbconform::cli::{self, help, CliResult};

/// Differential-conformance tooling for the 64-byte TPB ISA bundles of the
/// Neuron compiler (SPEC.md, tpb-spec-1). All subcommands use tpb-core.
#[derive(Parser, Debug)]
#[command(name = "tpbconform", version, after_help = help::TOP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Lint instruction streams: each input is one stream (SPEC §5.3 "Linting a stream").
    ///
    /// `auto` validator: every opcode of the generation's enum gets the shared skeleton
    /// (valid_opcode, inst_word_len, has_valid_neuron_events) and, where the generation has a
    /// record for it, its body (0x85/0x86: the SPEC §3/§4 validators; other records: decode,
    /// SPEC §5.1). Verdicts: `valid`, `valid (skeleton; body not modelled)`,
    /// `invalid: <predicate> at byte 0xNN`. The walker keeps sync across 128-byte instructions
    /// and reports the stream errors of SPEC §5.3 (custom-op groups, 0xD9/0xDA pairs) with the
    /// bundle index and byte offset where each is detected and the instruction it belongs to.
    /// A closing summary per stream follows. Another `--validator` runs that validator on
    /// every bundle alone (no stream rule).
    ///
    /// Output (jsonl): per instruction {"source","index","offset","opcode","mnemonic","length",
    /// "verdict":"valid"|"skeleton"|"invalid","predicate","byte" (offset),"value","note","valid",
    /// "failed"}; per stream error {"source","index","offset","stream_error","message",
    /// "instruction":{..},..}; per stream {"source","summary":{..}}.
    #[command(after_help = help::CHECK)]
    Check {
        #[command(flatten)]
        args: cli::CheckArgs,
        /// Input files (`-` = stdin; none = stdin); each is one stream, except a NEFF file
        /// (named `.neff`, or a 1024-byte NEFF header before a gzip or tar payload) or an
        /// unpacked NEFF folder, whose every engine stream is linted (SPEC §12).
        #[arg(value_name = "FILE")]
        files: Vec<String>,
        /// An engine's stream: NAME=MEMBER overrides what def.json says in a NEFF
        /// (`--engine Pool=sg00/Pool.bin`); with no FILE, NAME=FILE lints raw files as
        /// engines. NAME: PE, Activation (act), Pool, DVE, SP. Repeatable.
        #[arg(long = "engine", value_name = "NAME=MEMBER|FILE")]
        engines: Vec<String>,
    },
    /// Decode bundles to JSON lines (SPEC §5.2 field names and order).
    ///
    /// One object per bundle: {"index":N,"opcode":"0xD9","mnemonic":"...","fields":{...}}
    /// (header names: debug_cmd, debug_hint, wait_mode, wait_idx, update_mode, update_idx,
    /// semaphore_value, then the opcode's fields); names are strings, ints numbers, byte ranges
    /// lowercase hex strings. Each object's "check" is the verdict `check` gives it. A bundle
    /// `check` finds invalid gives
    /// {"index":N,"opcode":..,"mnemonic":..,"error":"<field> at byte offset 0xNN","field":..,"offset":N}
    /// and exit code 1; an opcode with no modelled record gives its skeleton's fields (header
    /// and events band) and "body":"not modelled" (its error record too), and no other
    /// verdict; where the record decoder answers otherwise than the object shows (check
    /// refuses a modelled record, or accepts one the decoder refuses), that answer is
    /// "record"; the second half of a 128-byte instruction gives
    /// {"index":N,"body":..,"check":null}.
    #[command(after_help = help::DECODE)]
    Decode(cli::decode::DecodeArgs),
    /// Encode the JSON lines that `decode` prints back into bundles.
    ///
    /// Input: JSONL as printed by `decode` (blank lines skipped). Output: raw
    /// binary bundles on stdout, or with --hex one 128-digit hex line per bundle.
    /// For every bundle that decodes, encode(decode(b)) == b. Error records
    /// and records the encoder rejects are reported on stderr and skipped
    /// (exit 1); malformed JSONL (bad JSON, a duplicate or unknown key, a
    /// mnemonic that is not the opcode's) exits 2 with the file and line.
    /// Output streams; with -o PATH, PATH is replaced atomically (its
    /// permissions kept) only on exit 0/1 with at least one bundle encoded,
    /// and a PATH that is a symlink, FIFO, device or folder is refused.
    #[command(after_help = help::ENCODE)]
    Encode(cli::encode::EncodeArgs),
    /// Annotated dump: each field's offset, bytes, name and value.
    ///
    /// Reserved bytes are marked. Each byte that made the failing predicate or
    /// decode field fail has `^^` under it, its row ends with
    /// `<== FAILED: <name>`, and it is red with colour (`--color`). The
    /// verdict is the one `check` gives (its default `--validator auto`): a
    /// roster opcode with no modelled record is `valid (skeleton; body not
    /// modelled)` or fails a skeleton predicate at its byte.
    #[command(after_help = help::EXPLAIN)]
    Explain(cli::explain::ExplainArgs),
    /// The release gate: replay corpus/ and corpus/vectors/, then run
    /// generated differential cases (core vs oracle, and each --subject vs
    /// core) on all cores; write a
    /// report (summary.md, divergences.jsonl, junit.xml, index.html).
    ///
    #[command(after_help = help::GATE)]
    Gate(cli::gate::GateArgs),
    /// Re-run one input through a target, core vs oracle and each --subject
    /// vs core (the command a gate report prints, or a fuzz artefact: any fuzz
    /// target name, the file read as that fuzz target reads its input).
    #[command(after_help = help::REPLAY)]
    Replay(cli::replay::ReplayArgs),
    /// Lower IR collectives and Send/Recv (JSON) to records plus the module
    /// side-tables (SPEC §5.4): replica groups, source-target pairs, attributes.
    ///
    /// Input: {"generation":"v2".."v5","instructions":[{"op":"collective"|"send"|
    /// "recv"|"local_send_recv",...}]} (see examples/lowering/). Output (hex):
    /// one record per line with instructions and side-tables as `#` comments,
    /// accepted by `decode --arch <its generation> --hex`. Exit 2 on bad
    /// input, naming the JSON path of the bad value; nothing is printed then.
    #[command(after_help = help::LOWER)]
    Lower {
        /// Output format.
        #[arg(long, value_enum, default_value_t = cli::lower::LowerFormat::Hex)]
        format: cli::lower::LowerFormat,
        /// The JSON input file (`-` = stdin).
        #[arg(value_name = "FILE.json")]
        file: String,
    },
    /// Keep the smallest set of corpus files covering the same signatures
    /// (target, core verdict, outcome, field classes): deletes the redundant
    /// seeds in place (preview with --dry-run).
    ///
    /// Reads and judges every folder first; then, in place, only deletes the
    /// redundant input files (subfolders and special files are never
    /// touched), or with --output writes the kept set into a new folder.
    #[command(after_help = help::MINIMIZE)]
    Minimize(cli::minimize::MinimizeArgs),
    /// Check a subject you plug in: print its name, protocol version and
    /// capabilities, and run a short smoke set against core.
    #[command(after_help = help::SUBJECT_CHECK)]
    SubjectCheck(cli::subject_check::SubjectCheckArgs),
    /// Internal: serve tpb-subject/1 on stdin/stdout for a `lib:PATH`
    /// subject (the gate runs this as the library's worker process).
    #[command(hide = true)]
    SubjectWorker {
        /// `lib:PATH`.
        spec: String,
        /// Serve validator / LUT chunks through this shared region instead
        /// of tpb-subject/1 lines (the gate's batch worker).
        #[arg(long, requires = "arch")]
        shm: Option<std::path::PathBuf>,
        /// The generation the batch worker serves (with --shm).
        #[arg(long)]
        arch: Option<String>,
    },
    /// Read NEFF files (the compiler's output, FACTS §10): `neff info FILE` lists the header
    /// and every member with its role and how it was decided (exit 0; 2: refused, naming the
    /// member and the reason).
    #[command(subcommand)]
    Neff(cli::neff::NeffCommand),
    /// Work with report folders: `report merge DIR...` combines the reports
    /// of a sharded gate into one (exit codes: `report merge --help`).
    #[command(subcommand)]
    Report(cli::report::ReportCommand),
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Check {
            args,
            files,
            engines,
        } => cli::check::run(&files, args, &engines),
        Command::Decode(a) => cli::decode::run(a),
        Command::Encode(a) => cli::encode::run(a),
        Command::Explain(a) => cli::explain::run(a),
        Command::Gate(a) => cli::gate::run(a),
        Command::Replay(a) => cli::replay::run(a),
        Command::Minimize(a) => cli::minimize::run(a),
        Command::SubjectCheck(a) => cli::subject_check::run(a),
        Command::SubjectWorker { spec, shm, arch } => {
            cli::subject_worker::run(&spec, shm.as_deref(), arch.as_deref())
        }
        Command::Neff(a) => cli::neff::run(a),
        Command::Report(a) => cli::report::run(a),
        Command::Lower { format, file } => cli::lower::run(&file, format),
    }
}

fn main() -> ExitCode {
    // Never print a backtrace: a panic is an internal error, exit 2.
    cli::panic_hook::install_loud(|| {});
    // `lib:` / `cmd:` subject specs open through tpbconform::external.
    tpbconform::subjects::registry::set_external_opener(tpbconform::external::open);
    // clap prints usage errors and exits 2 itself (help/version exit 0).
    let cli = Cli::parse();
    // SIGINT / SIGTERM / SIGHUP: remove temporary files, kill subject
    // processes, exit 130 (the gate stops gracefully first). The lib:
    // worker keeps the default (its client kills it).
    if !matches!(cli.command, Command::SubjectWorker { .. }) {
        tpbconform::interrupt::install();
    }
    let code = run(cli);
    // Subjects a stuck worker thread abandoned, or their children.
    tpbconform::external::reaper::kill_all();
    match code {
        Ok(code) => ExitCode::from(code),
        Err(cli::CliError::BrokenPipe) => ExitCode::from(cli::EXIT_BROKEN_PIPE),
        Err(e) => {
            eprintln!("tpbconform: error: {e}");
            ExitCode::from(cli::EXIT_BAD_INPUT)
        }
    }
}
