//! The generation `tpb_subject_init(arch)` selected, for every later call.
//!
//! Until an init succeeds, and after one that refused its `arch`, no
//! generation is selected and every operation fails (`TPB_ERROR`): the
//! library never answers for a generation nobody asked for.

use std::fmt;
use std::sync::atomic::{AtomicU8, Ordering};
use tpb_subjects::generation::Generation;

/// 0 = none; otherwise 1 + the index in [`Generation::ALL`].
static SELECTED: AtomicU8 = AtomicU8::new(0);

/// `arch` is not one of `v2` … `v5` (include/tpb_subject.h; FACTS §1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownArch(pub String);

impl fmt::Display for UnknownArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown arch {:?} (v2, v3, v4, v5)", self.0)
    }
}

/// Selects `arch` (`"v2"` … `"v5"`); any other text selects nothing.
pub fn select(arch: &str) -> Result<Generation, UnknownArch> {
    match arch.parse::<Generation>() {
        Ok(a) => {
            let i = Generation::ALL.iter().position(|x| *x == a).unwrap_or(0);
            SELECTED.store(u8::try_from(i + 1).unwrap_or(0), Ordering::SeqCst);
            Ok(a)
        }
        Err(_) => {
            clear();
            Err(UnknownArch(arch.to_string()))
        }
    }
}

/// Selects nothing (an `arch` that is not even UTF-8).
pub fn clear() {
    SELECTED.store(0, Ordering::SeqCst);
}

/// The selected generation, if any.
pub fn selected() -> Option<Generation> {
    let i = usize::from(SELECTED.load(Ordering::SeqCst));
    i.checked_sub(1)
        .and_then(|i| Generation::ALL.get(i).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the selection is process-wide state.
    #[test]
    fn init_selects_a_generation_or_nothing() {
        for a in Generation::ALL {
            assert_eq!(select(a.name()), Ok(a));
            assert_eq!(selected(), Some(a));
        }
        for bad in ["v1", "v6", "V2", "", "sunda", "v2 "] {
            assert_eq!(select("v3"), Ok(Generation::V3));
            assert_eq!(select(bad), Err(UnknownArch(bad.into())));
            assert_eq!(selected(), None, "{bad:?} leaves nothing selected");
        }
    }
}
