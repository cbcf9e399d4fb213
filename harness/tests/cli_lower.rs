//! `tpbconform lower`: the example lowers to records `decode` accepts and to
//! side-tables naming every group and pair; bad input exits 2 with the JSON path.

mod common;

use common::{run, text};
use std::path::PathBuf;

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/lowering")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn example_lowers_to_decodable_records_and_named_side_tables() {
    let o = run(&["lower", &example("collectives.json")], b"");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let hex = text(&o.stdout);
    let records: Vec<&str> = hex.lines().filter(|l| !l.starts_with('#')).collect();
    // 1+1+1+2+2+1+1+1+2 records (SPEC §5.4 table).
    assert_eq!(records.len(), 12, "{hex}");
    for needle in [
        "# replica_groups#0: [[0, 1, 2, 3], [4, 5, 6, 7]]",
        "# replica_groups#1: [[0, 2, 4, 6], [1, 3, 5, 7]]",
        "# replica_groups#2: [[0, 1, 2, 3, 4, 5, 6, 7]]",
        "# source_target_pairs#0: [(0, 1), (1, 2), (2, 3), (3, 0)]",
        "# attributes#0: kind 2 send peer 1",
        "# attributes#3: kind 2 recv peer 1",
        "# [1] AllGather: side replica_groups#0",
        "# [7] local SendRecv: side none",
    ] {
        assert!(hex.contains(needle), "missing {needle:?} in\n{hex}");
    }
    assert!(
        hex.starts_with("# generation v3 (decode --arch v3)\n"),
        "{hex}"
    );
    let d = run(&["decode", "--arch", "v3", "--hex"], hex.as_bytes());
    assert_eq!(d.status.code(), Some(0), "{}", text(&d.stdout));
    // Under v2 the 0xBF (record 9, from v3 on: S003 §5) is not an opcode.
    let v2 = run(&["decode", "--hex"], hex.as_bytes());
    assert_eq!(v2.status.code(), Some(1));
    assert!(text(&v2.stdout).contains(r#"{"index":9,"opcode":"0xBF""#));
    let decoded = text(&d.stdout);
    assert_eq!(decoded.lines().count(), 12);
    assert!(decoded.contains("\"mnemonic\":\"CollectiveComputeSecondary\""));
    assert!(decoded.contains("\"kind\":\"AllToAllV\""));
    assert!(!decoded.contains("\"error\""));

    let j = run(
        &["lower", "--format", "jsonl", &example("collectives.json")],
        b"",
    );
    assert_eq!(j.status.code(), Some(0));
    let lines: Vec<String> = text(&j.stdout).lines().map(str::to_string).collect();
    assert_eq!(lines.len(), 13);
    let same: Vec<String> = decoded.lines().map(str::to_string).collect();
    for (a, b) in lines.iter().zip(&same) {
        let mut a: serde_json::Value = serde_json::from_str(a).unwrap();
        a.as_object_mut().unwrap().remove("instruction");
        assert_eq!(a, serde_json::from_str::<serde_json::Value>(b).unwrap());
    }
    let last: serde_json::Value = serde_json::from_str(&lines[12]).unwrap();
    assert_eq!(
        last["side_tables"]["source_target_pairs"][0]["pairs"][3],
        serde_json::json!([3, 0])
    );

    let m = run(
        &["lower", "--format", "json", "-"],
        &std::fs::read(example("collectives.json")).unwrap(),
    );
    assert_eq!(m.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&m.stdout).unwrap();
    assert_eq!(v["instructions"].as_array().unwrap().len(), 9);
    assert_eq!(
        v["instructions"][3]["side"][0],
        serde_json::json!({"table": "source_target_pairs", "id": 0})
    );
}

fn bad(doc: &str, path: &str) {
    let o = run(&["lower", "-"], doc.as_bytes());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{doc}: {err}");
    assert!(o.stdout.is_empty(), "printed on error: {}", text(&o.stdout));
    assert!(
        err.contains(&format!("<stdin>: {path}: ")),
        "{doc}: expected {path} in {err}"
    );
}

const AP: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f";

fn coll(extra: &str) -> String {
    format!(
        r#"{{"generation":"v2","instructions":[{{"op":"collective","kind":"AllReduce","cce_op":"add","dtype":"float32","src":"{AP}","replica_groups":[[0,1]]{extra}}}]}}"#
    )
}

#[test]
fn bad_input_names_the_json_path() {
    bad(r#"{"generation":"v9","instructions":[]}"#, "$.generation");
    bad(r#"{"generation":"v2"}"#, "$.instructions");
    bad(r#"{"generation":"v2","instructions":[],"x":1}"#, "$.x");
    bad(
        r#"{"generation":"v2","instructions":[{"op":"teleport"}]}"#,
        "$.instructions[0].op",
    );
    bad(&coll(r#","colour":1"#), "$.instructions[0].colour");
    bad(&coll(r#","cc_dim":2"#), "$.instructions[0].cc_dim");
    bad(
        &coll(r#","channel_id":70000"#),
        "$.instructions[0].channel_id",
    );
    bad(&coll(r#","src2":"00""#), "$.instructions[0].src2");
    bad(
        &coll(r#","sync":{"wait_mode":8}"#),
        "$.instructions[0].sync.wait_mode",
    );
    bad(
        &coll(r#","sync":{"wait_mode":256}"#),
        "$.instructions[0].sync.wait_mode",
    );
    bad(
        &coll(r#","source_target_pairs":[[0,1]]"#),
        "$.instructions[0].source_target_pairs",
    );
    bad(
        &coll("").replace(
            r#""replica_groups":[[0,1]]"#,
            r#""replica_groups":[[0,1],[2,1]]"#,
        ),
        "$.instructions[0].replica_groups[1][1]",
    );
    bad(
        &coll("").replace(
            r#""replica_groups":[[0,1]]"#,
            r#""replica_groups":[[0,"one"]]"#,
        ),
        "$.instructions[0].replica_groups[0][1]",
    );
    bad(
        &coll("").replace("float32", "float99"),
        "$.instructions[0].dtype",
    );
    bad(
        &coll("").replace("\"add\"", "\"max\""),
        "$.instructions[0].cce_op",
    );
    bad(
        &coll("").replace("AllReduce", "SendRecv"),
        "$.instructions[0].kind",
    );
    let o = run(&["lower", "-"], b"{not json");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("line 1 column"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["lower", &example("bad_duplicate_rank.json")], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("$.instructions[1].replica_groups[1][0]: duplicate_rank"));
    let o = run(&["lower", env!("CARGO_MANIFEST_DIR")], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("not a regular file"));
}

/// Text that is not UTF-8 is named by line, column and byte, as a JSON error is (it said only
/// "stream did not contain valid UTF-8").
#[test]
fn text_that_is_not_utf8_is_named_by_line_and_column() {
    let o = run(
        &["lower", "-"],
        b"{\"generation\":\n \"v3\xff\", \"instructions\": []}",
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr)
            .contains("<stdin>: line 2 column 5: not UTF-8 (byte 0xFF at byte offset 19)"),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
}
