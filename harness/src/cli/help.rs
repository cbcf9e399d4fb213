//! The `after_help` texts: each subcommand's exit codes (the top level lists them all; tests
//! hold them to docs/guarantees.md and the behaviour).

/// The line every reader ends its table with.
macro_rules! closed_stdout {
    () => {
        "  141  stdout was closed by its reader (e.g. `| head -1`); no message"
    };
}

/// A bundle reader's help (`check`, `decode`, `explain`): the input rules, then its exit codes
/// 0 and 1, 2 and 141.
macro_rules! reader {
    ($codes:literal) => {
        concat!(
            "\
Input: FILE arguments are read in order (`-` or no FILE = stdin). Without
--hex, input is raw binary whose length is a multiple of 64. With --hex, one
bundle per line: 128 hex digits, spaces ignored, `#` starts a comment, blank
lines skipped. Bundle indices run across all inputs, starting at 0.

Readers stream: output starts with the first bundles and memory stays
bounded whatever the input size (hex lines are capped at 1 MiB). On exit 2
the verdicts of the bundles before the bad one have been printed already.

Exit codes:
",
            $codes,
            "  2    bad input or usage (the message names the file, the line or byte
       offset, and what is wrong)
",
            closed_stdout!()
        )
    };
}

pub const CHECK: &str = reader!(
    "  0    every bundle is valid (or valid on its skeleton, body not modelled) and no stream rule
       of SPEC §5.3 is broken
  1    some bundle is invalid, or a stream rule is broken (or --max-errors stopped the run)
"
);

pub const DECODE: &str = reader!(
    "  0    every bundle decodes
  1    some bundle does not decode (its error record is printed)
"
);

/// `explain` (its verdict is `check --validator auto`'s).
pub const EXPLAIN: &str = reader!(
    "  0    every bundle is valid
  1    some bundle is invalid (its failing bytes are flagged)
"
);

pub const ENCODE: &str = concat!(
    "Exit codes:
  0    every record was encoded
  1    some record was skipped (an error record, or one the encoder refuses;
       each named on stderr)
  2    malformed JSONL (file and line named) or a bad -o PATH; -o PATH is
       left as it was
",
    closed_stdout!()
);

pub const LOWER: &str = concat!(
    "Exit codes:
  0    every instruction lowered (records and side-tables printed)
  2    bad JSON (line and column), a bad value or an instruction the lowering
       rejects (its JSON path); nothing is printed
",
    closed_stdout!()
);

pub const REPLAY: &str = concat!(
    "Exit codes:
  0    core, the oracle and every --subject agree
  1    the divergence reproduces (printed)
  2    bad input (the message names the source, the line or offset)
",
    closed_stdout!()
);

pub const GATE: &str = "\
Exit codes:
  0    PASS: every selected target ran all its planned cases, no divergence,
       no failure (or INCOMPLETE with --allow-partial)
  1    FAIL (a divergence, a vector mismatch, a panic, a timeout, a target or
       subject that ran zero cases, an interruption) or INCOMPLETE (cut short
       by --seconds)
  2    bad usage or bad input, refused before any case runs (missing or empty
       corpus without --no-corpus, malformed vector file, existing
       --report-dir)
A stdout its reader closed does not change the exit code: the report on
disk is the record.";

pub const MINIMIZE: &str = concat!(
    "In place, minimize DELETES the redundant seeds of each folder (one file is
kept per coverage signature); --dry-run lists them first, -o DIR writes the
kept set to a new folder and deletes nothing.

Exit codes:
  0    done (with --dry-run: the plan printed, nothing changed)
  1    a deletion failed part way (the files deleted before it stay deleted;
       every signature is still covered)
  2    bad input, not a corpus folder, or an existing --output; nothing
       changed
",
    closed_stdout!()
);

pub const SUBJECT_CHECK: &str = concat!(
    "Exit codes:
  0    every smoke case agrees with core
  1    a divergence, a fault, or nothing checked
  2    bad spec, or the subject does not start
",
    closed_stdout!()
);

pub const REPORT_MERGE: &str = concat!(
    "Exit codes:
  0    every shard present, complete and clean
  1    some shard found a divergence or failed
  2    refused (missing, duplicated or incomplete shard, shards of different
       runs, malformed folder, existing output); nothing written
",
    closed_stdout!()
);

pub const NEFF_INFO: &str = concat!(
    "A NEFF file is a 1024-byte header and a gzip or tar payload (FACTS §10); an
unpacked NEFF folder is read likewise. Nothing is written anywhere.

Exit codes:
  0    the header, the payload's hash and every member were read
  2    refused: not a NEFF, a hash mismatch, a hostile member (`..`, absolute,
       link, device, FIFO, duplicate), a def.json naming a missing member, a
       truncated or oversized payload (the message names the member and why)
",
    closed_stdout!()
);

/// The top level: every subcommand's codes in one table.
pub const TOP: &str = "\
Exit codes (each subcommand's --help has its own):
  check, explain   0 every bundle valid   1 some bundle invalid   2 bad input
  decode           0 every bundle decodes 1 some does not         2 bad input
  encode           0 every record encoded 1 some record skipped   2 bad input
  lower            0 lowered                                      2 bad input
  replay           0 agree                1 divergence reproduces 2 bad input
  gate             0 PASS                 1 FAIL or INCOMPLETE    2 bad usage
  minimize         0 done                 1 a deletion failed     2 bad input
  subject-check    0 agrees with core     1 divergence or fault   2 bad spec
  report merge     0 pass                 1 divergence or failure 2 refused
  neff info        0 read                                         2 refused
  141 (every command but gate): stdout was closed by its reader; no message";
