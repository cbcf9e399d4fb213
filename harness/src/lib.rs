//! `tpb-harness`: the judge (the differential engine), its subjects, input handling and
//! the `tpbconform` CLI support code. Layers, top to bottom (see
//! `harness/ARCHITECTURE.md`; `tests/architecture.rs` enforces that no
//! library module imports [`cli`] and that imports have no cycle):
//!
//! - [`cli`] — the subcommands of `tpbconform`;
//! - [`gate`], [`triage`], [`report`], [`minimize`], [`fuzz_entry`] —
//!   campaigns, their findings ([`findings`]) and reports (one model, four
//!   renderers, and `report merge` of a sharded gate's folders);
//! - [`kinds`] — one file per kind of target behind one trait (generate,
//!   compare, coverage key, reach, shrink), and the table from a registry
//!   row to its kind;
//! - [`judge`] — one input through every subject (typed comparisons);
//!   [`generators`] — every input generator (structured, gate images, sync
//!   programs, lowering modules) and the one PRNG;
//! - [`subjects`] — the `Subject` interface and its registry (the only
//!   place that names core and oracle); [`external`] — `lib:` / `cmd:`
//!   subjects over the tpb-subject/1 protocol;
//! - data stated once: [`targets`] (the target registry), [`layout`] (the
//!   bundle layout), [`arch`] (generations); and the plumbing [`input`],
//!   [`atomic`], [`explain`], [`blame`] (the bytes an answer blames),
//!   [`fields_json`] (decoded fields as JSON), [`lower_input`] (the IR JSON
//!   that `tpbconform lower` and the C ABI's `tpb_lower` read), [`strict_json`]
//!   (duplicate JSON keys refused).
#![deny(unsafe_code)]

/// The version of `SPEC.md` this workspace implements, stated once: SPEC.md's
/// "Spec version" line, `corpus/VERSION` (written by the `gen_corpus`
/// example from [`fuzz_entry::CORPUS_VERSION`], checked by corpus replay) and
/// every other mention must equal it (`tests/docs_hygiene.rs`).
pub const SPEC_VERSION: &str = "tpb-spec-1";

pub mod arch;
pub mod atomic;
pub mod blame;
pub mod cli;
pub mod explain;
pub mod external;
pub mod fields_json;
pub mod findings;
pub mod fuzz_entry;
pub mod gate;
pub mod generators;
pub mod input;
pub mod interrupt;
pub mod judge;
pub mod kinds;
pub mod layout;
pub mod lower_input;
pub mod minimize;
pub mod reach;
pub mod report;
pub mod strict_json;
pub mod subjects;
pub mod targets;
pub mod triage;
