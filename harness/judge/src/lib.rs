//! `tpb-judge`: the judge and kinds layers of the harness
//! (`harness/ARCHITECTURE.md`): [`judge`] (one input through every subject,
//! typed comparisons), [`kinds`] (one file per kind of target), [`reach`],
//! [`findings`], [`explain`], [`blame`] (the bytes an answer blames).
#![deny(unsafe_code)]

// The lower layers' modules, so `crate::generation` names them here as it does
// in their own crates (Cargo keeps the imports pointing down).
use tpb_generators::generators;
use tpb_subjects::{fields_json, generation, layout, subjects, targets};

pub mod blame;
pub mod explain;
pub mod findings;
pub mod judge;
pub mod kinds;
pub mod reach;
