//! The `tpb_verdict` ids of ABI version 2 (include/tpb_subject.h) and the
//! batch framing (docs/subject-protocol.md): `0` = valid, then one id per
//! SPEC §3 / §4 predicate, numbered in [`Predicate::KNOWN`] order (the
//! header chain §3 #1..#6, then the payload-only §4 #4..#5; harness
//! `Predicate::KNOWN` equals core's `Predicate::ALL`, tested).
//!
//! One source: the header's block between `BEGIN GENERATED` and `END
//! GENERATED` is [`header_block`] of the SPEC §3 / §4 tables;
//! `harness/tests/verdict_ids.rs` fails when the header drifts, and
//! `TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids` rewrites it.

use crate::subjects::{Predicate, Verdict};

/// `TPB_VERDICT_VALID`.
pub const VALID: u16 = 0;

/// The id of the predicate named `name` (bytes, as a C string), or `None`.
pub fn id_of_name(name: &[u8]) -> Option<u16> {
    Predicate::KNOWN
        .iter()
        .position(|k| k.name().as_bytes() == name)
        .and_then(|i| u16::try_from(i + 1).ok())
}

/// The verdict of id `id`: valid, a known predicate, or an `Unknown` naming
/// the id (never equal to core's answer, so a divergence).
pub fn verdict_of(id: u16) -> Verdict {
    if id == VALID {
        return None;
    }
    Some(
        Predicate::KNOWN
            .get(usize::from(id) - 1)
            .cloned()
            .unwrap_or_else(|| Predicate::Unknown(format!("tpb_verdict id {id}"))),
    )
}

/// One predicate row of SPEC §3 or §4: its name and its `§n #k` places.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecPredicate {
    /// The predicate's SPEC name.
    pub name: String,
    /// E.g. `["§3 #1", "§4 #1"]`.
    pub places: Vec<String>,
}

/// Reads the predicate tables of SPEC §3 and §4 (rows `| k | \`name\` | …`)
/// from SPEC.md's text, in chain order, a name met again adding its place.
pub fn spec_predicates(spec_md: &str) -> Result<Vec<SpecPredicate>, String> {
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
pub fn header_block(preds: &[SpecPredicate]) -> String {
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
pub fn block_in(header: &str) -> Option<&str> {
    let b = header.find("/* BEGIN GENERATED verdict ids")?;
    let end_marker = "/* END GENERATED verdict ids */\n";
    let e = header[b..].find(end_marker)? + b + end_marker.len();
    Some(&header[b..e])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_strangers_stay_unknown() {
        for (i, p) in Predicate::KNOWN.iter().enumerate() {
            let id = u16::try_from(i + 1).expect("small");
            assert_eq!(verdict_of(id), Some(p.clone()));
            assert_eq!(id_of_name(p.name().as_bytes()), Some(id));
        }
        assert_eq!(verdict_of(0), None);
        assert!(verdict_of(99).is_some_and(|p| p.is_unknown()));
        assert_eq!(id_of_name(b"valid_opcodex"), None);
    }
}
