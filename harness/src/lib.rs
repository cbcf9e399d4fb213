//! `tpbconform`: the CLI ([`cli`]) on top of the harness's layer crates
//! (`harness/ARCHITECTURE.md`), whose modules are re-exported here under their
//! old paths (`tpbconform::judge` is `tpb_judge::judge`).
#![deny(unsafe_code)]
// clap turns these doc comments into --help text, which shows placeholders such as <target>.
#![allow(rustdoc::invalid_html_tags)]

pub use tpb_gate::{fuzz_entry, gate, minimize, triage};
pub use tpb_generators::generators;
pub use tpb_judge::{blame, explain, findings, judge, kinds, reach};
pub use tpb_report::report;
pub use tpb_subjects::{
    atomic, external, fields_json, generation, input, interrupt, layout, lower_input, strict_json,
    subjects, targets, SPEC_VERSION,
};

pub mod cli;
