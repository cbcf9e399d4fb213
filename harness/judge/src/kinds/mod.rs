//! Target kinds: what a target of each [`Check`] does (generate a case,
//! compare the subjects' answers, count reach, shrink), one file per kind
//! behind one trait, [`TargetKind`]; [`kind_of`] is the one table from a
//! registry row's check to its kind (the list: `harness/ARCHITECTURE.md`).

pub mod bundle;
pub mod collective_lowering;
pub mod custom_op;
pub mod decode;
pub mod engine_sync;
pub mod ir_gate;
mod kind;
pub mod lut;
pub mod stream_lint;
pub mod structured;
pub mod sync_handshake;
pub mod validator;

pub use kind::{CaseBudget, CaseBuf, Draw, Form, Ran, Shrink, TargetKind};

use crate::generation::Generation;
use crate::reach::Reach;
use crate::targets::{Check, Target};

/// The table: the kind of a registry row's check.
pub fn kind_of(check: Check) -> &'static dyn TargetKind {
    match check {
        Check::Validator(_) => &validator::VALIDATOR,
        Check::Decode | Check::Roundtrip => &decode::DECODE,
        Check::StreamProgram | Check::StreamRaw => &custom_op::CustomOpKind,
        Check::Lut(_) => &lut::LutKind,
        Check::Ir => &ir_gate::IrGateKind,
        Check::Sync => &sync_handshake::SyncHandshakeKind,
        Check::Lowering => &collective_lowering::CollectiveLoweringKind,
        Check::StreamLint => &stream_lint::StreamLintKind,
        Check::EngineSync => &engine_sync::EngineSyncKind,
        Check::Structured => &structured::StructuredKind,
    }
}

/// The kind of target `t`.
#[inline]
pub fn of(t: Target) -> &'static dyn TargetKind {
    kind_of(t.check())
}

/// The reach classes the gate declares for `targets` under `arches`: each
/// target's kind's classes and, when any is declared, one `generation` class
/// per generation of the run.
pub fn declared_reach(targets: &[Target], arches: &[Generation]) -> Reach {
    let mut r = Reach::default();
    for &t in targets {
        of(t).declare_reach(t, &mut r);
    }
    if !r.is_empty() {
        let names: Vec<&'static str> = arches.iter().map(|a| a.name()).collect();
        r.declare_generations(&names);
    }
    r
}

#[cfg(test)]
pub(crate) mod test_subjects {
    use crate::subjects::{Capabilities, Subject};

    /// A subject that claims every capability and answers every operation
    /// `Unsupported` (the trait's default methods).
    pub(crate) struct Silent;

    impl Subject for Silent {
        fn name(&self) -> &str {
            "silent"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::all()
        }
    }

    impl crate::subjects::Reference for Silent {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_row_has_a_kind_named_for_its_check() {
        for t in Target::all() {
            let k = of(t);
            // Written out here, not read from `kind_of`: a row sent to the
            // wrong kind (LUT rows to the IR kind, say) fails.
            let want = match t.check() {
                Check::Validator(_) => "validator",
                Check::Decode | Check::Roundtrip => "decode",
                Check::StreamProgram | Check::StreamRaw => "custom_op",
                Check::Lut(_) => "lut",
                Check::Ir => "ir_gate",
                Check::Sync => "sync_handshake",
                Check::Lowering => "collective_lowering",
                Check::StreamLint => "stream_lint",
                Check::EngineSync => "engine_sync",
                Check::Structured => "structured",
            };
            assert_eq!(k.name(), want, "{t}");
            assert_eq!(k.shrink() == Shrink::Bundle, t.is_bundle(), "{t}");
            // The gate budget and the corpus signature's generations, also
            // written out (`--sync-cases`, `--lowering-cases`, the stream
            // lint cap; lowering is signed under every generation).
            let (budget, every) = match t.check() {
                Check::Sync => (CaseBudget::SyncCases, false),
                Check::Lowering => (CaseBudget::LoweringCases, true),
                Check::StreamLint | Check::EngineSync => (CaseBudget::AtMost(100_000), false),
                _ => (CaseBudget::Cases, false),
            };
            assert_eq!(k.case_budget(), budget, "{t}");
            assert_eq!(k.signed_under_every_generation(), every, "{t}");
        }
    }
}
