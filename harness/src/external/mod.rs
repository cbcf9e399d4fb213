//! External subjects: somebody else's implementation, driven over the
//! process protocol `tpb-subject/1` (docs/subject-protocol.md).
//!
//! - `cmd:COMMAND` runs `sh -c COMMAND` and speaks the protocol with it;
//! - `lib:PATH` loads a shared library with the C ABI of
//!   `include/tpb_subject.h` in a worker process (`tpbconform subject-worker
//!   lib:PATH`, [`worker`]) that speaks the same protocol, so one client
//!   ([`process::ProcessSubject`]) drives both and a crash or hang in the
//!   library never reaches the gate.
//!
//! Modules: [`protocol`] (lines ⇄ typed requests and answers), [`process`]
//! (the pipelined client with timeouts and restarts), [`subject`] (the
//! client as a [`crate::subjects::Subject`], and the registry's opener;
//! `prefetch` its whole-batch transports and `ready` the answers they
//! leave by position), [`answers`] (client replies as typed values),
//! [`names`] (names from outside, interned),
//! [`ffi`] (the only `unsafe` in the harness: calls into the library),
//! [`worker`] (the library's protocol server), [`lower_json`] (the `lower`
//! operation's IR and module JSON), [`shm`] / [`shm_client`] /
//! `shm_answers` / [`shm_worker`] (a `lib:` subject's validator and LUT
//! chunks through shared memory: the region, the gate's hand-offs, the
//! answers read back, the worker), [`verdict`] (the `tpb_verdict` ids),
//! [`watch`] (the gate's no-progress watchdog: the clients' progress and
//! waits).

pub mod answers;
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
pub mod shm;
mod shm_answers;
pub mod shm_client;
pub mod shm_worker;
pub mod subject;
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
