//! The `tpb_verdict` block of include/tpb_subject.h has one source: the
//! SPEC.md §3 / §4 predicate tables, which must also be core's and the
//! harness's predicate list in the same order. This test fails when the
//! header block drifts from what [`header_block`] makes of
//! SPEC.md; `TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids`
//! rewrites the block (and only the block) in place.

use std::path::PathBuf;
use tpbconform::subjects::Predicate;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

#[test]
fn spec_tables_core_and_harness_list_the_same_predicates_in_order() {
    let spec = std::fs::read_to_string(root().join("SPEC.md")).expect("SPEC.md");
    let from_spec: Vec<String> = spec_predicates(&spec)
        .expect("tables")
        .into_iter()
        .map(|p| p.name)
        .collect();
    let core: Vec<String> = tpb_core::validate::Predicate::ALL
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    let harness: Vec<String> = Predicate::KNOWN
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    assert_eq!(from_spec, core, "SPEC §3/§4 tables vs core Predicate::ALL");
    assert_eq!(harness, core, "harness Predicate::KNOWN vs core");
}

#[test]
fn the_header_block_is_generated_from_the_spec() {
    let spec = std::fs::read_to_string(root().join("SPEC.md")).expect("SPEC.md");
    let want = header_block(&spec_predicates(&spec).expect("tables"));
    let path = root().join("include/tpb_subject.h");
    let header = std::fs::read_to_string(&path).expect("header");
    let have = block_in(&header).expect("BEGIN/END GENERATED markers in tpb_subject.h");
    if have != want && std::env::var_os("TPB_BLESS").is_some() {
        let fixed = header.replacen(have, &want, 1);
        std::fs::write(&path, fixed).expect("rewrite the header");
        return;
    }
    assert_eq!(
        have, want,
        "include/tpb_subject.h verdict block drifted from SPEC.md; regenerate with \
         TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids"
    );
}

#[test]
fn the_block_holds_every_predicate_with_its_id() {
    // Independent of the renderer: each predicate's C name and id appear.
    let header = std::fs::read_to_string(root().join("include/tpb_subject.h")).expect("header");
    let block = block_in(&header).expect("markers");
    assert!(block.contains("TPB_VERDICT_VALID = 0,"));
    for (i, p) in Predicate::KNOWN.iter().enumerate() {
        let row = format!("TPB_PRED_{} = {}", p.name().to_ascii_uppercase(), i + 1);
        assert!(block.contains(&row), "missing `{row}`");
    }
}

/// One predicate row of SPEC §3 or §4: its name and its `§n #k` places.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SpecPredicate {
    /// The predicate's SPEC name.
    name: String,
    /// E.g. `["§3 #1", "§4 #1"]`.
    places: Vec<String>,
}

/// Reads the predicate tables of SPEC §3 and §4 (rows `| k | \`name\` | …`)
/// from SPEC.md's text, in chain order, a name met again adding its place.
fn spec_predicates(spec_md: &str) -> Result<Vec<SpecPredicate>, String> {
    let mut out: Vec<SpecPredicate> = Vec::new();
    let mut section: Option<&str> = None;
    for line in spec_md.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = if h.starts_with("3. ") {
                Some("§3")
            } else if h.starts_with("4. ") {
                Some("§4")
            } else {
                None
            };
            continue;
        }
        let Some(sec) = section else { continue };
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | # | predicate | rule | … : cells[1] = number, cells[2] = `name`.
        if cells.len() < 4 || !line.starts_with('|') {
            continue;
        }
        let Ok(k) = cells[1].parse::<u32>() else {
            continue;
        };
        let Some(name) = cells[2].strip_prefix('`').and_then(|s| s.strip_suffix('`')) else {
            continue;
        };
        let place = format!("{sec} #{k}");
        match out.iter_mut().find(|p| p.name == name) {
            Some(p) => p.places.push(place),
            None => out.push(SpecPredicate {
                name: name.to_string(),
                places: vec![place],
            }),
        }
    }
    if out.is_empty() {
        return Err("SPEC.md has no §3 / §4 predicate table rows".into());
    }
    Ok(out)
}

/// `custom_op_header_reserved_zero` → `TPB_PRED_CUSTOM_OP_HEADER_RESERVED_ZERO`.
fn c_name(name: &str) -> String {
    format!("TPB_PRED_{}", name.to_ascii_uppercase())
}

/// The generated block of include/tpb_subject.h (from its `BEGIN` line to
/// its `END` line, both included, newline-terminated) for `preds`.
fn header_block(preds: &[SpecPredicate]) -> String {
    let mut s = String::from(
        "/* BEGIN GENERATED verdict ids: SPEC §3 / §4 predicate chain, do not edit.\n \
         * Source: the SPEC.md §3 / §4 tables (harness/subjects/src/external/verdict.rs);\n \
         * regenerate: TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids */\n\
         /* One id per validator answer: TPB_VERDICT_VALID, or the first failing\n \
         * predicate. The batch validators write one of these per bundle. */\n\
         typedef enum tpb_verdict {\n    TPB_VERDICT_VALID = 0,\n",
    );
    let rows: Vec<String> = preds
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} = {}", c_name(&p.name), i + 1))
        .collect();
    let width = rows.iter().map(String::len).max().unwrap_or(0) + 1;
    for (i, (row, p)) in rows.iter().zip(preds).enumerate() {
        let comma = if i + 1 < rows.len() { "," } else { "" };
        let cell = format!("{row}{comma}");
        s.push_str(&format!(
            "    {cell:<width$} /* SPEC {} */\n",
            p.places.join(" / ")
        ));
    }
    s.push_str("} tpb_verdict;\n/* END GENERATED verdict ids */\n");
    s
}

/// The generated block as it stands in a header's text, if both markers are
/// there.
fn block_in(header: &str) -> Option<&str> {
    let b = header.find("/* BEGIN GENERATED verdict ids")?;
    let end_marker = "/* END GENERATED verdict ids */\n";
    let e = header[b..].find(end_marker)? + b + end_marker.len();
    Some(&header[b..e])
}
