//! Subjects: implementations of SPEC.md under differential test (after wasmtime's
//! `DiffEngine`), each answering a typed result or a [`Fault`]. They are created by name only
//! through [`registry`]. The in-process validator and LUT entry points do not allocate (the
//! gate's hot path).

pub mod compact;
mod core_adapter;
mod engine_sync_types;
pub mod interface;
mod lint_types;
mod lowering_types;
mod oracle_adapter;
pub mod registry;
mod sync_types;
mod types;

pub use compact::Compact;
pub use engine_sync_types::*;
pub use interface::{
    module_answer, stream_verdict, Batch, Capabilities, Capability, Fault, GivenUp, Question,
    Reference, Reply, Said, Subject, Transport,
};
pub use lint_types::*;
pub use lowering_types::*;
pub use registry::{open, SubjectSpec};
pub use sync_types::*;
pub use types::*;
