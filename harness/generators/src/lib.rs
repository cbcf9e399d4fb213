//! `tpb-generators`: the generators layer (`harness/ARCHITECTURE.md`) and the one PRNG.
#![deny(unsafe_code)]

// The lower layer's modules under the names they have there (`crate::generation`).
use tpb_subjects::{generation, layout, subjects};

pub mod generators;
