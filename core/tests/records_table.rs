//! The instruction table's validator (`core/build_records.rs`, run by `build.rs`): the shipped
//! table passes, and each kind of slip is refused naming its line.

#[path = "../build_records.rs"]
#[allow(dead_code)]
mod build_records;

use build_records::{parse, parse_roster, Kind, RosterRow};

const RECORDS_TSV: &str = include_str!("../../isa/records.tsv");
const OPCODES_TSV: &str = include_str!("../../isa/opcodes.tsv");

fn roster() -> Vec<RosterRow> {
    parse_roster(OPCODES_TSV).expect("isa/opcodes.tsv")
}

/// A small table: one sync record 0xDE and the skeleton, `body` appended as 0xDE's rows.
fn table(record: &str, body: &str) -> String {
    format!(
        "# t\n{record}\n\
         field\tsync\t0x00\t1\topcode\tconstant\topcode\ts\n\
         field\tsync\t0x01\t1\tinst_word_len\tconstant\t0x10\ts\n\
         field\tsync\t0x02\t10\treserved\treserved\t-\ts\n\
         {body}"
    )
}

const DE: &str = "record\t0xDE\tTensorCompletion\tTensorCompletion\tv2\t64\tsync\t-\ts";
const DE_BODY: &str = "field\t0xDE\t0x0C\t4\thandle\tinteger\t-\ts\n\
                       field\t0xDE\t0x10\t48\treserved\treserved\t-\ts\n";

/// The refusal of `text`: (line, reason).
fn refusal(text: &str) -> (usize, String) {
    let e = parse(text, &roster()).expect_err("must be refused");
    (e.line, e.reason)
}

#[test]
fn the_shipped_table_passes_and_tiles_every_record() {
    let recs = parse(RECORDS_TSV, &roster()).expect("isa/records.tsv");
    assert!(recs.len() >= 11);
    for r in &recs {
        assert_eq!(r.fields[0].kind, Kind::Opcode);
        assert_eq!(r.fields.iter().map(|f| f.width).sum::<usize>(), r.length);
    }
}

#[test]
fn the_small_table_passes() {
    let recs = parse(&table(DE, DE_BODY), &roster()).expect("valid");
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].fields.len(), 5);
}

/// 0xDE's rows after `handle`, and what is refused on line 7.
#[test]
fn overlaps_gaps_and_fields_past_the_length_name_their_line() {
    let cases = [
        ("0x0F\t49", "overlaps the field before, which ends at 0x10"),
        ("0x11\t47", "gap 0x10..0x11"),
        ("0x10\t49", "past the record's 64 bytes"),
    ];
    for (rest, want) in cases {
        let body = format!(
            "field\t0xDE\t0x0C\t4\thandle\tinteger\t-\ts\nfield\t0xDE\t{rest}\treserved\treserved\t-\ts\n"
        );
        let (line, reason) = refusal(&table(DE, &body));
        assert_eq!(line, 7, "{rest}");
        assert!(reason.contains(want), "{rest}: {reason}");
    }
}

/// [`roster`] with 0xDE's `length` column set to `length`.
fn roster_with_de_length(length: usize) -> Vec<RosterRow> {
    let mut r = roster();
    for row in r.iter_mut().filter(|row| row.0 == 0xDE) {
        row.3 = length;
    }
    r
}

#[test]
fn the_length_is_64_or_128_and_the_fields_fill_it() {
    let long = DE.replace("\t64\t", "\t128\t");
    let long_roster = roster_with_de_length(128);
    let e = parse(&table(&long, DE_BODY), &long_roster).expect_err("short of 128");
    assert_eq!(e.line, 2);
    assert!(e.reason.contains("the record is 128 bytes"), "{}", e.reason);
    let body128 = "field\t0xDE\t0x0C\t4\thandle\tinteger\t-\ts\n\
                   field\t0xDE\t0x10\t112\treserved\treserved\t-\ts\n";
    assert!(parse(&table(&long, body128), &long_roster).is_ok());
    let (line, reason) = refusal(&table(&DE.replace("\t64\t", "\t96\t"), DE_BODY));
    assert_eq!(line, 2);
    assert!(reason.contains("64 or 128, got 96"), "{reason}");
}

#[test]
fn a_record_length_must_equal_the_opcode_length_column() {
    let long = DE.replace("\t64\t", "\t128\t");
    let body128 = "field\t0xDE\t0x0C\t4\thandle\tinteger\t-\ts\n\
                   field\t0xDE\t0x10\t112\treserved\treserved\t-\ts\n";
    let (line, reason) = refusal(&table(&long, body128));
    assert_eq!(line, 2);
    assert!(reason.contains("isa/opcodes.tsv gives 64"), "{reason}");
    let e = parse(&table(DE, DE_BODY), &roster_with_de_length(128)).expect_err("64 vs 128");
    assert!(
        e.reason.contains("isa/opcodes.tsv gives 128"),
        "{}",
        e.reason
    );
}

#[test]
fn the_roster_length_column_is_64_or_128_and_0xd4_is_128() {
    let rows = roster();
    let length = |op: u8| rows.iter().find(|r| r.0 == op).map(|r| r.3);
    // FACTS §9 [K]: PseudoDmaDirect2d is 128 bytes; the 0xD9/0xDA records are 64 each (DL-12).
    assert_eq!(length(0xD4), Some(128));
    assert_eq!(
        (length(0xD9), length(0xDA), length(0x01)),
        (Some(64), Some(64), Some(64))
    );
    let bad = OPCODES_TSV.replace(
        "0x01\tLDWEIGHTS\t1\t1\t1\t1\t64",
        "0x01\tLDWEIGHTS\t1\t1\t1\t1\t96",
    );
    assert_ne!(bad, OPCODES_TSV);
    let e = parse_roster(&bad).expect_err("96");
    assert!(e.reason.contains("64 or 128"), "{}", e.reason);
}

#[test]
fn a_short_record_names_its_record_line() {
    let body = "field\t0xDE\t0x0C\t4\thandle\tinteger\t-\ts\n";
    let (line, reason) = refusal(&table(DE, body));
    assert_eq!(line, 2);
    assert!(reason.contains("fields end at 0x10"), "{reason}");
}

#[test]
fn unknown_kinds_and_domains_name_their_line() {
    let bad = [
        (
            "\tinteger\t-\t",
            "\tpointer\t-\t",
            "unknown kind \"pointer\"",
        ),
        (
            "\tinteger\t-\t",
            "\tenum\tcolour\t",
            "unknown enum domain \"colour\"",
        ),
        ("\tinteger\t-\t", "\tinteger\tscratchy\t", "takes no domain"),
        (
            "\tinteger\t-\t",
            "\tap\t-\t",
            "width 4 is not a width of kind ap",
        ),
        ("\tinteger\t-\t", "\tconstant\t0x1\t", "0xNN"),
    ];
    for (from, to, want) in bad {
        let body = DE_BODY.replacen(from, to, 1);
        let (line, reason) = refusal(&table(DE, &body));
        assert_eq!(line, 6, "{to}");
        assert!(reason.contains(want), "{to}: {reason}");
    }
}

#[test]
fn an_opcode_missing_from_the_roster_names_its_line() {
    // 0x00 is in no generation's opcode enum (isa/opcodes.tsv).
    let rec = DE.replace("0xDE", "0x00");
    let (line, reason) = refusal(&table(&rec, &DE_BODY.replace("0xDE", "0x00")));
    assert_eq!(line, 2);
    assert!(reason.contains("not in isa/opcodes.tsv"), "{reason}");
    // 0xBE is not a v2 opcode, so it cannot be emitted from v2.
    let rec = DE.replace("0xDE", "0xBE");
    let (line, reason) = refusal(&table(&rec, &DE_BODY.replace("0xDE", "0xBE")));
    assert_eq!(line, 2);
    assert!(reason.contains("not a v2 opcode"), "{reason}");
}

#[test]
fn record_rows_are_checked_column_by_column() {
    let bad = [
        ("\tv2\t", "\tv9\t", "since must be v2..v5"),
        ("\tsync\t-\t", "\tnone\t-\t", "unknown skeleton"),
        ("\tsync\t-\t", "\tsync\tboth\t", "unknown validator"),
        (
            "TensorCompletion\tTensorCompletion",
            "tensor\tTensorCompletion",
            "CamelCase",
        ),
    ];
    for (from, to, want) in bad {
        let (line, reason) = refusal(&table(&DE.replacen(from, to, 1), DE_BODY));
        assert_eq!(line, 2, "{to}");
        assert!(reason.contains(want), "{to}: {reason}");
    }
    let twice = format!("{DE}\n{DE}");
    let (line, reason) = refusal(&table(&twice, DE_BODY));
    assert_eq!(line, 3);
    assert!(reason.contains("already a record on line 2"), "{reason}");
}

#[test]
fn field_rows_are_checked() {
    let cases = [
        // a field of an opcode with no record row
        (DE_BODY.replacen("0xDE", "0xDC", 1), 6, "no record row"),
        // a named field of kind reserved, a reserved field with another name
        (
            DE_BODY.replacen("handle\tinteger", "handle\treserved", 1),
            6,
            "`reserved`",
        ),
        (DE_BODY.replacen("handle", "reserved", 1), 6, "`reserved`"),
        // a second opcode byte
        (
            DE_BODY.replacen("4\thandle\tinteger\t-", "1\thandle\tconstant\topcode", 1),
            6,
            "byte 0",
        ),
        // a name used twice
        (
            "field\t0xDE\t0x0C\t4\thandle\tinteger\t-\ts\n\
             field\t0xDE\t0x10\t4\thandle\tinteger\t-\ts\n\
             field\t0xDE\t0x14\t44\treserved\treserved\t-\ts\n"
                .to_string(),
            7,
            "names handle twice",
        ),
        (DE_BODY.replacen("\ts\n", "\t\n", 1), 6, "needs a source"),
        (DE_BODY.replacen("\ts\n", "\n", 1), 6, "8 columns"),
        ("row\tx\n".to_string(), 6, "unknown row kind"),
    ];
    for (body, want_line, want) in cases {
        let (line, reason) = refusal(&table(DE, &body));
        assert_eq!(line, want_line, "{body}");
        assert!(reason.contains(want), "{body}: {reason}");
    }
}
