//! `tpbconform`: the top of the harness, the `tpbconform` CLI ([`cli`]), on the
//! layer crates below it (`harness/ARCHITECTURE.md`; Cargo refuses an upward
//! import between them, `tests/architecture.rs` checks the crate graph):
//!
//! - [`cli`] — the subcommands of `tpbconform`;
//! - `tpb-report`: [`report`] (one model, four renderers, and `report merge`
//!   of a sharded gate's folders);
//! - `tpb-gate`: [`gate`], [`triage`], [`minimize`], [`fuzz_entry`] —
//!   campaigns;
//! - `tpb-judge`: [`judge`] (one input through every subject, typed
//!   comparisons), [`kinds`] (one file per kind of target behind one trait),
//!   [`reach`], [`findings`], [`blame`] (the bytes an answer blames), [`explain`];
//! - `tpb-generators`: [`generators`] — every input generator and the one PRNG;
//! - `tpb-subjects`: [`subjects`] (the `Subject` interface and its registry,
//!   the only place that names core and oracle), [`external`] (`lib:` / `cmd:`
//!   subjects over the tpb-subject/1 protocol), and the data stated once:
//!   [`targets`], [`layout`], [`generation`], with the plumbing [`input`],
//!   [`atomic`], [`interrupt`], [`fields_json`], [`lower_input`],
//!   [`strict_json`].
//!
//! The layer crates' modules are re-exported here under their old paths, so
//! `tpbconform::judge` is `tpb_judge::judge`.
#![deny(unsafe_code)]

pub use tpb_gate::{fuzz_entry, gate, minimize, triage};
pub use tpb_generators::generators;
pub use tpb_judge::{blame, explain, findings, judge, kinds, reach};
pub use tpb_report::report;
pub use tpb_subjects::{
    atomic, external, fields_json, generation, input, interrupt, layout, lower_input, strict_json,
    subjects, targets, SPEC_VERSION,
};

pub mod cli;
