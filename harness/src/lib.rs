//! `tpb-harness`: the differential engine, its subjects, input handling and
//! the `tpbconform` CLI support code.
//!
//! - [`subject`] — the `Subject` trait and its `CoreSubject` / `OracleSubject` impls;
//! - [`engine`] — `Target`, `Outcome`, `Divergence`, `compare*`, `run_target_or_panic`;
//! - [`input`] — reading bundles (binary / hex) with precise errors;
//! - [`atomic`] — `write_atomic`;
//! - [`cli`] — the subcommands of `tpbconform`.
#![forbid(unsafe_code)]

pub mod atomic;
pub mod cli;
pub mod engine;
pub mod input;
pub mod subject;
