//! The names handed to C (predicates, refusals, stream errors, the library
//! name): NUL-terminated copies that stay valid until the library is
//! unloaded, as include/tpb_subject.h requires of every returned string.
//!
//! Each distinct text is copied once. Core's vocabulary is a few hundred
//! names; the only open-ended source is an encode request's unknown field
//! name (core's refusal names it), so the table is capped at [`MAX_NAMES`]
//! and memory stays bounded.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fmt;
use std::sync::{Mutex, OnceLock};
use tpb_core::validate::Predicate;

/// The most distinct names ever kept.
pub const MAX_NAMES: usize = 4096;

/// Why a name cannot be handed to C.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// The text holds a NUL byte.
    Nul(String),
    /// [`MAX_NAMES`] names are kept already; this one is new.
    Full(String),
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Nul(s) => write!(f, "the name {s:?} holds a NUL byte"),
            NameError::Full(s) => write!(f, "{MAX_NAMES} names kept already; not {s:?}"),
        }
    }
}

/// A bounded set of C strings, each copied once and never freed.
struct Names {
    cap: usize,
    kept: HashMap<String, &'static CStr>,
}

impl Names {
    fn get(&mut self, s: &str) -> Result<&'static CStr, NameError> {
        if let Some(c) = self.kept.get(s) {
            return Ok(c);
        }
        if self.kept.len() >= self.cap {
            return Err(NameError::Full(s.to_string()));
        }
        let c = CString::new(s).map_err(|_| NameError::Nul(s.to_string()))?;
        let c: &'static CStr = Box::leak(c.into_boxed_c_str());
        self.kept.insert(s.to_string(), c);
        Ok(c)
    }
}

/// The C string of `s`, valid until unload.
pub fn c_name(s: &str) -> Result<&'static CStr, NameError> {
    static NAMES: OnceLock<Mutex<Names>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        Mutex::new(Names {
            cap: MAX_NAMES,
            kept: HashMap::new(),
        })
    });
    // A poisoned lock still holds a consistent table (insert is the last step).
    let mut names = names.lock().unwrap_or_else(|p| p.into_inner());
    names.get(s)
}

/// The C name of a validator predicate, looked up without a lock (the
/// per-bundle path of `tpb_validate_header` / `_payload`).
pub fn predicate(p: Predicate) -> Result<&'static CStr, NameError> {
    static PREDICATES: OnceLock<Vec<Result<&'static CStr, NameError>>> = OnceLock::new();
    let all = PREDICATES.get_or_init(|| Predicate::ALL.iter().map(|q| c_name(q.name())).collect());
    Predicate::ALL
        .iter()
        .position(|q| *q == p)
        .and_then(|i| all.get(i).cloned())
        .unwrap_or_else(|| c_name(p.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_copied_once_and_kept() {
        let a = c_name("short_group").unwrap();
        let b = c_name("short_group").unwrap();
        assert_eq!(a.as_ptr(), b.as_ptr(), "one copy per text");
        assert_eq!(a.to_bytes(), b"short_group");
        assert_eq!(
            c_name("a\0b"),
            Err(NameError::Nul("a\0b".into())),
            "a NUL byte cannot cross"
        );
    }

    #[test]
    fn predicates_have_their_spec_names() {
        for p in Predicate::ALL {
            assert_eq!(predicate(p).unwrap().to_str(), Ok(p.name()));
        }
    }

    #[test]
    fn the_set_is_bounded() {
        let mut names = Names {
            cap: 3,
            kept: HashMap::new(),
        };
        for n in ["a", "b", "c"] {
            names.get(n).unwrap();
        }
        assert_eq!(names.get("d"), Err(NameError::Full("d".into())));
        assert_eq!(
            names.get("a").unwrap().to_bytes(),
            b"a",
            "kept names stay served"
        );
        assert_eq!(names.kept.len(), 3);
    }
}
