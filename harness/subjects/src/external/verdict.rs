//! The `tpb_verdict` ids of ABI version 2 (include/tpb_subject.h) and the
//! batch framing: `0` valid, then one per predicate in [`Predicate::KNOWN`]
//! order (SPEC §3 #1..#6, §4 #4..#5; equal to core's `Predicate::ALL`,
//! tested). The header's generated block is
//! checked against the SPEC by `harness/tests/verdict_ids.rs`
//! (`TPB_BLESS=1` rewrites it). And [`foreign`]: names that came from an
//! external subject (refusals, decode error fields, stream errors),
//! interned so they compare with core's by text at the cost of a pointer
//! once seen.

use crate::subjects::{Name, Predicate, Verdict};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

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

/// At most this many distinct names are interned; beyond that a name stays
/// [`Name::Unknown`] (a subject answering endless distinct texts cannot grow
/// memory without bound).
pub const MAX_NAMES: usize = 4096;

/// `s` as a [`Name`]: [`Name::Known`] once interned.
pub fn foreign(s: &str) -> Name {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let Ok(mut set) = NAMES.get_or_init(|| Mutex::new(HashSet::new())).lock() else {
        return Name::Unknown(s.to_string());
    };
    if let Some(k) = set.get(s) {
        return Name::Known(k);
    }
    if set.len() >= MAX_NAMES {
        return Name::Unknown(s.to_string());
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(k);
    Name::Known(k)
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
