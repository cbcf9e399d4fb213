//! Runs the hand-derived vector files in `corpus/vectors/` (format: its README.md).

use std::path::PathBuf;
use tpb_core::insn::decode;
use tpb_core::validate::{validate_header, validate_payload};
use tpb_core::Bundle;

fn vectors(name: &str) -> Vec<(usize, Vec<String>)> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "corpus", "vectors", name]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let body = line.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                None
            } else {
                Some((i + 1, body.split(' ').map(str::to_string).collect()))
            }
        })
        .collect()
}

#[test]
fn custom_op_vectors() {
    let v = vectors("custom_op.txt");
    assert!(v.len() >= 60, "only {} vectors", v.len());
    let mut failures = Vec::new();
    for (line, cols) in &v {
        assert_eq!(cols.len(), 4, "line {line}: {cols:?}");
        let b = Bundle::from_hex(&cols[0]).unwrap_or_else(|| panic!("line {line}: bad hex"));
        let r = match cols[1].as_str() {
            "header" => validate_header(&b),
            "payload" => validate_payload(&b),
            other => panic!("line {line}: validator {other}"),
        };
        let got = match r {
            Ok(()) => ("valid".to_string(), "-".to_string()),
            Err(e) => ("invalid".to_string(), e.predicate().name().to_string()),
        };
        if got != (cols[2].clone(), cols[3].clone()) {
            failures.push(format!(
                "line {line}: expected {} {}, got {} {}",
                cols[2], cols[3], got.0, got.1
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn decode_vectors() {
    let v = vectors("decode.txt");
    assert!(v.len() >= 60, "only {} vectors", v.len());
    let mut failures = Vec::new();
    let mut ok_mnemonics = std::collections::BTreeSet::new();
    for (line, cols) in &v {
        assert_eq!(cols.len(), 3, "line {line}: {cols:?}");
        let b = Bundle::from_hex(&cols[0]).unwrap_or_else(|| panic!("line {line}: bad hex"));
        let got = match decode(&b) {
            Ok(insn) => {
                // every ok vector must also re-encode to itself (SPEC §5.1)
                if insn.encode() != Ok(b) {
                    failures.push(format!("line {line}: encode(decode(b)) != b"));
                }
                ("ok".to_string(), insn.mnemonic().to_string())
            }
            Err(e) if e.field() == "reserved" => {
                ("err".to_string(), format!("reserved@0x{:02x}", e.offset()))
            }
            Err(e) => ("err".to_string(), e.field().to_string()),
        };
        if got.0 == "ok" {
            ok_mnemonics.insert(got.1.clone());
        }
        if got != (cols[1].clone(), cols[2].clone()) {
            failures.push(format!(
                "line {line}: expected {} {}, got {} {}",
                cols[1], cols[2], got.0, got.1
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(ok_mnemonics.len(), 11, "{ok_mnemonics:?}");
}
