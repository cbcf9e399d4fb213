//! `tpbconform check`: lint instruction streams with tpb_core's walker (SPEC §5.3 "Linting a
//! stream"), serving one generation (`--arch`). Each input is one stream; output lines follow
//! [`super::check_output`].

use super::check_output::{Printer, Tally};
use super::{CliError, CliResult, Format, Validator};
use super::{EXIT_INVALID, EXIT_OK};
use crate::arch::Arch;
use crate::input::{open_source, source_name, Bundles, InputError};
use std::io::{BufRead, Write};
use tpb_core::lint::{Failure, Verdict};
use tpb_core::validate::{validate_header, validate_payload};
use tpb_core::walk::{At, Event, Walker};
use tpb_core::Bundle;

/// What `check` was asked for.
#[derive(Clone, Copy, Debug)]
pub struct CheckArgs {
    /// Hex text input.
    pub hex: bool,
    /// `auto` lints streams; another validator runs on every bundle alone.
    pub validator: Validator,
    /// Output format.
    pub format: Format,
    /// The generation.
    pub arch: Arch,
    /// Stop after this many errors (invalid verdicts + stream errors) over all streams.
    pub max_errors: Option<u64>,
}

/// Runs `check` on every input in order (none = stdin).
pub fn run(files: &[String], args: CheckArgs) -> CliResult {
    let paths: Vec<String> = if files.is_empty() {
        vec!["-".to_string()]
    } else {
        files.to_vec()
    };
    let stdout = std::io::stdout();
    let mut printer = Printer::new(
        std::io::BufWriter::with_capacity(1 << 16, stdout.lock()),
        args.format,
        args.arch,
    );
    let mut errors = 0u64;
    for path in &paths {
        let source = source_name(path);
        let mut tally = Tally::default();
        let reader = open_source(path)?;
        let stopped = if args.validator == Validator::Auto {
            lint_stream(&source, reader, args, &mut printer, &mut tally, &mut errors)?
        } else {
            validate_each(&source, reader, args, &mut printer, &mut tally, &mut errors)?
        };
        printer.summary(&source, &tally, stopped)?;
        if stopped {
            break;
        }
    }
    printer.flush()?;
    Ok(if errors > 0 { EXIT_INVALID } else { EXIT_OK })
}

/// Bytes asked of the input per read (binary): 128 KiB (stays in cache), a multiple of 64.
const READ_BLOCK: usize = 128 << 10;

/// Reads the bundles of one input: binary in large blocks, hex line by line. `each` gets the
/// bundle and its 1-based line (hex); returning `true` stops the read.
fn each_bundle(
    source: &str,
    mut reader: Box<dyn BufRead>,
    hex: bool,
    mut each: impl FnMut(&Bundle, Option<usize>) -> Result<bool, CliError>,
) -> Result<bool, CliError> {
    if hex {
        for item in Bundles::new(source, reader, true) {
            let (line, _, bytes) = item?;
            if each(&Bundle(bytes), line)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let io = |e: std::io::Error| InputError::Io {
        source: source.to_string(),
        error: e.to_string(),
    };
    // Large reads straight into our buffer (a BufReader hands a read this big to the file).
    let mut buf = vec![0u8; READ_BLOCK];
    let mut total = 0usize;
    let mut filled = 0usize;
    loop {
        let n = match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io(e).into()),
        };
        total += n;
        filled += n;
        let whole = filled - filled % 64;
        for chunk in buf[..whole].chunks_exact(64) {
            let mut b = [0u8; 64];
            b.copy_from_slice(chunk);
            if each(&Bundle(b), None)? {
                return Ok(true);
            }
        }
        buf.copy_within(whole..filled, 0);
        filled -= whole;
    }
    let carried = filled;
    if total == 0 {
        return Err(InputError::Empty {
            source: source.to_string(),
        }
        .into());
    }
    if carried > 0 {
        return Err(InputError::Length {
            source: source.to_string(),
            len: total,
            partial_offset: total - carried,
        }
        .into());
    }
    Ok(false)
}

/// Counts and prints the events of one stream; keeps the first output error.
struct Sink<'a, W: Write> {
    source: &'a str,
    printer: &'a mut Printer<W>,
    tally: &'a mut Tally,
    errors: &'a mut u64,
    /// `false` for `--format summary`: nothing per event.
    printing: bool,
    failed: Result<(), CliError>,
}

impl<W: Write> Sink<'_, W> {
    #[inline(always)]
    fn on(&mut self, e: &Event, line: Option<usize>) {
        *self.errors += u64::from(self.tally.count(e));
        if self.printing && self.failed.is_ok() {
            self.failed = self.printer.event(self.source, e, line);
        }
    }

    #[inline(always)]
    fn take_failure(&mut self) -> Result<(), CliError> {
        if self.failed.is_ok() {
            return Ok(());
        }
        std::mem::replace(&mut self.failed, Ok(()))
    }
}

/// `--validator auto`: walks one stream. Returns whether `--max-errors` stopped it.
fn lint_stream<W: Write>(
    source: &str,
    reader: Box<dyn BufRead>,
    args: CheckArgs,
    printer: &mut Printer<W>,
    tally: &mut Tally,
    errors: &mut u64,
) -> Result<bool, CliError> {
    let mut walker = Walker::new(args.arch.generation());
    let mut sink = Sink {
        source,
        printer,
        tally,
        errors,
        printing: args.format != Format::Summary,
        failed: Ok(()),
    };
    let limit = args.max_errors.unwrap_or(u64::MAX);
    let stopped = each_bundle(source, reader, args.hex, |b, line| {
        walker.push(b, &mut |e| sink.on(&e, line));
        sink.take_failure()?;
        Ok(*sink.errors >= limit)
    })?;
    if !stopped {
        walker.finish(&mut |e| sink.on(&e, None));
        sink.take_failure()?;
    }
    Ok(stopped)
}

/// `--validator custom_op_header|custom_op_payload`: that validator on every bundle alone
/// (no stream rule; SPEC §3, §4).
fn validate_each<W: Write>(
    source: &str,
    reader: Box<dyn BufRead>,
    args: CheckArgs,
    printer: &mut Printer<W>,
    tally: &mut Tally,
    errors: &mut u64,
) -> Result<bool, CliError> {
    let limit = args.max_errors.unwrap_or(u64::MAX);
    let gen = args.arch.generation();
    let mut index = 0usize;
    each_bundle(source, reader, args.hex, |b, line| {
        let checked = match args.validator {
            Validator::CustomOpPayload => validate_payload(b, gen),
            _ => validate_header(b, gen),
        };
        let verdict = match checked {
            Ok(()) => Verdict::Valid,
            Err(e) => Verdict::Invalid(Failure {
                predicate: e.predicate().name(),
                offset: e.offset(),
                value: b.0.get(e.offset()).copied().unwrap_or(0),
            }),
        };
        let event = Event::Instruction {
            at: At {
                index,
                offset: index * 64,
                opcode: b.0[0],
            },
            length: 64,
            verdict,
        };
        *errors += u64::from(tally.count(&event));
        printer.event(source, &event, line)?;
        index += 1;
        Ok(*errors >= limit)
    })
}
