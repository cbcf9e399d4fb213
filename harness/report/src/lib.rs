//! `tpb-report`: the report layer of the harness (`harness/ARCHITECTURE.md`):
//! one model, four renderers, and `report merge` of a sharded gate's folders.
#![deny(unsafe_code)]

// The lower layers' modules, so `crate::generation` names them here as it does
// in their own crates (Cargo keeps the imports pointing down).
use tpb_gate::{fuzz_entry, gate, triage};
use tpb_judge::{blame, explain, findings, judge, kinds};
use tpb_subjects::{atomic, generation, input, layout, strict_json, subjects, targets};

pub mod report;
