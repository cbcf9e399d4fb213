//! `tpb-subjects`: the two lowest layers of the harness (`harness/ARCHITECTURE.md`): data
//! stated once and its plumbing; the [`subjects`] (their registry the only place that names
//! core and oracle) and the [`external`] ones.
#![deny(unsafe_code)]

/// The version of `SPEC.md` this workspace implements, stated once: SPEC.md's
/// "Spec version" line, `corpus/VERSION` (written by the `gen_corpus`
/// example from `fuzz_entry::CORPUS_VERSION`, checked by corpus replay) and
/// every other mention must equal it (`tests/docs_hygiene.rs`).
pub const SPEC_VERSION: &str = "tpb-spec-1";

pub mod atomic;
pub mod external;
pub mod fields_json;
pub mod generation;
pub mod input;
pub mod interrupt;
pub mod layout;
pub mod lower_input;
pub mod strict_json;
pub mod subjects;
pub mod targets;
