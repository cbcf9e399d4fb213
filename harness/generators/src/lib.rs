//! `tpb-generators`: the generators layer of the harness
//! (`harness/ARCHITECTURE.md`): every input generator (structured, gate
//! images, sync programs, lowering modules) and the one PRNG.
#![deny(unsafe_code)]

// The lower layer's modules, so `crate::generation` names them here as it does
// in `tpb-subjects` (Cargo keeps the imports pointing down).
use tpb_subjects::{generation, layout, subjects};

pub mod generators;
