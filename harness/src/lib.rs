//! `tpb-harness`: the differential engine, its subjects, input handling and
//! the `tpbconform` CLI support code.
//!
//! - [`subject`] — the `Subject` trait and its `CoreSubject` / `OracleSubject` impls;
//! - [`engine`] — `Target`, `Outcome`, `Divergence`, `compare*`, `run_target_or_panic`;
//! - [`input`] — reading bundles (binary / hex) with precise errors;
//! - [`atomic`] — `write_atomic`;
//! - [`cli`] — the subcommands of `tpbconform`;
//! - [`generators`] — valid and near-valid structured inputs;
//! - [`gate`], [`triage`], [`minimize`], [`report`] — campaigns and their reports;
//! - [`run_json`] — a report's machine-readable run metadata; [`report_merge`] —
//!   one report from the reports of a sharded gate;
//! - [`sync_diff`] — the semaphore-handshake model vs the simulator;
//! - [`fuzz_entry`] — what the cargo-fuzz targets call;
//! - [`external`] — `lib:` / `cmd:` subjects over the tpb-subject/1 protocol.
#![deny(unsafe_code)]

pub mod atomic;
pub mod cli;
pub mod engine;
pub mod external;
pub mod fuzz_entry;
pub mod gate;
pub mod generators;
pub mod input;
pub mod minimize;
pub mod report;
pub mod report_merge;
pub mod run_json;
pub mod subject;
pub mod sync_diff;
pub mod triage;
