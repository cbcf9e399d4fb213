//! The [`Subject`] interface: a name, [`Capabilities`], and one method per
//! operation, each answering a typed result or a [`Fault`].

use super::compact::Compact;
use super::engine_sync_types::{EngineProgram, EngineSyncAnswer};
use super::lint_types::LintResult;
use super::lowering_types::{IrInstruction, LoweredModule, ModuleAnswer};
use super::sync_types::{
    BandReading, SyncEntry, SyncFlow, SyncPlanned, SyncProgram, SyncRejected, SyncRun,
    SyncViolation,
};
use super::types::{
    BundleStreamResult, DecodeFail, Decoded, EncodeResult, FieldName, IrAnswer, IrQuery, LutResult,
    LutTable, StreamFail, StreamResult, Validator, Value, Verdict,
};
use std::fmt;

/// What a subject can do, one operation (one LUT table) each: a subject is judged on exactly
/// the ones it declares (docs/subject-protocol.md, "Capabilities"). Sync, StreamLint and
/// EngineSync are the reference pair's only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// SPEC §3.
    ValidateHeader,
    /// SPEC §4.
    ValidatePayload,
    /// SPEC §5.1.
    Decode,
    /// SPEC §5.2.
    Encode,
    /// SPEC §6.
    Lut(LutTable),
    /// SPEC §5.3 custom-op stream rules.
    ValidateStream,
    /// SPEC §7.
    IrGates,
    /// SPEC §8.
    Sync,
    /// SPEC §5.4.
    Lower,
    /// SPEC §5.3 "Linting a stream".
    StreamLint,
    /// SPEC §11.
    EngineSync,
}

impl Capability {
    /// What no protocol op carries: their targets are never "not supported" by a subject.
    pub const REFERENCE_ONLY: Capabilities =
        Capabilities::of(&[Capability::Sync, Capability::StreamLint]);

    /// Every capability: the bundle operations, the tables, the rest; the protocol ops in
    /// protocol order ([`Capabilities::ops`], whose position is their `TPB_CAP_*` bit).
    pub const ALL: [Capability; 10 + LutTable::ALL.len()] = {
        use Capability as C;
        const HEAD: [Capability; 4] = [C::ValidateHeader, C::ValidatePayload, C::Decode, C::Encode];
        const TAIL: [Capability; 6] = [
            C::ValidateStream,
            C::IrGates,
            C::Sync,
            C::Lower,
            C::StreamLint,
            C::EngineSync,
        ];
        let mut all = [C::Decode; 10 + LutTable::ALL.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = if i < HEAD.len() {
                HEAD[i]
            } else if i < HEAD.len() + LutTable::ALL.len() {
                C::Lut(LutTable::ALL[i - HEAD.len()])
            } else {
                TAIL[i - HEAD.len() - LutTable::ALL.len()]
            };
            i += 1;
        }
        all
    };

    /// The protocol's op name, `lut:<table>` for a table.
    pub fn name(self) -> &'static str {
        match self {
            Capability::ValidateHeader => Validator::Header.op(),
            Capability::ValidatePayload => Validator::Payload.op(),
            Capability::Decode => "decode",
            Capability::Encode => "encode",
            Capability::Lut(t) => t.capability_name(),
            Capability::ValidateStream => "validate_stream",
            Capability::IrGates => "ir_gates",
            Capability::Sync => "sync",
            Capability::Lower => "lower",
            Capability::StreamLint => "stream_lint",
            Capability::EngineSync => "engine_sync",
        }
    }

    /// The protocol's `"op"` that carries it (`lut` every table's), if one does.
    pub fn op(self) -> Option<&'static str> {
        use Capability as C;
        match self {
            C::Lut(_) => Some("lut"),
            C::IrGates | C::Sync | C::StreamLint | C::EngineSync => None,
            _ => Some(self.name()),
        }
    }

    /// The protocol's `lut` op: a hello's `lut` sets every table's bit, so the first stands for it.
    pub const LUT_OP: Capability = Capability::Lut(LutTable::ALL[0]);

    pub fn of_validator(v: Validator) -> Capability {
        match v {
            Validator::Header => Capability::ValidateHeader,
            Validator::Payload => Capability::ValidatePayload,
        }
    }

    /// Operations from bit 0, tables from bit 16.
    const fn bit(self) -> u32 {
        const _: () = assert!(LutTable::ALL.len() <= 16, "Capabilities holds 16 tables");
        let i = match self {
            Capability::ValidateHeader => 0,
            Capability::ValidatePayload => 1,
            Capability::Decode => 2,
            Capability::Encode => 3,
            Capability::ValidateStream => 4,
            Capability::IrGates => 5,
            Capability::Sync => 6,
            Capability::Lower => 7,
            Capability::StreamLint => 8,
            Capability::EngineSync => 9,
            Capability::Lut(t) => 16 + t as u32,
        };
        1 << i
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(u32);

impl Capabilities {
    pub const NONE: Capabilities = Capabilities(0);

    pub const fn of(cs: &[Capability]) -> Capabilities {
        let mut bits = 0;
        let mut i = 0;
        while i < cs.len() {
            bits |= cs[i].bit();
            i += 1;
        }
        Capabilities(bits)
    }

    pub const LUTS: Capabilities = Capabilities(((1 << LutTable::ALL.len()) - 1) << 16);

    pub const fn all() -> Capabilities {
        Capabilities::of(&Capability::ALL)
    }

    pub fn has(self, c: Capability) -> bool {
        self.0 & c.bit() != 0
    }

    pub fn covers(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn union(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }

    pub fn intersection(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 & other.0)
    }

    /// Those of `other` not in the set.
    pub fn missing(self, other: Capabilities) -> Capabilities {
        Capabilities(other.0 & !self.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL.into_iter().filter(move |c| self.has(*c))
    }

    pub fn of_op(op: &str) -> Capabilities {
        Capability::ALL
            .into_iter()
            .filter(|c| c.op() == Some(op))
            .collect()
    }

    pub fn ops(self) -> Vec<&'static str> {
        let mut ops: Vec<&str> = self.iter().filter_map(Capability::op).collect();
        ops.dedup();
        ops
    }
}

impl FromIterator<Capability> for Capabilities {
    fn from_iter<I: IntoIterator<Item = Capability>>(cs: I) -> Capabilities {
        Capabilities(cs.into_iter().fold(0, |bits, c| bits | c.bit()))
    }
}

impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Capability::name).collect();
        f.write_str(&names.join(", "))
    }
}

/// Why a subject gave no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    Unsupported,
    /// Died (signal, exit, load failure).
    Crash(String),
    Timeout(String),
    /// Answered something the protocol does not allow.
    Protocol(String),
    /// The harness's transport lost or misplaced the answer: never the subject's fault.
    Harness(String),
    /// Never asked: the operation was given up, or the run is stopping (the judge: a crash).
    NotSent(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Unsupported => f.write_str("unsupported"),
            Fault::Crash(m) | Fault::NotSent(m) => write!(f, "crash: {m}"),
            Fault::Timeout(m) => write!(f, "timeout: {m}"),
            Fault::Protocol(m) => write!(f, "protocol error: {m}"),
            Fault::Harness(m) => write!(f, "harness fault: {m}"),
        }
    }
}

pub type Reply<T> = Result<T, Fault>;

/// A batch of inputs the judge is about to ask one operation about ([`Transport::prefetch`]),
/// named by the [`Subject`] method asked.
#[derive(Clone, Copy, Debug)]
pub enum Batch<'a> {
    Validate(Validator, &'a [[u8; 64]]),
    Decode(&'a [[u8; 64]]),
    /// Ordinal by ordinal, the tables of one ordinal in turn.
    Lut(&'a [LutTable], &'a [u32]),
    /// SPEC §5.1 roundtrip: decode, then encode of what it decoded, twice (on its own decode
    /// and on the reference's).
    Roundtrip(&'a [[u8; 64]]),
    /// `validate_stream`.
    Streams(&'a [std::sync::Arc<Vec<u8>>]),
    /// `lower_module`.
    Lower(&'a [std::sync::Arc<Vec<IrInstruction>>]),
}

/// An operation asked one input at a time ([`Subject::asked`]), named by its method.
#[derive(Clone, Copy, Debug)]
pub enum Question<'a> {
    Decode(&'a [u8; 64]),
    Encode(u8, &'a [(FieldName, Value)]),
    ValidateStream(&'a [u8]),
    LowerModule(&'a [IrInstruction]),
}

/// The typed answer to a [`Question`] of the same operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Said {
    Decode(Result<Decoded, DecodeFail>),
    Encode(EncodeResult),
    ValidateStream(Result<(), StreamFail>),
    LowerModule(ModuleAnswer),
}

impl Said {
    fn misplaced(self) -> Fault {
        Fault::Harness(format!("answer to another operation: {self:?}"))
    }
}

/// The default methods of [`Subject`] and [`Reference`], each declared once: what the wrapped
/// subject answers ([`Subject::forwards_to`]), else `Unsupported`, or (`= Op`) else what
/// [`Subject::asked`] answers to `Question::Op` (an answer of another operation is the
/// harness's fault).
macro_rules! forwarded {
    ($($(#[$doc:meta])* fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty $(= $op:ident)?;)*) => {
        $($(#[$doc])*
        fn $name(&self $(, $arg: $ty)*) -> $ret {
            match self.forwards_to() {
                Some(s) => s.$name($($arg),*),
                None => forwarded!(@else self, ($($arg),*) $($op)?),
            }
        })*
    };
    (@else $self:ident, ($($arg:ident),*)) => {
        Err(Fault::Unsupported)
    };
    (@else $self:ident, ($($arg:ident),*) $op:ident) => {
        match $self.asked(Question::$op($($arg),*))? {
            Said::$op(r) => Ok(r),
            other => Err(other.misplaced()),
        }
    };
}

/// One implementation of SPEC.md, as the judge sees it. Every operation defaults to
/// [`Fault::Unsupported`] (a wrapper: what [`Subject::forwards_to`] answers; else, for some,
/// what [`Subject::asked`] answers), so a new operation is one method here. Implementations
/// must not panic (the judge reports a `Panic` divergence).
pub trait Subject {
    /// e.g. `core`, `oracle`, `cmd:python3 x.py`.
    fn name(&self) -> &str;

    /// Fixed once open (the judge reads them once); a target needing more is "not supported".
    fn capabilities(&self) -> Capabilities;

    forwarded! {
        /// SPEC §3 / §4.
        fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict>;

        /// SPEC §5.1.
        fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> = Decode;

        /// SPEC §5.2 encoder: `Err(field)` names the first bad field.
        fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> = Encode;

        /// SPEC §5.3 stream rules only: the first stream error, or valid.
        fn validate_stream(&self, bytes: &[u8]) -> Reply<Result<(), StreamFail>> = ValidateStream;

        /// SPEC §6.
        fn lut(&self, table: LutTable, input: u32) -> Reply<LutResult>;

        /// SPEC §5.4 as `tpbconform lower` answers: the whole module, or the first rejection.
        fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> = LowerModule;
    }

    /// The hook of a subject whose answers travel: the [`Question`] operations default to it.
    fn asked(&self, _q: Question<'_>) -> Reply<Said> {
        Err(Fault::Unsupported)
    }

    /// How its answers travel (an external subject); none in process.
    fn transport(&self) -> Option<&dyn Transport> {
        None
    }

    /// A wrapper's inner subject, which answers what the wrapper does not implement.
    fn forwards_to(&self) -> Option<&dyn Reference> {
        None
    }
}

/// What only the reference pair (core, the oracle) answers: no protocol operation carries
/// these, so the kinds that need them compare core with the oracle alone.
pub trait Reference: Subject {
    forwarded! {
        /// SPEC §5.3.
        fn parse_stream(&self, bytes: &[u8]) -> Reply<StreamResult>;

        /// SPEC §5.3 "Bundle stream" (DL-12): with 0xD9 + 0xDA pairing.
        fn parse_bundle_stream(&self, bytes: &[u8]) -> Reply<BundleStreamResult>;

        /// SPEC §5.3 "Linting a stream" (D-27, D-28) of whole bundles.
        fn lint_stream(&self, bytes: &[u8]) -> Reply<LintResult>;

        /// SPEC §11: one subgraph's engines run against their semaphores and events.
        fn engine_sync(&self, p: &EngineProgram) -> Reply<EngineSyncAnswer>;

        /// SPEC §7.
        fn ir(&self, q: &IrQuery) -> Reply<IrAnswer>;

        /// SPEC §5.4: `insns`, in order, into one module of the subject's generation.
        fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule>;

        /// SPEC §5.4 / §5.1: whether `records` (what `insn` lowered to) decode and give back
        /// the instruction's wire fields; why not, as text.
        fn check_lowered(
            &self,
            insn: &IrInstruction,
            records: &[[u8; 64]]
        ) -> Reply<Result<(), String>>;

        /// SPEC §8 `alloc_semaphores` (a planner also plans and stamps `flows`).
        fn sync_plan(
            &self,
            p: &SyncProgram,
            flows: &[SyncFlow]
        ) -> Reply<Result<SyncPlanned, SyncRejected>>;

        /// SPEC §8: runs `plan` for `p` (vetted by `sync_plan` as `ticket`) under the
        /// interleaving `schedule` picks.
        fn sync_simulate(
            &self,
            p: &SyncProgram,
            ticket: u64,
            plan: &[SyncEntry],
            schedule: &[u8]
        ) -> Reply<Result<SyncRun, SyncViolation>>;

        /// Reads the events band of `bundle` (the instruction adds `ticks`).
        fn sync_band(&self, bundle: &[u8; 64], ticks: u32) -> Reply<BandReading>;
    }
}

/// [`Subject::validate_stream`] of a reference: its full parse's verdict.
pub fn stream_verdict(
    r: &(impl Reference + ?Sized),
    bytes: &[u8],
) -> Reply<Result<(), StreamFail>> {
    r.parse_stream(bytes).map(|r| r.map(|_| ()))
}

/// [`Subject::lower_module`] of a reference: its whole lowering's answer.
pub fn module_answer(
    r: &(impl Reference + ?Sized),
    insns: &[IrInstruction],
) -> Reply<ModuleAnswer> {
    r.lower(insns).map(|m| m.answer())
}

/// The transport of a subject whose answers travel (an external process or library worker).
pub trait Transport {
    /// A hint: the judge is about to make the calls of `batch`; the subject may answer them all
    /// now, pipelined, calling `tick` as answers arrive (the gate's progress watchdog).
    fn prefetch(&self, batch: Batch<'_>, tick: &dyn Fn());

    /// A hint: the judge will prefetch this very batch next, after other work; what starts here
    /// is collected only by that prefetch.
    fn prefetch_begin(&self, batch: Batch<'_>);

    /// Bulk judging of the batch last prefetched (a validator or LUT batch): for each case `j`
    /// of `batch` that is the held batch's own `j`-th and whose held answer is exactly core's
    /// `reference[j]`, sets `agreed[j]` (judged, agreeing, never served afterwards); the rest
    /// are asked one by one as without it. False when the subject holds no such batch.
    fn vouch(&self, batch: Batch<'_>, reference: &[Compact], agreed: &mut [bool]) -> bool;

    /// The first operation of `needs` the subject is not asked any more (too many faults in a
    /// row, or it cannot be restarted): the judge counts its cases as not run for it.
    fn given_up(&self, needs: Capabilities) -> Option<GivenUp>;
}

impl dyn Subject + '_ {
    #[inline]
    pub fn given_up(&self, needs: Capabilities) -> Option<GivenUp> {
        self.transport()?.given_up(needs)
    }
}

/// An operation a subject is not asked any more, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GivenUp {
    pub op: Capability,
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_capability_has_its_own_bit_and_every_table_is_one() {
        let mut seen = Capabilities::NONE;
        for c in Capability::ALL {
            let one = Capabilities::of(&[c]);
            assert!(!seen.covers(one) || one.is_empty(), "{c:?} shares a bit");
            assert!(!one.is_empty(), "{c:?} has no bit");
            seen = seen.union(one);
        }
        for t in LutTable::ALL {
            assert!(Capability::ALL.contains(&Capability::Lut(t)), "{t:?}");
        }
        // The two validators are two capabilities.
        let header = Capabilities::of(&[Capability::ValidateHeader]);
        assert!(!header.has(Capability::ValidatePayload));
        assert_eq!(header.to_string(), "validate_header");
    }

    /// Answers every question with `said`, as a transport would.
    struct Hook(Said);

    impl Subject for Hook {
        fn name(&self) -> &str {
            "hook"
        }
        fn capabilities(&self) -> Capabilities {
            Capabilities::NONE
        }
        fn asked(&self, _q: Question<'_>) -> Reply<Said> {
            Ok(self.0.clone())
        }
    }

    #[test]
    fn the_asked_operations_answer_through_the_hook() {
        let encoded = Hook(Said::Encode(Ok([7; 64])));
        assert_eq!(encoded.encode(0xD9, &[]), Ok(Ok([7; 64])));
        let streamed = Hook(Said::ValidateStream(Ok(())));
        assert_eq!(streamed.validate_stream(&[1, 2]), Ok(Ok(())));
        // An answer of another operation is the harness's fault.
        for op in [
            encoded.decode(&[0; 64]).err(),
            streamed.lower_module(&[]).err(),
        ] {
            assert!(matches!(op, Some(Fault::Harness(_))), "{op:?}");
        }
    }
}
