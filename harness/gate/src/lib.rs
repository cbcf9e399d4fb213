//! `tpb-gate`: the campaigns layer of the harness (`harness/ARCHITECTURE.md`):
//! [`gate`], [`triage`], [`minimize`], [`fuzz_entry`].
#![deny(unsafe_code)]

// The lower layers' modules under the names they have there (`crate::generation`).
use tpb_generators::generators;
use tpb_judge::{blame, findings, judge, kinds, reach};
use tpb_subjects::{
    atomic, external, generation, input, interrupt, layout, subjects, targets, SPEC_VERSION,
};

pub mod fuzz_entry;
pub mod gate;
pub mod minimize;
pub mod triage;
