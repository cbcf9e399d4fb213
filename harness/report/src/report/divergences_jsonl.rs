//! `divergences.jsonl`: one [`DivergenceRecord`] per line, read back streaming and bounded
//! ([`super::shard::read_divergences`]).

use super::model::DivergenceRecord;

pub const FILE: &str = "divergences.jsonl";

pub fn render(records: &[DivergenceRecord]) -> String {
    let mut s = String::new();
    for r in records {
        // A record is strings and integers only: serialising cannot fail.
        s.push_str(&serde_json::to_string(r).unwrap_or_default());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::OriginRecord;
    use crate::report::shard::read_divergences as read;

    fn record(origin: OriginRecord) -> DivergenceRecord {
        DivergenceRecord {
            number: 1,
            target: "vectors".into(),
            class: crate::judge::Class::VectorMismatch,
            signature: crate::judge::Signature {
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

    /// A folder holding `text` as its divergences file (removed with the process's temp files).
    fn dir_with(text: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "tpb-jsonl-{}-{}-{}",
            std::process::id(),
            text.len(),
            crate::fuzz_entry::fnv1a64(text.as_bytes())
        ));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(FILE), text).unwrap();
        d
    }

    /// The refusal of reading `text` with at most `max` records.
    fn refusal(text: &str, max: u64) -> String {
        read(&dir_with(text), max).unwrap_err().to_string()
    }

    /// A record's class is typed: every class goes out as its name and comes back as itself,
    /// and a name that is no class is refused when read (not carried as free text).
    #[test]
    fn every_class_round_trips_and_an_unknown_class_is_refused() {
        use crate::judge::Class;
        let recs: Vec<DivergenceRecord> = Class::ALL
            .into_iter()
            .map(|class| DivergenceRecord {
                class,
                ..record(OriginRecord::Corpus { corpus: "c".into() })
            })
            .collect();
        assert!(Class::ALL.contains(&Class::VectorMismatch));
        let text = render(&recs);
        for (line, c) in text.lines().zip(Class::ALL) {
            assert!(
                line.contains(&format!("\"class\":\"{}\"", c.name())),
                "{line}"
            );
        }
        assert_eq!(read(&dir_with(&text), 99).unwrap(), recs);
        for bad in ["Bogus", "overaccept", ""] {
            // The first record's class (the first of `Class::ALL`).
            let forged = text.replacen("\"class\":\"Crash\"", &format!("\"class\":\"{bad}\""), 1);
            let m = refusal(&forged, 99);
            assert!(
                m.contains(&format!("{FILE}:1: ")) && m.contains("class"),
                "{m}"
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
        assert_eq!(read(&dir_with(&text), 3).unwrap(), recs);
        // The documented wire form of an origin.
        assert!(text.contains(r#""origin":{"vector":"v.txt","line":7,"expected":"valid"}"#));
        let m = refusal(&text, 2);
        assert!(m.ends_with("has more than the 2 divergence(s) run.json says (line 3)"));
        let line1 = format!("{FILE}:1: ");
        let extra = text.replacen("\"count\":2", "\"count\":2,\"forged\":true", 1);
        assert!(refusal(&extra, 3).contains(&line1));
        let twice = text.replacen("\"count\":2", "\"count\":2,\"count\":1", 1);
        let m = refusal(&twice, 3);
        assert!(m.contains(&line1) && m.contains("duplicate"), "{m}");
        let missing = text.replacen("\"arch\":\"v3\",", "", 1);
        assert!(refusal(&missing, 3).contains(&line1));
        // A cohort (judge's own type) round-trips, and one with a field it does not name is
        // refused like the record's own fields.
        let cohort = crate::judge::cohort::Cohort {
            members: vec!["core".into(), "oracle".into()],
            answer: "valid".into(),
        };
        let mut with = recs[..1].to_vec();
        with[0].cohorts = vec![cohort];
        let text = render(&with);
        assert_eq!(read(&dir_with(&text), 1).unwrap(), with);
        let forged = text.replacen("\"answer\":\"valid\"", "\"answer\":\"valid\",\"x\":1", 1);
        assert!(refusal(&forged, 1).contains(&line1));
    }
}
