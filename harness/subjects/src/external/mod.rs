//! External subjects, driven over `tpb-subject/1` (docs/subject-protocol.md):
//! `cmd:COMMAND` speaks JSON lines ([`process`], `batch64` frames for its
//! validators when offered, [`batch_framing`]); `lib:PATH` loads a C ABI
//! library ([`ffi`]) in one worker process per generation ([`shm_worker`])
//! sharing a memory region with the gate ([`shm`], [`shm_client`]), so a
//! crash or hang in the library never reaches the gate. One [`Client`]
//! drives either, one [`Supervisor`] keeps each; [`subject`] is the client
//! as a [`crate::subjects::Subject`].

pub mod batch_framing;
pub mod client;
pub mod ffi;
pub mod lower_json;
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
pub use supervisor::Supervisor;
