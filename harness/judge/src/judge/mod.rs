//! The judge (the differential engine): run one input of a target through the subjects
//! and say whether they agree.
//!
//! A [`Judge`] holds the reference pair — `core` (the reference) and
//! `oracle` (the second reading) — and zero or more subjects under test.
//! Every case goes to all of them: core vs oracle is the reference check;
//! each other subject is judged against core, on the targets its
//! capabilities cover. A case where core and oracle disagree is reported as
//! that and no subject is judged on it.
//!
//! Files: [`nway`] (the [`Judge`] and its typed comparisons), [`batch`]
//! (its one entry for a batch of cases, with bulk judging), [`input_map`],
//! [`pair`] (one comparison of two subjects), [`divergence`], [`cohort`],
//! [`structured`] (the `structured_diff` property), [`record`] (the coverage
//! recorder the gate wraps core in), [`lean`] (the bundle comparisons on
//! concrete subjects, for the lean fuzz entries). What each kind of target
//! maps its input to and compares is [`crate::kinds`].

pub mod batch;
pub mod cohort;
pub mod divergence;
pub mod input_map;
pub mod lean;
pub mod nway;
pub mod pair;
pub mod record;
mod render;
pub mod structured;

pub use divergence::{Answer, Answers, Class, DescribedCase, Divergence, Outcome, Signature};
pub use nway::Judge;
pub use pair::panic_text;

use crate::subjects::IrQuery;
use crate::targets::Target;
pub use input_map::{
    bundle_from_input, group_header, group_payload, ir_query_from_input, ordinal_from_input,
    stream_from_input,
};

/// core vs oracle on `target` with raw `input`.
pub fn compare(target: Target, input: &[u8]) -> Outcome {
    Judge::reference().compare(target, input)
}

/// core vs oracle on a 64-byte bundle (see [`Judge::compare_bundle`]).
pub fn compare_bundle(target: Target, b: &[u8; 64]) -> Outcome {
    Judge::reference().compare_bundle(target, b)
}

/// core vs oracle on a raw byte stream (see [`Judge::compare_stream`]).
pub fn compare_stream(stream: &[u8]) -> Outcome {
    Judge::reference().compare_stream(stream)
}

/// core vs oracle on one LUT ordinal (see [`Judge::compare_lut`]).
pub fn compare_lut(target: Target, ordinal: u32) -> Outcome {
    Judge::reference().compare_lut(target, ordinal)
}

/// core vs oracle on one IR query (see [`Judge::compare_ir`]).
pub fn compare_ir(q: &IrQuery) -> Outcome {
    Judge::reference().compare_ir(q)
}
