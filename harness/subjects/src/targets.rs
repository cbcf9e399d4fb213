//! The target registry: every differential target (one property on one input), stated once,
//! in report order. Adding a target = adding a row here (plus, for a new fuzz target, its fuzz
//! file, `[[bin]]`, dictionary and seed folder).

use crate::subjects::{Capabilities, Capability as C, LutTable, Validator};
use std::fmt;
use std::str::FromStr;

/// The kinds of target, one row each: the kind's module in the judge's
/// `kinds/` and its value, then the [`Check`] variants it judges. [`Check`]
/// is made from these rows, and so are the judge's `mod` lines and
/// `kinds::of` (`kinds/mod.rs` expands them): a new kind is its file
/// and a row here (with its target rows in [`TARGETS`]).
#[macro_export]
macro_rules! for_each_kind {
    ($then:ident) => {
        $then! {
            validator::VALIDATOR => {
                /// One bundle (first 64 bytes, zero-padded) through a SPEC §3 / §4 validator.
                Validator(Validator),
            }
            decode::DECODE => {
                /// One bundle through the SPEC §5.1 decoder: same fields, or same failure.
                Decode,
                /// One bundle: SPEC §5.1 `encode(decode(b)) == b`, each side and crosswise.
                Roundtrip,
            }
            custom_op::CustomOpKind => {
                /// A small stream program mapped to a bundle stream
                /// (`judge::stream_from_input`), through the SPEC §5.3 parser.
                StreamProgram,
                /// The raw bytes as a bundle stream, through the SPEC §5.3 parser.
                StreamRaw,
            }
            lut::LutKind => {
                /// A `u32` LE ordinal through one SPEC §6 table.
                Lut(LutTable),
            }
            ir_gate::IrGateKind => {
                /// One SPEC §7 IR query (`judge::ir_query_from_input`).
                Ir,
            }
            sync_handshake::SyncHandshakeKind => {
                /// A generated program: the semaphore model vs the simulator (SPEC §8).
                Sync,
            }
            collective_lowering::CollectiveLoweringKind => {
                /// Generated IR collectives: core's lowering vs the oracle's, plus the
                /// lowering properties (SPEC §5.4).
                Lowering,
            }
            stream_lint::StreamLintKind => {
                /// A whole instruction stream: core's stream walker vs the oracle's
                /// (SPEC §5.3 "Linting a stream").
                StreamLint,
            }
            engine_sync::EngineSyncKind => {
                /// A generated multi-engine program: core's engine model vs the
                /// oracle's (SPEC §11).
                EngineSync,
            }
            structured::StructuredKind => {
                /// A generator program: labelled cases through every bundle target,
                /// plus streams, LUTs and IR queries (`fuzz_entry`).
                Structured,
            }
        }
    };
}

macro_rules! check_enum {
    ($($module:ident::$kind:ident => {
        $($(#[$doc:meta])* $variant:ident $(($param:ty))?,)+
    })+) => {
        /// What the judge compares for a target, and how its input maps to a
        /// case: one variant per check of a [`for_each_kind`] row.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Check {
            $($($(#[$doc])* $variant $(($param))?,)+)+
        }
    };
}

for_each_kind!(check_enum);

/// One row of the registry.
#[derive(Clone, Copy, Debug)]
pub struct TargetSpec {
    /// Stable snake_case name (reports, `--targets`, replay).
    pub name: &'static str,
    pub check: Check,
    /// Whether the gate generates cases for it (and `--targets` accepts it).
    pub gate: bool,
    /// The corpus folder replayed through it, also its cargo-fuzz target's name
    /// (`tests/architecture.rs` checks the fuzz files exist exactly for these).
    pub folder: &'static str,
    /// A subject lacking one is "not supported" for the target.
    pub needs: Capabilities,
    /// Cases per gate work unit (about a millisecond of work).
    pub chunk: u64,
}

const BUNDLE_CHUNK: u64 = 1024;
const FAST_CHUNK: u64 = 8192;

const fn row(name: &'static str, check: Check, needs: &[C], chunk: u64) -> TargetSpec {
    let needs = Capabilities::of(needs);
    TargetSpec {
        name,
        check,
        gate: true,
        folder: name,
        needs,
        chunk,
    }
}

const HEAD: [TargetSpec; 5] = [
    row(
        "validate_header",
        Check::Validator(Validator::Header),
        &[C::ValidateHeader],
        FAST_CHUNK,
    ),
    row(
        "validate_payload",
        Check::Validator(Validator::Payload),
        &[C::ValidatePayload],
        FAST_CHUNK,
    ),
    row("decode_any", Check::Decode, &[C::Decode], BUNDLE_CHUNK),
    TargetSpec {
        folder: "decode_any",
        ..row(
            "roundtrip",
            Check::Roundtrip,
            &[C::Decode, C::Encode],
            BUNDLE_CHUNK,
        )
    },
    TargetSpec {
        folder: "custom_op_stream",
        ..row(
            "custom_op_group",
            Check::StreamProgram,
            &[C::ValidateStream],
            BUNDLE_CHUNK,
        )
    },
];

const TAIL: [TargetSpec; 7] = [
    row("ir_gates", Check::Ir, &[C::IrGates], FAST_CHUNK),
    row("sync_handshake", Check::Sync, &[C::Sync], 16),
    row("collective_lowering", Check::Lowering, &[C::Lower], 64),
    row("stream_lint", Check::StreamLint, &[C::StreamLint], 64),
    row("engine_sync", Check::EngineSync, &[C::EngineSync], 64),
    TargetSpec {
        gate: false,
        ..row(
            "custom_op_stream",
            Check::StreamRaw,
            &[C::ValidateStream],
            BUNDLE_CHUNK,
        )
    },
    TargetSpec {
        gate: false,
        needs: Capabilities::of(&[
            C::ValidateHeader,
            C::ValidatePayload,
            C::Decode,
            C::Encode,
            C::ValidateStream,
            C::IrGates,
        ])
        .union(Capabilities::LUTS),
        ..row("structured_diff", Check::Structured, &[], BUNDLE_CHUNK)
    },
];

/// The registry, in report order. Each LUT table ([`LutTable::ALL`]) is a target of its own
/// (one capability each) named [`LutTable::target_name`], sharing the corpus folder `luts`.
pub static TARGETS: [TargetSpec; HEAD.len() + LutTable::ALL.len() + TAIL.len()] = {
    let mut all = [HEAD[0]; HEAD.len() + LutTable::ALL.len() + TAIL.len()];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < HEAD.len() {
            HEAD[i]
        } else if i < HEAD.len() + LutTable::ALL.len() {
            let t = LutTable::ALL[i - HEAD.len()];
            TargetSpec {
                folder: "luts",
                ..row(t.target_name(), Check::Lut(t), &[C::Lut(t)], FAST_CHUNK)
            }
        } else {
            TAIL[i - HEAD.len() - LutTable::ALL.len()]
        };
        i += 1;
    }
    all
};

/// A handle on one registry row (ordered by registry position).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target(u8);

impl Target {
    pub fn all() -> impl Iterator<Item = Target> {
        (0..TARGETS.len()).map(|i| Target(i as u8))
    }

    pub fn gate_targets() -> Vec<Target> {
        Target::all().filter(|t| t.spec().gate).collect()
    }

    pub const fn at(i: usize) -> Option<Target> {
        if i < TARGETS.len() {
            Some(Target(i as u8))
        } else {
            None
        }
    }

    pub fn from_name(s: &str) -> Option<Target> {
        Target::all().find(|t| t.name() == s)
    }

    pub fn by_check(c: Check) -> Option<Target> {
        Target::all().find(|t| t.check() == c)
    }

    /// Panics if there is none (for tests and constants written in code).
    pub fn named(s: &str) -> Target {
        Target::from_name(s).unwrap_or_else(|| panic!("no target named `{s}` in the registry"))
    }

    #[inline]
    pub fn spec(self) -> &'static TargetSpec {
        &TARGETS[usize::from(self.0)]
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    #[inline]
    pub fn check(self) -> Check {
        self.spec().check
    }

    /// Its case is one 64-byte bundle.
    #[inline]
    pub fn is_bundle(self) -> bool {
        matches!(
            self.check(),
            Check::Validator(_) | Check::Decode | Check::Roundtrip
        )
    }

    pub fn is_bundle_or_lut(self) -> bool {
        self.is_bundle() || matches!(self.check(), Check::Lut(_))
    }

    pub fn rank(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Target({})", self.name())
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a target (or not a gate target, where only those are accepted).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownTarget {
    pub name: String,
    pub expected: Vec<&'static str>,
}

impl fmt::Display for UnknownTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown target `{}` (expected one of: {})",
            self.name,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for UnknownTarget {}

impl FromStr for Target {
    type Err = UnknownTarget;
    fn from_str(s: &str) -> Result<Target, UnknownTarget> {
        Target::from_name(s).ok_or_else(|| UnknownTarget::among(s, Target::all()))
    }
}

impl UnknownTarget {
    fn among(name: &str, targets: impl Iterator<Item = Target>) -> UnknownTarget {
        UnknownTarget {
            name: name.to_string(),
            expected: targets.map(Target::name).collect(),
        }
    }
}

/// A gate target (`--targets`).
pub fn parse_gate_target(s: &str) -> Result<Target, UnknownTarget> {
    Target::from_name(s)
        .filter(|t| t.spec().gate)
        .ok_or_else(|| UnknownTarget::among(s, Target::gate_targets().into_iter()))
}

/// The corpus folders (= cargo-fuzz targets), in registry order.
pub fn folders() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for t in &TARGETS {
        if !v.contains(&t.folder) {
            v.push(t.folder);
        }
    }
    v
}

/// The targets whose folder is `folder`, bit `i` for [`TARGETS`]`[i]` (0: not a fuzz target);
/// `const`, so a fuzz target picks its entry path at compile time.
pub const fn folder_set(folder: &str) -> u32 {
    const _: () = assert!(TARGETS.len() <= 32, "folder_set holds 32 targets");
    let mut set = 0;
    let mut i = 0;
    while i < TARGETS.len() {
        if str_eq(TARGETS[i].folder, folder) {
            set |= 1 << i;
        }
        i += 1;
    }
    set
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The targets that replay `corpus/<folder>/`: those whose folder it is, else the gate target
/// of that name (e.g. `alu_lut`); empty: not a corpus folder.
pub fn folder_targets(folder: &str) -> Vec<Target> {
    let v: Vec<Target> = Target::all()
        .filter(|t| t.spec().folder == folder)
        .collect();
    if v.is_empty() {
        Target::from_name(folder)
            .filter(|t| t.spec().gate)
            .into_iter()
            .collect()
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_parse() {
        let mut names: Vec<&str> = Target::all().map(Target::name).collect();
        for t in Target::all() {
            assert_eq!(t.name().parse::<Target>(), Ok(t));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TARGETS.len());
        assert!(parse_gate_target("structured_diff").is_err());
        assert!(parse_gate_target("nope")
            .unwrap_err()
            .to_string()
            .contains("validate_header"));
    }
}
