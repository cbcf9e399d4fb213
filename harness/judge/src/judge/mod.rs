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
//! [`record`] (the coverage
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

pub use divergence::{
    Answer, Answers, Class, DescribedCase, Divergence, Filed, Outcome, Signature,
};
pub use nway::Judge;
pub use pair::panic_text;

pub use input_map::{
    bundle_from_input, group_header, group_payload, ir_query_from_input, ordinal_from_input,
    stream_from_input,
};
