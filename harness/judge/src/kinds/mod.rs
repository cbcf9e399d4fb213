//! Target kinds: what a target of each [`Check`] does (generate a case,
//! compare the subjects' answers, count reach, shrink), one file per kind
//! behind one trait, [`TargetKind`]; [`of`] is the one table from a
//! registry row's check to its kind (the list: `harness/ARCHITECTURE.md`).

pub mod bundle;
mod kind;

// Declared here, not by `kind_table!`, so that rustfmt reaches them; the
// table's `&module::Kind` arms fail to compile for a row without its module.
pub mod collective_lowering;
pub mod custom_op;
pub mod decode;
pub mod engine_sync;
pub mod ir_gate;
pub mod lut;
pub mod stream_lint;
pub mod structured;
pub mod sync_handshake;
pub mod validator;

pub use kind::{CaseBudget, CaseBuf, CaseDivergence, DescribedCase, Draw, Form, Ran, TargetKind};

use crate::generation::Generation;
use crate::reach::Reach;
use crate::targets::{Check, Target};

/// [`of`], from the rows of `targets::for_each_kind`.
macro_rules! kind_table {
    ($($module:ident::$kind:ident => {
        $($(#[$doc:meta])* $variant:ident $(($param:ty))?,)+
    })+) => {
        /// The table: the kind of target `t`, from its registry row's check.
        pub fn of(t: Target) -> &'static dyn TargetKind {
            match t.check() {
                $($(Check::$variant { .. })|+ => &$module::$kind,)+
            }
        }

        #[cfg(test)]
        mod rows {
            use crate::targets::Check;

            /// The module of the kind of `check` (a kind is named for its file).
            pub(super) fn module_of(check: Check) -> &'static str {
                match check {
                    $($(Check::$variant { .. })|+ => stringify!($module),)+
                }
            }
        }
    };
}

tpb_subjects::for_each_kind!(kind_table);

/// The reach classes the gate declares for `targets` (and, if any, one per generation).
pub fn declared_reach(targets: &[Target], arches: &[Generation]) -> Reach {
    let mut r = Reach::default();
    for &t in targets {
        of(t).declare_reach(t, &mut r);
    }
    if !r.is_empty() {
        let names: Vec<&'static str> = arches.iter().map(|a| a.name()).collect();
        r.declare_with(crate::reach::Field::Generation, &names);
    }
    r
}

#[cfg(test)]
pub(crate) mod test_subjects {
    /// Implements [`crate::subjects::Subject`] for a test's stand-in reference `$t`: named
    /// `$name`, claiming every capability, every operation the trait's default but the
    /// methods after a `;`.
    macro_rules! stand_in_subject {
        ($t:ty, $name:literal $(; $($method:tt)*)?) => {
            impl crate::subjects::Subject for $t {
                fn name(&self) -> &str {
                    $name
                }
                fn capabilities(&self) -> crate::subjects::Capabilities {
                    crate::subjects::Capabilities::all()
                }
                $($($method)*)?
            }
        };
    }
    pub(crate) use stand_in_subject;

    /// A subject that claims every capability and answers every operation
    /// `Unsupported` (the trait's default methods).
    pub(crate) struct Silent;

    stand_in_subject!(Silent, "silent");

    impl crate::subjects::Reference for Silent {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_row_has_a_kind_named_for_its_check() {
        for t in Target::all() {
            let k = of(t);
            // The kind's own name is its file's: a row naming another
            // file's kind value fails.
            assert_eq!(k.name(), rows::module_of(t.check()), "{t}");
            // The gate budget and the generations an input is about, also
            // written out (`--sync-cases`, `--lowering-cases`, the stream
            // lint cap; a module and a stream walk are about every generation).
            let (budget, every) = match t.check() {
                Check::Sync => (CaseBudget::SyncCases, false),
                Check::Lowering => (CaseBudget::LoweringCases, true),
                Check::StreamLint => (CaseBudget::AtMost(100_000), true),
                Check::EngineSync => (CaseBudget::AtMost(100_000), false),
                _ => (CaseBudget::Cases, false),
            };
            assert_eq!(k.case_budget(), budget, "{t}");
            assert_eq!(k.about_every_generation(), every, "{t}");
        }
    }
}
