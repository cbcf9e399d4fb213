//! The subject registry: turns a spec string into a [`Subject`].
//!
//! | spec | subject |
//! |---|---|
//! | `core` | `tpb_core`, the production implementation (the reference) |
//! | `oracle` | `tpb_oracle`, the independent second reading |
//! | `lib:PATH` | a shared library with the C ABI (`include/tpb_subject.h`) |
//! | `cmd:COMMAND` | a process speaking `tpb-subject/1` over stdin/stdout |
//!
//! This module and its adapters name the two in-process implementations (so do a few data
//! readers and CLI commands, no kind; `harness/ARCHITECTURE.md`). External subjects plug in
//! through [`set_external_opener`].

use super::core_adapter::CoreSubject;
use super::interface::{Reference, Subject};
use super::oracle_adapter::OracleSubject;
use crate::generation::Generation;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use tpb_core as c;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SubjectSpec {
    Core,
    Oracle,
    Lib(String),
    Cmd(String),
}

impl fmt::Display for SubjectSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubjectSpec::Core => f.write_str("core"),
            SubjectSpec::Oracle => f.write_str("oracle"),
            SubjectSpec::Lib(p) => write!(f, "lib:{p}"),
            SubjectSpec::Cmd(c) => write!(f, "cmd:{c}"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadSpec(pub String);

impl fmt::Display for BadSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad subject `{}` (expected core, oracle, lib:PATH or cmd:COMMAND)",
            self.0
        )
    }
}

impl std::error::Error for BadSpec {}

impl FromStr for SubjectSpec {
    type Err = BadSpec;
    fn from_str(s: &str) -> Result<SubjectSpec, BadSpec> {
        let bad = || BadSpec(s.to_string());
        match s {
            "core" => Ok(SubjectSpec::Core),
            "oracle" => Ok(SubjectSpec::Oracle),
            _ => match s.split_once(':') {
                Some(("lib", p)) if !p.trim().is_empty() => Ok(SubjectSpec::Lib(p.to_string())),
                Some(("cmd", c)) if !c.trim().is_empty() => Ok(SubjectSpec::Cmd(c.to_string())),
                _ => Err(bad()),
            },
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// No opener for external subjects is installed in this build.
    NotAvailable(SubjectSpec),
    /// The external subject failed to start or to say hello.
    Failed { spec: SubjectSpec, reason: String },
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::NotAvailable(s) => {
                write!(f, "subject `{s}`: external subjects are not yet available")
            }
            OpenError::Failed { spec, reason } => write!(f, "subject `{spec}`: {reason}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// `Send`: [`open_each`] starts them on threads of their own.
pub type ExternalOpener =
    fn(&SubjectSpec, Generation) -> Result<Box<dyn Subject + Send>, OpenError>;

static EXTERNAL: OnceLock<ExternalOpener> = OnceLock::new();

/// Installs the opener for `lib:` / `cmd:` specs; `false` if one was installed already.
pub fn set_external_opener(f: ExternalOpener) -> bool {
    EXTERNAL.set(f).is_ok()
}

pub fn open(spec: &SubjectSpec, arch: Generation) -> Result<Box<dyn Subject + Send>, OpenError> {
    match spec {
        SubjectSpec::Core => Ok(Box::new(CoreSubject::new(arch))),
        SubjectSpec::Oracle => Ok(Box::new(OracleSubject::new(arch))),
        SubjectSpec::Lib(_) | SubjectSpec::Cmd(_) => open_external(spec, arch),
    }
}

fn open_external(
    spec: &SubjectSpec,
    arch: Generation,
) -> Result<Box<dyn Subject + Send>, OpenError> {
    match EXTERNAL.get() {
        Some(f) => f(spec, arch),
        None => Err(OpenError::NotAvailable(spec.clone())),
    }
}

/// Opens every subject of `specs` for every generation of `arches` (per generation, in `specs`
/// order), each on a thread of its own, so a slow start-up costs one start-up; the error is the
/// first in that order (the others started are dropped).
pub fn open_each(
    specs: &[SubjectSpec],
    arches: &[Generation],
) -> Result<Vec<Vec<Box<dyn Subject>>>, OpenError> {
    let pairs = arches
        .iter()
        .flat_map(|&a| specs.iter().map(move |s| (a, s)));
    let opened = std::thread::scope(|sc| {
        let started: Vec<_> = pairs
            .map(|(a, s)| {
                let h = std::thread::Builder::new()
                    .name("subject-start".into())
                    .spawn_scoped(sc, move || open(s, a));
                (a, s, h)
            })
            .collect();
        let joined = started.into_iter().map(|(a, s, h)| match h {
            Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            // No thread to spare: started here, in order.
            Err(_) => open(s, a),
        });
        joined.collect::<Vec<_>>()
    });
    let mut opened = opened.into_iter();
    let subjects = |_| {
        let each = opened.by_ref().take(specs.len());
        each.map(|r| r.map(|s| s as Box<dyn Subject>)).collect()
    };
    arches.iter().map(subjects).collect()
}

/// `core` serving the default generation.
pub fn core() -> Box<dyn Reference> {
    core_for(Generation::default())
}

/// `oracle` serving the default generation.
pub fn oracle() -> Box<dyn Reference> {
    oracle_for(Generation::default())
}

/// `(core, oracle)` as concrete types: a caller links only the operations it uses (the lean
/// fuzz entries; a `dyn` vtable would link every operation of both).
pub fn reference_pair_for(arch: Generation) -> (impl Reference + Copy, impl Reference + Copy) {
    (CoreSubject::new(arch), OracleSubject::new(arch))
}

pub fn core_for(arch: Generation) -> Box<dyn Reference> {
    Box::new(CoreSubject::new(arch))
}

pub fn oracle_for(arch: Generation) -> Box<dyn Reference> {
    Box::new(OracleSubject::new(arch))
}

/// The reference's header name of a `wait_mode` / `update_mode` byte (FACTS §2 \[H\]), for display.
pub fn mode_byte_name(field: &str, byte: u8) -> Option<&'static str> {
    match field {
        "wait_mode" => c::events::wait_mode_name(byte),
        "update_mode" => c::events::update_mode_name(byte),
        _ => None,
    }
}

/// The reference's table name of a `cce_op` (SPEC §6.2) or `kind` (SPEC §6.1) wire byte, for
/// display (also of a byte decode rejects, e.g. an unshipped CCE op).
pub fn table_byte_name(field: &str, byte: u8) -> Option<&'static str> {
    match field {
        "cce_op" => c::lut::alu_op_from_wire(byte).and_then(c::lut::alu_op_name),
        "kind" => c::lut::CollectiveKind::from_wire(byte).map(c::lut::CollectiveKind::name),
        _ => None,
    }
}

/// SPEC §5.2's mnemonic for a record, else the roster name (SPEC §2), for display.
pub fn mnemonic_of(op: u8) -> Option<&'static str> {
    c::mnemonics::mnemonic(op).or_else(|| c::generation::opcode_name(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_print() {
        for s in ["core", "oracle", "lib:/tmp/x.so", "cmd:python3 a.py --x"] {
            assert_eq!(
                s.parse::<SubjectSpec>().map(|p| p.to_string()),
                Ok(s.into())
            );
        }
        for bad in ["", "cor", "lib:", "cmd: ", "exe:x", "Core"] {
            assert!(bad.parse::<SubjectSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn in_process_subjects_open_by_name() {
        for (s, name) in [("core", "core"), ("oracle", "oracle")] {
            let spec: SubjectSpec = s.parse().unwrap();
            assert_eq!(open(&spec, Generation::V2).unwrap().name(), name);
        }
    }
}
