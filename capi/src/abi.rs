//! The numbers of `include/tpb_subject.h` this library answers with: the ABI
//! version, the `tpb_status` codes, the capability and LUT-table bits and
//! the `tpb_verdict` ids. The unit tests read the header and fail when a
//! number here and there differ.

use std::ffi::c_int;
use tpb_core::validate::Predicate;
use tpb_subjects::external::ffi::cap_bit;
use tpb_subjects::subjects::{Capability, LutTable};

/// What `tpb_subject_abi_version()` returns: the header's
/// `TPB_SUBJECT_ABI_VERSION` (a harness refuses any other value).
///
/// Every version-2 function is exported whatever this says (the header
/// makes them optional, so a version-1 harness ignores them), but the
/// stream and lowering capability bits are declared only from version 2
/// on: a version-1 harness refuses a bit it does not know.
pub const ABI_VERSION: u32 = 2;

/// `tpb_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// `TPB_OK`.
    Ok,
    /// `TPB_UNSUPPORTED`.
    Unsupported,
    /// `TPB_BUFFER_TOO_SMALL`.
    BufferTooSmall,
    /// `TPB_ERROR`.
    Error,
}

impl Status {
    /// The C value.
    pub fn code(self) -> c_int {
        match self {
            Status::Ok => 0,
            Status::Unsupported => 1,
            Status::BufferTooSmall => 2,
            Status::Error => 3,
        }
    }
}

/// `tpb_subject_capabilities()`: one `TPB_CAP_*` bit per protocol operation
/// ([`cap_bit`]); while [`ABI_VERSION`] is 1, only the version-1 ones.
pub fn capabilities() -> u32 {
    let all = Capability::ALL.iter().fold(0, |m, &c| m | cap_bit(c));
    let v2 = cap_bit(Capability::ValidateStream) | cap_bit(Capability::Lower);
    if ABI_VERSION >= 2 {
        all
    } else {
        all & !v2
    }
}

/// Every table `tpb_lut` serves (all of SPEC §6), in header bit order: the
/// harness's own list, so library and loader cannot disagree on it.
pub const LUT_TABLES: [LutTable; LutTable::ALL.len()] = LutTable::ALL;

/// `tpb_subject_lut_tables()`: every table.
pub fn lut_tables() -> u32 {
    LUT_TABLES.iter().fold(0, |m, &t| m | t.abi_bit())
}

/// The table `tpb_lut` is asked for by its tpb-subject name (`alu_op`, …).
pub fn lut_table(name: &str) -> Option<LutTable> {
    LutTable::from_name(name)
}

/// The `tpb_verdict` id of a validator answer: `TPB_VERDICT_VALID` (0), or
/// the failing predicate's 1-based place in the SPEC §3 / §4 chain
/// (`Predicate::ALL`, the order the header's generated block follows).
pub fn verdict_id(failed: Option<Predicate>) -> u16 {
    let Some(p) = failed else { return 0 };
    let place = Predicate::ALL.iter().position(|q| *q == p).unwrap_or(0);
    u16::try_from(place + 1).unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// `NAME -> value` of every `#define NAME …` and enum member `NAME = …`
    /// of the header (values `1u`, `(1u << 5)`, `7`).
    fn header_numbers() -> BTreeMap<String, u64> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/tpb_subject.h");
        let text = std::fs::read_to_string(path).expect("include/tpb_subject.h");
        let mut out = BTreeMap::new();
        for line in text.lines() {
            let line = line.split("/*").next().unwrap_or("").trim();
            let (name, value) = if let Some(d) = line.strip_prefix("#define ") {
                match d.split_once(char::is_whitespace) {
                    Some((n, v)) => (n.trim(), v.trim()),
                    None => continue,
                }
            } else if let Some((n, v)) = line.split_once('=') {
                (n.trim(), v.trim().trim_end_matches(','))
            } else {
                continue;
            };
            if !name.starts_with("TPB_") {
                continue;
            }
            let v = value.trim_matches(|c| c == '(' || c == ')');
            let number = |s: &str| s.trim().trim_end_matches('u').parse::<u64>().ok();
            let parsed = match v.split_once("<<") {
                Some((a, b)) => number(a).zip(number(b)).map(|(a, b)| a << b),
                None => number(v),
            };
            if let Some(n) = parsed {
                out.insert(name.to_string(), n);
            }
        }
        out
    }

    fn header(name: &str) -> u64 {
        *header_numbers()
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in include/tpb_subject.h"))
    }

    #[test]
    fn the_version_and_status_codes_are_the_headers() {
        assert_eq!(u64::from(ABI_VERSION), header("TPB_SUBJECT_ABI_VERSION"));
        for (s, name) in [
            (Status::Ok, "TPB_OK"),
            (Status::Unsupported, "TPB_UNSUPPORTED"),
            (Status::BufferTooSmall, "TPB_BUFFER_TOO_SMALL"),
            (Status::Error, "TPB_ERROR"),
        ] {
            assert_eq!(u64::try_from(s.code()).unwrap(), header(name), "{name}");
        }
    }

    #[test]
    fn the_capability_bits_are_the_headers() {
        for c in Capability::ALL {
            let Some(op) = c.op() else { continue };
            let name = format!("TPB_CAP_{}", op.to_uppercase());
            assert_eq!(u64::from(cap_bit(c)), header(&name), "{name}");
        }
        // Every defined TPB_CAP_* bit is declared once the version is 2.
        let all: u64 = header_numbers()
            .iter()
            .filter(|(k, _)| k.starts_with("TPB_CAP_"))
            .fold(0, |m, (_, v)| m | v);
        let v1 = all & !(header("TPB_CAP_VALIDATE_STREAM") | header("TPB_CAP_LOWER"));
        let want = if ABI_VERSION >= 2 { all } else { v1 };
        assert_eq!(u64::from(capabilities()), want);
    }

    #[test]
    fn every_table_has_the_headers_bit() {
        let numbers = header_numbers();
        let defined: Vec<&String> = numbers
            .keys()
            .filter(|k| k.starts_with("TPB_LUT_"))
            .collect();
        assert_eq!(defined.len(), LUT_TABLES.len(), "{defined:?}");
        for t in LUT_TABLES {
            let name = format!("TPB_LUT_{}", t.name().to_uppercase());
            assert_eq!(u64::from(t.abi_bit()), header(&name), "{name}");
            assert_eq!(lut_table(t.name()), Some(t));
        }
        assert_eq!(u64::from(lut_tables()), numbers_or(&defined, &numbers));
        assert_eq!(lut_table("ALU_OP"), None);
        assert_eq!(lut_table("fp8"), None);
    }

    fn numbers_or(names: &[&String], numbers: &BTreeMap<String, u64>) -> u64 {
        names.iter().fold(0, |m, n| m | numbers[*n])
    }

    #[test]
    fn verdict_ids_are_the_headers_generated_enum() {
        assert_eq!(verdict_id(None), 0);
        assert_eq!(header("TPB_VERDICT_VALID"), 0);
        let numbers = header_numbers();
        let preds: Vec<&String> = numbers
            .keys()
            .filter(|k| k.starts_with("TPB_PRED_"))
            .collect();
        assert_eq!(preds.len(), Predicate::ALL.len(), "{preds:?}");
        for p in Predicate::ALL {
            let name = format!("TPB_PRED_{}", p.name().to_uppercase());
            assert_eq!(u64::from(verdict_id(Some(p))), header(&name), "{name}");
        }
    }
}
