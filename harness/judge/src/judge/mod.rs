//! The judge (the differential engine): one input of a target through the reference pair
//! (core, the oracle) and each subject under test whose capabilities cover the target, judged
//! against core. A case where core and oracle disagree is reported as that, and no subject is
//! judged on it. What each kind maps its input to and compares is [`crate::kinds`].

pub mod batch;
pub mod cohort;
pub mod divergence;
pub mod input_map;
pub mod lean;
pub mod nway;
pub mod pair;
pub mod record;
mod render;

pub use divergence::{Answer, Answers, Class, Divergence, Filed, Outcome, Signature};
pub use nway::Judge;
pub use pair::panic_text;

pub use input_map::{
    bundle_from_input, group_header, group_payload, ir_query_from_input, ordinal_from_input,
    stream_from_input,
};
