//! Subjects: implementations of SPEC.md under differential test.
//!
//! Modelled on wasmtime's `DiffEngine`: a [`Subject`] has a name, declares
//! its [`Capabilities`], and answers each operation with a typed result or a
//! [`Fault`] (`Unsupported` for an operation it does not implement; `Crash`,
//! `Timeout`, `Protocol` for external subjects that misbehave). The judge
//! ([`crate::judge`]) sends the same case to several subjects and compares
//! what they say.
//!
//! Subjects are created by name only through [`registry`]: `core` (the
//! production implementation), `oracle` (the independent second reading),
//! `lib:PATH` and `cmd:COMMAND` (external subjects). No other harness module
//! names the two in-process implementations.
//!
//! The validator and LUT entry points of the in-process subjects do not
//! allocate: they are the hot path of the gate.

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
