//! External subjects: somebody else's implementation, driven over
//! `tpb-subject/1` (docs/subject-protocol.md).
//!
//! - `cmd:COMMAND` runs `sh -c COMMAND` and speaks JSON lines with it
//!   ([`process`]; `batch64` frames for its validators when offered,
//!   [`batch_framing`]);
//! - `lib:PATH` loads a C ABI library (`include/tpb_subject.h`, [`ffi`]) in
//!   one worker process per generation ([`shm_worker`]) sharing a memory
//!   region with the gate ([`shm`], [`shm_client`]): validators and LUTs in
//!   compact slots, every other operation as request and answer records
//!   ([`record`]); a crash or hang in the library never reaches the gate.
//!
//! One [`Client`] drives either, one [`Supervisor`] keeps each (restarts,
//! give-up, stderr tail); [`subject`] is the client as a
//! [`crate::subjects::Subject`] and the registry's opener, its whole-batch
//! answers (`prefetch`) kept by position in one store (`ready`).

pub mod batch_framing;
pub mod client;
pub mod ffi;
pub mod lower_json;
pub mod names;
pub mod process;
pub mod protocol;
mod ready;
pub mod reaper;
pub mod record;
pub mod shm;
pub mod shm_client;
pub mod shm_worker;
pub mod subject;
pub mod supervisor;
pub mod verdict;
pub mod watch;

pub use client::Client;
pub use process::Reply;
pub use protocol::{Answer, Request};
pub use subject::{open, set_case_timeout, start, stats, SubjectStats};
pub use supervisor::{FaultClass, Supervisor};
