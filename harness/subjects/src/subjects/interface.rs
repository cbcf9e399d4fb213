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

/// What a subject can do, one operation (one LUT table) each; a target
/// needs some of these. Each is declared on its own: a subject with only
/// `validate_header`, or only some tables, is judged on exactly those
/// (docs/subject-protocol.md, "Capabilities").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// The SPEC §3 CUSTOM_OP header validator.
    ValidateHeader,
    /// The SPEC §4 CUSTOM_OP payload validator.
    ValidatePayload,
    /// The SPEC §5.1 decoder.
    Decode,
    /// The SPEC §5.2 encoder.
    Encode,
    /// One SPEC §6 lookup table.
    Lut(LutTable),
    /// The SPEC §5.3 custom-op stream rules: the first stream error with
    /// its index, or valid.
    ValidateStream,
    /// The SPEC §7 IR gates.
    IrGates,
    /// The SPEC §8 semaphore model (reference pair only).
    Sync,
    /// The SPEC §5.4 collective lowering.
    Lower,
    /// The SPEC §5.3 "Linting a stream" walker (reference pair only).
    StreamLint,
    /// The SPEC §11 model of a subgraph's engines (reference pair only).
    EngineSync,
}

impl Capability {
    /// The capabilities no subject protocol op carries (the reference pair's only): a subject
    /// under test never has them, so their targets are not "not supported" by it.
    pub const REFERENCE_ONLY: Capabilities =
        Capabilities::of(&[Capability::Sync, Capability::StreamLint]);

    /// Every capability, in a stable order: the four bundle operations, the tables
    /// ([`LutTable::ALL`]), the rest; what protocol ops carry, in protocol order
    /// ([`Capabilities::ops`], whose position is their `TPB_CAP_*` bit).
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

    /// Stable name: the protocol's op name, `lut:<table>` for a table.
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
            C::ValidateHeader | C::ValidatePayload | C::Decode | C::Encode => Some(self.name()),
            C::ValidateStream | C::Lower => Some(self.name()),
            C::IrGates | C::Sync | C::StreamLint | C::EngineSync => None,
        }
    }

    /// The protocol's `lut` operation, which declares tables through one op name: any table's
    /// capability answers [`Capabilities::has`] as the op does (a hello's `lut` sets every
    /// table's bit), so the first table stands for it.
    pub const LUT_OP: Capability = Capability::Lut(LutTable::ALL[0]);

    pub fn of_validator(v: Validator) -> Capability {
        match v {
            Validator::Header => Capability::ValidateHeader,
            Validator::Payload => Capability::ValidatePayload,
        }
    }

    /// Its bit in [`Capabilities`]: operations from bit 0, tables from bit
    /// 16 (room for 16 tables).
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

/// A set of [`Capability`]s.
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

    /// Every table's capability.
    pub const LUTS: Capabilities = Capabilities(((1 << LutTable::ALL.len()) - 1) << 16);

    pub const fn all() -> Capabilities {
        Capabilities::of(&Capability::ALL)
    }

    pub fn has(self, c: Capability) -> bool {
        self.0 & c.bit() != 0
    }

    /// True if every capability of `other` is in the set.
    pub fn covers(self, other: Capabilities) -> bool {
        self.0 & other.0 == other.0
    }

    /// Every capability of either set.
    pub const fn union(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 | other.0)
    }

    /// The capabilities in both sets.
    pub fn intersection(self, other: Capabilities) -> Capabilities {
        Capabilities(self.0 & other.0)
    }

    /// The capabilities of `other` missing from the set.
    pub fn missing(self, other: Capabilities) -> Capabilities {
        Capabilities(other.0 & !self.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in [`Capability::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL.into_iter().filter(move |c| self.has(*c))
    }

    /// The capabilities protocol op `op` carries (none: no such op).
    pub fn of_op(op: &str) -> Capabilities {
        Capability::ALL
            .into_iter()
            .filter(|c| c.op() == Some(op))
            .collect()
    }

    /// The protocol ops carrying the members, in protocol order.
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
    /// The subject does not implement this operation.
    Unsupported,
    /// The subject died (signal, exit, load failure); the text says how.
    Crash(String),
    /// The subject did not answer in time.
    Timeout(String),
    /// The subject answered something the protocol does not allow.
    Protocol(String),
    /// The harness's transport lost, left unwritten or misplaced the
    /// answer: a fault of the harness, never of the subject.
    Harness(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Unsupported => f.write_str("unsupported"),
            Fault::Crash(m) => write!(f, "crash: {m}"),
            Fault::Timeout(m) => write!(f, "timeout: {m}"),
            Fault::Protocol(m) => write!(f, "protocol error: {m}"),
            Fault::Harness(m) => write!(f, "harness fault: {m}"),
        }
    }
}

/// A subject's answer: a typed result, or a [`Fault`].
pub type Reply<T> = Result<T, Fault>;

/// A batch of bundles the judge is about to ask one operation about (see
/// [`Transport::prefetch`]).
#[derive(Clone, Copy, Debug)]
pub enum Batch<'a> {
    /// [`Subject::validate`] with this validator on each bundle.
    Validate(Validator, &'a [[u8; 64]]),
    /// [`Subject::decode`] on each bundle.
    Decode(&'a [[u8; 64]]),
    /// [`Subject::lut`] on each ordinal, through each table in order (the
    /// calls come ordinal by ordinal, the tables of one ordinal in turn).
    Lut(&'a [LutTable], &'a [u32]),
    /// SPEC §5.1 roundtrip on each bundle: [`Subject::decode`], then
    /// [`Subject::encode`] of what it decoded, twice (on its own decode,
    /// and on the reference's, the same fields when the decodes agree).
    Roundtrip(&'a [[u8; 64]]),
    /// [`Subject::validate_stream`] on each stream.
    Streams(&'a [std::sync::Arc<Vec<u8>>]),
    /// [`Subject::lower_module`] on each module.
    Lower(&'a [std::sync::Arc<Vec<IrInstruction>>]),
}

/// An operation asked one input at a time, its input borrowed: what a
/// subject whose answers travel answers through [`Subject::asked`].
#[derive(Clone, Copy, Debug)]
pub enum Question<'a> {
    /// [`Subject::decode`].
    Decode(&'a [u8; 64]),
    /// [`Subject::encode`]: the opcode and the fields.
    Encode(u8, &'a [(FieldName, Value)]),
    /// [`Subject::validate_stream`].
    ValidateStream(&'a [u8]),
    /// [`Subject::lower_module`].
    LowerModule(&'a [IrInstruction]),
}

/// The typed answer to a [`Question`], of the same operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Said {
    /// To [`Question::Decode`].
    Decode(Result<Decoded, DecodeFail>),
    /// To [`Question::Encode`].
    Encode(EncodeResult),
    /// To [`Question::ValidateStream`].
    ValidateStream(Result<(), StreamFail>),
    /// To [`Question::LowerModule`].
    LowerModule(ModuleAnswer),
}

impl Said {
    /// This answer given to a question of another operation: the harness
    /// misplaced it.
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

/// One implementation of SPEC.md, as the judge (the differential engine) sees it.
///
/// Every operation may answer [`Fault::Unsupported`]; the default methods do
/// (a wrapper's: what the subject it wraps answers, [`Subject::forwards_to`];
/// one asked one input at a time: what [`Subject::asked`] answers), so a
/// new operation is one method here and neither a wrapper nor an external
/// subject implements it by hand.
/// Implementations must not panic; if they do, the judge reports a `Panic`
/// divergence.
pub trait Subject {
    /// Short stable name, e.g. `core`, `oracle`, `cmd:python3 x.py`.
    fn name(&self) -> &str;

    /// What the subject implements. The judge skips a target whose
    /// capabilities the subject lacks (reported as "not supported by X").
    /// Fixed once the subject is open: the judge reads them once.
    fn capabilities(&self) -> Capabilities;

    forwarded! {
        /// SPEC §3 / §4 validator on any 64 bytes.
        fn validate(&self, v: Validator, b: &[u8; 64]) -> Reply<Verdict>;

        /// SPEC §5.1 strict decoder.
        fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> = Decode;

        /// SPEC §5.2 encoder: `Err(field)` names the first bad field.
        fn encode(&self, opcode: u8, fields: &[(FieldName, Value)]) -> Reply<EncodeResult> = Encode;

        /// SPEC §5.3 stream rules only (the `validate_stream` operation): the
        /// first stream error with its index, or valid (the reference pair:
        /// [`stream_verdict`] of [`Reference::parse_stream`]).
        fn validate_stream(&self, bytes: &[u8]) -> Reply<Result<(), StreamFail>> = ValidateStream;

        /// A SPEC §6 lookup.
        fn lut(&self, table: LutTable, input: u32) -> Reply<LutResult>;

        /// SPEC §5.4 as the `lower` operation answers (`tpbconform lower`):
        /// the whole module, or the first rejection (the reference pair:
        /// [`module_answer`] of [`Reference::lower`]).
        fn lower_module(&self, insns: &[IrInstruction]) -> Reply<ModuleAnswer> = LowerModule;
    }

    /// The one hook of a subject whose answers travel (an external
    /// subject): the operations asked one input at a time ([`Question`])
    /// default to it, so such a subject implements none of them itself.
    /// Default: `Unsupported`.
    fn asked(&self, _q: Question<'_>) -> Reply<Said> {
        Err(Fault::Unsupported)
    }

    /// How its answers travel, when they travel (an external subject):
    /// batches handed over ahead, vouching, giving up. Default: none (an
    /// in-process subject answers each call as it comes).
    fn transport(&self) -> Option<&dyn Transport> {
        None
    }

    /// A wrapper's inner subject, which answers every operation the wrapper
    /// does not implement itself (default: none, those answer `Unsupported`).
    fn forwards_to(&self) -> Option<&dyn Reference> {
        None
    }
}

/// What only the reference pair (core, the oracle) answers, beside the
/// protocol's operations ([`Subject`]): the full stream parse, the IR
/// gates, the lowering with its check, stream lint, engine and semaphore
/// sync. No protocol operation carries these; the kinds that need them
/// compare core with the oracle alone.
pub trait Reference: Subject {
    forwarded! {
        /// SPEC §5.3 stream parser.
        fn parse_stream(&self, bytes: &[u8]) -> Reply<StreamResult>;

        /// SPEC §5.3 "Bundle stream" (DL-12): the stream parser with 0xD9 +
        /// 0xDA pairing, one span per item or the first error (reference pair
        /// only: no protocol op carries it).
        fn parse_bundle_stream(&self, bytes: &[u8]) -> Reply<BundleStreamResult>;

        /// SPEC §5.3 "Linting a stream" (D-27, D-28): the walk of `bytes`
        /// (whole bundles), one row per instruction and per stream error in
        /// stream order, or why the walker refused them (reference pair only).
        fn lint_stream(&self, bytes: &[u8]) -> Reply<LintResult>;

        /// SPEC §11: the engines of one subgraph run against their semaphores and events, with
        /// what they found (reference pair only).
        fn engine_sync(&self, p: &EngineProgram) -> Reply<EngineSyncAnswer>;

        /// A SPEC §7 IR query.
        fn ir(&self, q: &IrQuery) -> Reply<IrAnswer>;

        /// SPEC §5.4: lowers `insns`, in order, into one module of the
        /// subject's generation.
        fn lower(&self, insns: &[IrInstruction]) -> Reply<LoweredModule>;

        /// SPEC §5.4 / §5.1: whether `records`, what `insn` lowered to, each
        /// decode under the subject's generation and give back the instruction's
        /// wire fields (a collective's kind, CCE op, dtype tag and access
        /// patterns on its 0xD9 and 0xDA); why not, as text (reference pair only).
        fn check_lowered(
            &self,
            insn: &IrInstruction,
            records: &[[u8; 64]]
        ) -> Reply<Result<(), String>>;

        /// SPEC §8 `alloc_semaphores` on `p`: ids, final values and (a planner)
        /// the plan and the stamped bands of `flows`, or the rejection.
        fn sync_plan(
            &self,
            p: &SyncProgram,
            flows: &[SyncFlow]
        ) -> Reply<Result<SyncPlanned, SyncRejected>>;

        /// SPEC §8: runs `plan` for program `p` (vetted by this subject's
        /// [`Subject::sync_plan`] as `ticket`) under the interleaving `schedule`
        /// picks, or the violation.
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

/// The transport of a subject whose answers travel (an external process or
/// library worker), apart from what it answers ([`Subject::transport`]).
pub trait Transport {
    /// A hint: the judge is about to make the calls of `batch`, one per
    /// case. A subject with a high per-call latency (an external process)
    /// may answer them all now, pipelined, and serve the calls from that,
    /// calling `tick` as answers arrive (the gate's progress watchdog);
    /// in-process subjects ignore it.
    fn prefetch(&self, batch: Batch<'_>, tick: &dyn Fn());

    /// A hint ahead of [`Transport::prefetch`]: the judge will prefetch this
    /// very batch (the same slices, unchanged) next, after other work. A
    /// subject that answers batches in another process may start on it now
    /// and collect the answers in that prefetch, so its work overlaps the
    /// judge's; nothing started here is served any other way.
    fn prefetch_begin(&self, batch: Batch<'_>);

    /// Bulk judging of the batch last prefetched ([`Transport::prefetch`];
    /// the judge's `judge_batch` defers the subject's per-case comparisons
    /// of a validator or LUT batch to one call):
    /// `batch` holds the cases the judge asked, in the batch's order, and
    /// `reference[j]` core's answer to case `j`. For each `j` whose held
    /// answer is exactly `reference[j]` and whose case is the batch's own
    /// `j`-th, sets `agreed[j]`: that answer counts as judged and agreeing
    /// and is never served afterwards. The cases left unset are then asked
    /// one by one, as without bulk judging, and served as they would have
    /// been. False (nothing vouched for) when the subject holds no such
    /// batch.
    fn vouch(&self, batch: Batch<'_>, reference: &[Compact], agreed: &mut [bool]) -> bool;

    /// Why the subject is not asked some operation of `needs` any more
    /// (it faulted on too many inputs of that operation in a row, or the
    /// whole subject cannot be restarted), if it is not: the first such
    /// operation of `needs`. The judge then skips it on a target needing
    /// that operation, counts the case as not run for it
    /// ([`crate::judge::Judge::not_run`]), and goes on judging it on its
    /// other operations.
    fn given_up(&self, needs: Capabilities) -> Option<GivenUp>;
}

impl dyn Subject + '_ {
    /// [`Transport::given_up`] of its transport (none: never given up).
    #[inline]
    pub fn given_up(&self, needs: Capabilities) -> Option<GivenUp> {
        self.transport()?.given_up(needs)
    }
}

/// An operation a subject is not asked any more ([`Transport::given_up`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GivenUp {
    /// The operation (a LUT: its table).
    pub op: Capability,
    /// Why (the first faults, or why the whole subject was given up).
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
