//! [`foreign`]: names that came from an external subject (refusals, decode
//! error fields, stream errors), interned so they compare with core's by
//! text at the cost of a pointer once seen.

use crate::subjects::Name;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

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
