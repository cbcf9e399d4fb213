//! External subjects: somebody else's implementation, driven over the
//! process protocol `tpb-subject/1` (docs/subject-protocol.md).
//!
//! - `cmd:COMMAND` runs `sh -c COMMAND` and speaks the protocol with it
//!   ([`process::ProcessSubject`], JSON lines; `batch64` frames for its
//!   validators when it offers them, [`batch_framing`]);
//! - `lib:PATH` loads a shared library with the C ABI of
//!   `include/tpb_subject.h` in one worker process per generation
//!   (`tpbconform subject-worker --shm …`, [`shm_worker`]) sharing a memory
//!   region with the gate ([`shm`], [`shm_client::ShmChannel`]): validators
//!   and LUTs in compact slots, every other operation as the protocol's
//!   request and answer lines in records, so a crash or hang in the
//!   library never reaches the gate. Every operation is batched: the gate
//!   stages a chunk's bundles, ordinals, streams or lowering modules and
//!   rings one hand-off per generation ahead of judging the chunk
//!   ([`crate::subjects::Batch`]); a roundtrip batch's encodes follow its
//!   decodes in a second hand-off, collected at the first encode asked.
//!
//! One [`Client`] drives either; one [`process::Supervisor`] keeps each
//! (restarts, give-up, stderr tail); [`subject`] is the client as a
//! [`crate::subjects::Subject`] and the registry's opener (`prefetch` its
//! whole-batch transports, `ready` the answers they leave by position).
//! Also: [`protocol`] (lines ⇄ typed requests and answers), [`names`] (names from outside,
//! interned), [`ffi`] (calls into the library), `shm_answers` (a hand-off's
//! answers read back; an unwritten or misplaced one is a harness fault), `shm_process` (a
//! worker started, rung for a hand-off and waited for),
//! [`lower_json`] (the `lower` operation's IR and module JSON),
//! [`verdict`] (the `tpb_verdict` ids), [`reaper`] (killing process groups
//! and pipe holders), [`watch`] (the gate's no-progress watchdog: the
//! clients' progress and waits).

pub mod batch_framing;
pub mod client;
pub mod ffi;
pub mod lower_json;
pub mod names;
mod prefetch;
pub mod process;
pub mod protocol;
mod ready;
pub mod reaper;
pub mod record;
pub mod shm;
mod shm_answers;
pub mod shm_client;
mod shm_process;
pub mod shm_worker;
pub mod subject;
pub mod supervisor;
pub mod verdict;
pub mod watch;

pub use client::Client;
pub use process::{
    Fault, FaultClass, Launch, ProcessSubject, Reply, StartError, Supervisor, STDERR_LINES,
};
pub use protocol::{Answer, Hello, Op, Request};
pub use subject::{
    open, set_case_timeout, start, stats, ExternalSubject, SubjectStats, WORKER_SUBCOMMAND,
};
