//! The [`TargetKind`] trait every kind implements, and the case storage it
//! generates into.

use crate::generation::Generation;
use crate::generators::{gate_inputs, CaseKind, SplitMix64};
use crate::judge::nway::{CaseInputs, Judge};
use crate::judge::pair::guard;
use crate::judge::{Class, Divergence, Filed, Outcome};
use crate::reach::Reach;
use crate::subjects::Reply;
use crate::targets::Target;

/// What [`TargetKind::generate`] draws a gate case from.
pub struct Draw<'a> {
    pub arch: Generation,
    pub r: &'a mut SplitMix64,
    pub kind: CaseKind,
}

/// Where [`TargetKind::generate`] wrote the case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// In [`CaseBuf::bundle`] (one 64-byte bundle).
    Bundle,
    /// In [`CaseBuf::bytes`].
    Bytes,
}

/// A gate case's storage, reused from case to case (the hot loop does not
/// allocate).
#[derive(Clone, Debug)]
pub struct CaseBuf {
    pub bundle: [u8; 64],
    pub bytes: Vec<u8>,
    /// What the case's kind built from it for the subjects under test
    /// ([`TargetKind::case_inputs`]), when the caller kept it: the case is
    /// then judged on that stream or module, the one they were asked.
    pub built: Option<crate::judge::nway::Built>,
}

impl Default for CaseBuf {
    fn default() -> Self {
        CaseBuf {
            bundle: [0; 64],
            bytes: Vec::with_capacity(2048),
            built: None,
        }
    }
}

impl CaseBuf {
    /// The case [`TargetKind::generate`] wrote, as `form` says.
    #[inline]
    pub fn input(&self, form: Form) -> &[u8] {
        match form {
            Form::Bundle => &self.bundle,
            Form::Bytes => &self.bytes,
        }
    }
}

/// What [`TargetKind::run`] says about one case.
#[derive(Debug)]
pub struct Ran {
    pub outcome: Outcome,
    /// The coverage key: `None` when it is core's recorded verdict
    /// ([`crate::judge::record`]), else the kind's own.
    pub key: Option<String>,
    /// Whether the case was counted into the reach it was given.
    pub classified: bool,
}

impl Ran {
    /// `outcome`, keyed by core's recorded verdict.
    pub fn recorded(outcome: Outcome, classified: bool) -> Ran {
        let key = None;
        Ran {
            outcome,
            key,
            classified,
        }
    }

    /// A kind's own verdict: its divergences and coverage key, and whether
    /// the case was counted into the reach it was given.
    pub fn keyed(d: impl IntoIterator<Item = Divergence>, key: String, classified: bool) -> Ran {
        Ran {
            outcome: Outcome(d.into_iter().collect()),
            key: Some(key),
            classified,
        }
    }
}

/// Which gate budget caps a kind's generated cases per target
/// ([`TargetKind::case_budget`]; the gate's `GateConfig::cases_for`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseBudget {
    /// `--cases` alone.
    Cases,
    /// `--cases`, at most `--sync-cases`.
    SyncCases,
    /// `--cases`, at most `--lowering-cases`.
    LoweringCases,
    /// `--cases`, at most this many.
    AtMost(u64),
}

/// One kind of differential target.
pub trait TargetKind: Sync {
    /// Stable name of the kind (docs, `ARCHITECTURE.md`).
    fn name(&self) -> &'static str;

    /// Generates a case of target `t` as `d` says (generation, PRNG, case
    /// kind) into `buf`; says which half of `buf` holds it. Case `i` of a gate is
    /// a pure function of `r`'s seed ([`crate::generators::case_rng`]).
    /// Default: length-banded random bytes
    /// ([`gate_inputs::banded_bytes`]), for kinds that build their case from
    /// bytes (sync programs, lowering modules, generator programs).
    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        gate_inputs::banded_bytes(d.r, d.kind, &mut buf.bytes);
        Form::Bytes
    }

    /// Runs the raw `input` of `t` (mapping in [`crate::judge::input_map`])
    /// on each subject of `e` and compares the answers. A kind defines this
    /// or [`TargetKind::run`] (each defaults to the other).
    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        self.run(e, t, input, None).outcome
    }

    /// [`TargetKind::compare`] with the coverage key of the case and, given
    /// `reach`, its reach classes counted ([`TargetKind::record_reach`]; a
    /// kind may count them from what the comparison computed).
    fn run(&self, e: &Judge, t: Target, input: &[u8], reach: Option<&mut Reach>) -> Ran {
        let outcome = self.compare(e, t, input);
        let classified = reach.is_some_and(|r| self.record_reach(t, r, input));
        Ran::recorded(outcome, classified)
    }

    /// Whether an input of the kind is about every generation, so that the
    /// fuzz entries run it under each of [`Generation::ALL`]
    /// ([`TargetKind::check_every_generation`]) and its corpus signature (`minimize`) joins
    /// its runs under each (default: no, `e`'s or the default generation only).
    fn about_every_generation(&self) -> bool {
        false
    }

    /// Runs `input` under every generation the kind's inputs are about
    /// (fuzz entries); the first divergence, with its generation when the
    /// kind runs several (the first in [`Generation::ALL`] order, under the
    /// reference pair only), else under `e`'s generation, none named.
    fn check_every_generation(
        &self,
        e: &Judge,
        t: Target,
        input: &[u8],
    ) -> Option<(Option<Generation>, Divergence)> {
        if !self.about_every_generation() {
            return self
                .compare(e, t, input)
                .into_iter()
                .next()
                .map(|d| (None, d));
        }
        Generation::ALL.into_iter().find_map(|arch| {
            let e = Judge::open(&[], arch).ok()?;
            let d = self.compare(&e, t, input).into_iter().next()?;
            Some((Some(arch), d))
        })
    }

    /// Declares the reach classes the kind's generated cases are counted
    /// into (none by default).
    fn declare_reach(&self, _t: Target, _reach: &mut Reach) {}

    /// Counts the reach classes of one generated case; `true` when the case
    /// was classified (the gate then counts its generation too).
    fn record_reach(&self, _t: Target, _reach: &mut Reach, _input: &[u8]) -> bool {
        false
    }

    /// Which budget caps the gate's generated cases of the kind's targets.
    fn case_budget(&self) -> CaseBudget {
        CaseBudget::Cases
    }

    /// The kind's own corpus signature of `input` for `minimize` (its verdict
    /// and outcome halves), when the coverage key of [`TargetKind::run`] is
    /// too coarse to tell seeds apart (default: none, use that key).
    fn corpus_signature(&self, _t: Target, _input: &[u8]) -> Option<(String, String)> {
        None
    }

    /// What `input` becomes as `t`'s case when that is not the input
    /// itself (a stream program's stream), for the report's reading of a
    /// divergence: one line per item (default: none).
    fn case_reading(&self, _t: Target, _input: &[u8]) -> Option<String> {
        None
    }

    /// The bundles `input` puts before the subjects as `t`'s case (one
    /// bundle, or a stream's bundles), for folding a divergence under a
    /// validator divergence one of its bundles already shows (triage); none
    /// when the case is no bundle, or is the validator's own (default: none).
    fn case_bundles(&self, _t: Target, _input: &[u8]) -> Vec<[u8; 64]> {
        Vec::new()
    }

    /// True if each case of `t` asks the subjects under test one stream or
    /// module ([`TargetKind::case_inputs`]), which they may answer for a
    /// whole batch up front.
    fn asks_case_inputs(&self, t: Target) -> bool {
        let none: &mut dyn Iterator<Item = &[u8]> = &mut std::iter::empty();
        self.case_inputs(t, Generation::default(), none).is_some()
    }

    /// What the cases `inputs` of `t` ask the subjects under test under
    /// `arch` (the batch of [`Judge::prefetch`]); `None` (the default) when
    /// they ask none.
    fn case_inputs(
        &self,
        _t: Target,
        _arch: Generation,
        _inputs: &mut dyn Iterator<Item = &[u8]>,
    ) -> Option<CaseInputs> {
        None
    }
}

/// The whole 64-byte bundles of `bytes`, in order.
pub fn whole_bundles(bytes: &[u8]) -> Vec<[u8; 64]> {
    let bundle = |c: &[u8]| <[u8; 64]>::try_from(c).expect("a chunk of 64 bytes");
    bytes.chunks_exact(64).map(bundle).collect()
}

/// A whole-case kind's divergence on a built case: what it files, and the case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseDivergence {
    pub filed: Box<Filed>,
    pub case: String,
}

impl std::fmt::Display for CaseDivergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &self.filed;
        write!(
            f,
            "{} [{}]: {}\ncase: {}",
            d.key, d.class, d.text, self.case
        )
    }
}

impl std::error::Error for CaseDivergence {}

/// Asks the reference pair `ask` for a whole case of kind `kind` under [`guard`]: both
/// answers, or what to file for a fault (`<kind>:<class>`, `<op>: <fault>`) or a panic.
pub fn both_answers<T>(
    kind: &str,
    op: &str,
    ask: impl FnOnce() -> (Reply<T>, Reply<T>),
) -> Result<(T, T), Filed> {
    match guard(ask) {
        Ok((Ok(c), Ok(o))) => Ok((c, o)),
        Ok((Err(f), _) | (_, Err(f))) => {
            let class = Class::of_fault(&f);
            let key = format!("{kind}:{}", class.name());
            Err(Filed::new(class, key, format!("{op}: {f}")))
        }
        Err(m) => Err(panicked(kind, m)),
    }
}

/// What a whole-case kind files for a panic with `message`.
pub fn panicked(kind: &str, message: String) -> Filed {
    Filed::new(
        Class::Panic,
        format!("{kind}:panic"),
        format!("PANIC: {message}"),
    )
}
