//! `tpbconform check`: lint instruction streams with tpb_core's walker (SPEC §5.3 "Linting a
//! stream"), serving one generation (`--arch`). Each input is one stream; output lines follow
//! [`super::check_output`].

use super::check_neff;
use super::check_output::Printer;
use super::check_read::{read_ahead, read_blocks, Splitter};
use super::{CheckArgs, CliError, CliResult, Format, ValidatorChoice};
use super::{EXIT_INVALID, EXIT_OK};
use crate::input::{io_error, open_source, source_name, Bundles};
use std::io::Write;
use tpb_core::lint::{Failure, Verdict};
use tpb_core::validate::{validate_header, validate_payload};
use tpb_core::walk::{At, Event, Walker};
use tpb_core::Bundle;

/// Runs `check` on every input in order (none = stdin); a NEFF and `engines` go to
/// [`super::check_neff`].
pub fn run(files: &[String], args: CheckArgs, engines: &[String]) -> CliResult {
    let overrides = check_neff::parse_engines(engines)?;
    let paths: Vec<&str> = if files.is_empty() && overrides.is_empty() {
        vec!["-"]
    } else {
        files.iter().map(String::as_str).collect()
    };
    let stdout = std::io::stdout();
    // --format html: the lint runs as for --format summary into nothing; the page is printed
    // at the end.
    let html = args.format == Format::Html;
    let args = CheckArgs {
        format: if html { Format::Summary } else { args.format },
        ..args
    };
    let out: Box<dyn Write> = if html {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::BufWriter::with_capacity(1 << 16, stdout.lock()))
    };
    let mut printer = Printer::new(out, &args);
    let mut pictures: Vec<(String, super::check_sync::SubgraphSync)> = Vec::new();
    // With no FILE, `--engine NAME=FILE` names raw files as engines.
    let engines_only = paths.is_empty().then(|| {
        (
            "--engine",
            Some(check_neff::NeffInput::Engines(overrides.clone())),
        )
    });
    let inputs = paths.iter().map(|p| (*p, check_neff::neff_input(p)));
    for (path, target) in engines_only.into_iter().chain(inputs) {
        let stopped = if let Some(target) = target {
            if args.validator != ValidatorChoice::Auto || args.hex {
                return Err(CliError::bad(
                    path,
                    "a NEFF's streams are linted with --validator auto and read as binary (--hex \
                     and --validator apply to raw streams)",
                ));
            }
            check_neff::run(target, path, args, &overrides, &mut printer, &mut pictures)?
        } else {
            printer.start(&source_name(path), None);
            let stopped = check_stream(path, args, &mut printer)?;
            printer.summary(stopped)?;
            stopped
        };
        if stopped {
            break;
        }
    }
    printer.out.flush()?;
    if html {
        let sections: Vec<String> = pictures.iter().map(|(label, s)| s.html(label)).collect();
        let page = crate::report::lanes::page(
            "tpbconform check: the engines of each subgraph (SPEC §11)",
            &sections,
            "no multi-engine subgraph to draw (one engine stream each, or --no-sync)",
        );
        let mut o = stdout.lock();
        o.write_all(page.as_bytes())?;
        o.flush()?;
    }
    Ok(if printer.errors > 0 {
        EXIT_INVALID
    } else {
        EXIT_OK
    })
}

/// Bytes per read (binary): stays in cache, a multiple of 64.
const READ_BLOCK: usize = 128 << 10;

/// Hands `each` the runs of whole bundles of input `path` (hex: one, with its line); `true`
/// stops. Stdin and hex text are read on this thread, a named binary file ahead on a second one.
fn each_run(
    path: &str,
    hex: bool,
    mut each: impl FnMut(&[u8], Option<usize>) -> Result<bool, CliError>,
) -> Result<bool, CliError> {
    let source = &source_name(path);
    if hex {
        for item in Bundles::new(source, open_source(path)?, true) {
            let b = item?;
            if each(&b.bytes, b.line)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let mut split = Splitter::named(source);
    let feed = |b: &[u8]| split.feed(b, &mut each);
    let stopped = if path == "-" {
        // Large reads straight into our buffer (a BufReader hands a read this big on).
        read_blocks(source, open_source(path)?, READ_BLOCK, feed)?
    } else {
        let io = |e| io_error(source, &e);
        let file = std::fs::File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.is_dir() {
            // A folder is read only as an unpacked NEFF (check_neff::neff_input): say so.
            return Err(CliError::bad(
                source,
                "is a directory, expected a file of bundles or an unpacked NEFF folder (one \
                 that holds sgNN/ subgraph folders)",
            ));
        }
        // The kernel's copy overlaps the walk.
        read_ahead(source, file, READ_BLOCK, feed)?
    };
    if !stopped {
        split.finish(source, false)?;
    }
    Ok(stopped)
}

/// Checks stream `path`: `--validator auto` walks it, another runs on every bundle alone (SPEC
/// §3, §4). Returns whether `--max-errors` stopped it.
fn check_stream<W: Write>(
    path: &str,
    args: CheckArgs,
    printer: &mut Printer<W>,
) -> Result<bool, CliError> {
    let mut walker = Walker::new(args.arch);
    let limit = args.max_errors.unwrap_or(u64::MAX);
    let (gen, auto) = (args.arch, args.validator == ValidatorChoice::Auto);
    let mut index = 0usize;
    let stopped = each_run(path, args.hex, |run, line| {
        if auto {
            return printer.walk(&mut walker, run, line, limit);
        }
        for b in run.as_chunks::<64>().0 {
            let checked = match args.validator {
                ValidatorChoice::CustomOpPayload => validate_payload(&Bundle(*b), gen),
                _ => validate_header(&Bundle(*b), gen),
            };
            let verdict = match checked {
                Ok(()) => Verdict::Valid,
                Err(e) => Verdict::Invalid(Failure {
                    predicate: e.predicate().name(),
                    offset: e.offset(),
                    value: b.get(e.offset()).copied().unwrap_or(0),
                }),
            };
            let at = At {
                index,
                offset: index * 64,
                opcode: b[0],
            };
            index += 1;
            let length = 64;
            if printer.one(
                &Event::Instruction {
                    at,
                    length,
                    verdict,
                },
                line,
                limit,
            )? {
                return Ok(true);
            }
        }
        Ok(false)
    })?;
    if !stopped && auto {
        printer.finish(walker)?;
    }
    Ok(stopped)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bundles of a file read ahead in blocks that do not divide 64, cut by the splitter.
    fn read_back(data: &[u8], block: usize, stop_after: usize) -> (Vec<[u8; 64]>, bool, Splitter) {
        let path = std::env::temp_dir().join(format!(
            "tpb-check-read-{}-{block}-{stop_after}",
            std::process::id()
        ));
        std::fs::write(&path, data).expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let mut got = Vec::new();
        let mut split = Splitter::default();
        let stopped = read_ahead("t", file, block, |b| {
            split.feed(b, &mut |run: &[u8], _| {
                for x in run.as_chunks::<64>().0 {
                    got.push(*x);
                    if got.len() >= stop_after {
                        return Ok(true);
                    }
                }
                Ok(false)
            })
        })
        .expect("read");
        let _ = std::fs::remove_file(&path);
        (got, stopped, split)
    }

    #[test]
    fn read_ahead_and_the_splitter_give_every_bundle_once_in_order() {
        let data: Vec<u8> = (0..64 * 37).map(|i| (i * 7 % 251) as u8).collect();
        let want: Vec<[u8; 64]> = data
            .chunks(64)
            .map(|c| <[u8; 64]>::try_from(c).expect("64"))
            .collect();
        for block in [1, 63, 64, 65, 200, 4096] {
            let (got, stopped, split) = read_back(&data, block, usize::MAX);
            assert_eq!(got, want, "block {block}");
            assert!(!stopped);
            assert!(split.finish("t", false).is_ok());
            // Stopping early reports it and reads no further than needed.
            let (got, stopped, _) = read_back(&data, block, 5);
            assert_eq!(got, want[..5].to_vec(), "block {block}");
            assert!(stopped);
        }
        // A partial last bundle is bad input naming where it starts; an empty file too.
        let (_, _, split) = read_back(&data[..64 * 2 + 10], 100, usize::MAX);
        let e = split.finish("t", false).expect_err("partial").to_string();
        assert!(e.contains("t"), "{e}");
        let (_, _, split) = read_back(&[], 100, usize::MAX);
        assert!(split.finish("t", false).is_err());
    }
}
