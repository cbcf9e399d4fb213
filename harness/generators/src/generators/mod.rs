//! Every input generator (the list: harness/ARCHITECTURE.md, "Generators"): the labelled
//! ones draw from an [`arbitrary::Unstructured`], the gate's inputs from a [`SplitMix64`].
//!
//! **Labelling guarantee.** A [`Case`]'s [`Expected`] label is computed only from the chosen
//! mutations and SPEC's chain order (§3, §4, §5.1), never by calling core or the oracle; a
//! view the mutations do not determine is unlabelled; both subjects must report exactly the
//! label (`tests/generators.rs`).
//!
//! **Determinism.** Output depends only on the input bytes and the [`Config`]; exhausted
//! bytes yield minimal choices, so generation never fails for lack of data.

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
