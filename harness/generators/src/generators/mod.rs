//! Structured generators: bundles at the edge of validity, with labels.
//!
//! # What is generated
//!
//! Every generator is a function of an [`arbitrary::Unstructured`] (so the same
//! code serves libFuzzer, bolero, proptest and the corpus builder), for
//! [`Config::arch`]'s generation: `valid_instruction` / [`valid_case`] (typed
//! `tpb_core` instructions encoded with core's encoder), [`near_valid_case`]
//! (exactly [`Config::violations`] [`Violation`]s on disjoint bytes), [`group`] /
//! [`stream`] (SPEC §5.3), [`gate_inputs::lut_ordinal`], and [`program()`], the
//! `structured_diff` input format, with its custom mutator and crossover
//! ([`mutate`]). The gate's own inputs, drawn from a [`SplitMix64`], are
//! [`images`], [`gate_inputs`], [`sync_program`], [`engine_sync`],
//! [`lowering_module`] and [`stream_program`].
//!
//! # Labelling guarantee
//!
//! Every [`Case`] carries an [`Expected`] label computed **only** from the
//! chosen mutations and SPEC's chain order (§3, §4 validator chains; §5.1
//! decode walk), never by calling core or the oracle. A view that the
//! mutations do not determine (e.g. a payload relabelled as a header by an
//! opcode mutation) is left unlabelled (`None`). For every labelled view, both
//! subjects must report exactly the label: validators by predicate name,
//! decode by field (and by offset when the field is `reserved`).
//! `tests/generators.rs` checks this over thousands of cases.
//!
//! # Determinism
//!
//! Output depends only on the input bytes and the [`Config`]; no clock, no
//! global RNG. When the bytes run out, `Unstructured` yields its minimal
//! choices (first alternative, lower bound), so generation never fails for lack
//! of data, and shrinking the bytes shrinks the case.

mod case_kind;
mod cases;
mod config;
pub mod engine_sync;
pub mod gate_inputs;
pub mod images;
mod labels;
pub mod lowering_module;
pub mod mutate;
mod program;
pub mod rng;
mod roles;
pub mod stream_program;
mod streams;
pub mod sync_program;
mod valid;
mod violations;

pub use case_kind::CaseKind;
pub use cases::{case, field_copy, near_valid_case, valid_case, Case};
pub use config::{opcode, Config};
pub use gate_inputs::lut_edge_ordinals;
pub use labels::{label, Expected};
pub use program::{program, shape, Item, Program, Shape, MAX_ITEMS};
pub use rng::{case_rng, fnv1a64, fnv1a64_on, name_hash, SplitMix64};
pub use streams::{group, stream};
pub use valid::{encode, sync, GenError};
pub use violations::{violation, Violation, SCRATCH_PARTIAL};
