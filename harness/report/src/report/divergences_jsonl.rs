//! `divergences.jsonl`: one [`DivergenceRecord`] per line, written with
//! serde ([`render`]) and read back with serde, streaming and bounded
//! ([`read`]).

use super::merge_error::MAX_BYTES;
use super::model::DivergenceRecord;
use std::io::{BufRead, BufReader, Read};

/// File name inside a report folder.
pub const FILE: &str = "divergences.jsonl";

/// The file's text.
pub fn render(records: &[DivergenceRecord]) -> String {
    let mut s = String::new();
    for r in records {
        // A record is strings and integers only: serialising cannot fail.
        s.push_str(&serde_json::to_string(r).unwrap_or_default());
        s.push('\n');
    }
    s
}

/// Why a line cannot be read.
#[derive(Debug)]
pub enum LineError {
    Io(std::io::Error),
    /// A line over [`MAX_BYTES`] (1-based line).
    TooLong(usize),
    /// More records than the caller allows (1-based line of the first extra).
    TooMany(usize),
    /// Not UTF-8 or not a record (1-based line, message).
    Bad(usize, String),
}

/// Reads the records of `file` (an open regular file at `path`), streaming;
/// blank lines skipped; stops at the first record beyond `max`.
pub fn read(file: std::fs::File, max: u64) -> Result<Vec<DivergenceRecord>, LineError> {
    let mut r = BufReader::new(file);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        let n = r
            .by_ref()
            .take(MAX_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(LineError::Io)?;
        if n == 0 {
            break;
        }
        if n as u64 > MAX_BYTES {
            return Err(LineError::TooLong(line));
        }
        let text = std::str::from_utf8(&buf).map_err(|e| LineError::Bad(line, e.to_string()))?;
        if text.trim().is_empty() {
            continue;
        }
        if out.len() as u64 >= max {
            return Err(LineError::TooMany(line));
        }
        crate::strict_json::parse(text).map_err(|e| LineError::Bad(line, e.to_string()))?;
        let rec: DivergenceRecord =
            serde_json::from_str(text).map_err(|e| LineError::Bad(line, e.to_string()))?;
        out.push(rec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{OriginRecord, SignatureRecord};

    fn record(origin: OriginRecord) -> DivergenceRecord {
        DivergenceRecord {
            number: 1,
            target: "vectors".into(),
            class: crate::findings::Class::VectorMismatch,
            signature: SignatureRecord {
                key: "header".into(),
                left: "valid".into(),
                right: "valid_opcode".into(),
            },
            count: 2,
            origin,
            arch: "v3".into(),
            input: "85".into(),
            minimized: "85".into(),
            replay: "r".into(),
            replay_file: "rf".into(),
            file: "divergences/001-validate_header.bin".into(),
            replay_target: Some("validate_header".into()),
            replay_subjects: Vec::new(),
            left_name: "core".into(),
            right_name: "oracle".into(),
            left: "valid".into(),
            right: "valid_opcode".into(),
            answers: crate::judge::Answers::of(
                crate::judge::Answer::Valid,
                crate::judge::Answer::Rejected {
                    reason: "valid_opcode".into(),
                    offset: None,
                },
            ),
            left_dump: "a\n".into(),
            right_dump: "b\n".into(),
            shards: Vec::new(),
            cohorts: Vec::new(),
            caused_by: None,
            subject_blame: None,
        }
    }

    fn file_with(text: &str) -> std::fs::File {
        let p =
            std::env::temp_dir().join(format!("tpb-jsonl-{}-{}", std::process::id(), text.len()));
        std::fs::write(&p, text).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        f
    }

    /// A record's class is typed: every class goes out as its name and comes back as itself,
    /// and a name that is no class is refused when read (not carried as free text).
    #[test]
    fn every_class_round_trips_and_an_unknown_class_is_refused() {
        use crate::findings::Class;
        let recs: Vec<DivergenceRecord> = Class::all()
            .map(|class| DivergenceRecord {
                class,
                ..record(OriginRecord::Corpus { corpus: "c".into() })
            })
            .collect();
        assert_eq!(recs.len(), crate::judge::Class::ALL.len() + 1);
        let text = render(&recs);
        for (line, c) in text.lines().zip(Class::all()) {
            assert!(
                line.contains(&format!("\"class\":\"{}\"", c.name())),
                "{line}"
            );
        }
        assert_eq!(read(file_with(&text), 99).unwrap(), recs);
        for bad in ["Bogus", "overaccept", ""] {
            let forged = text.replacen(
                "\"class\":\"OverAccept\"",
                &format!("\"class\":\"{bad}\""),
                1,
            );
            assert!(
                matches!(read(file_with(&forged), 99), Err(LineError::Bad(1, m)) if m.contains("class")),
                "{bad}"
            );
        }
    }

    #[test]
    fn records_round_trip_and_unknown_fields_are_refused() {
        let recs = vec![
            record(OriginRecord::Corpus {
                corpus: "corpus/x/1".into(),
            }),
            record(OriginRecord::Vector {
                vector: "v.txt".into(),
                line: 7,
                expected: "valid".into(),
            }),
            record(OriginRecord::Generated {
                generated: 9,
                kind: "near-valid".into(),
            }),
        ];
        let text = render(&recs);
        assert_eq!(read(file_with(&text), 3).unwrap(), recs);
        // The documented wire form of an origin.
        assert!(text.contains(r#""origin":{"vector":"v.txt","line":7,"expected":"valid"}"#));
        assert!(matches!(
            read(file_with(&text), 2),
            Err(LineError::TooMany(3))
        ));
        let extra = text.replacen("\"count\":2", "\"count\":2,\"forged\":true", 1);
        assert!(matches!(
            read(file_with(&extra), 3),
            Err(LineError::Bad(1, _))
        ));
        let twice = text.replacen("\"count\":2", "\"count\":2,\"count\":1", 1);
        assert!(
            matches!(read(file_with(&twice), 3), Err(LineError::Bad(1, m)) if m.contains("duplicate"))
        );
        let missing = text.replacen("\"arch\":\"v3\",", "", 1);
        assert!(matches!(
            read(file_with(&missing), 3),
            Err(LineError::Bad(1, _))
        ));
    }
}
