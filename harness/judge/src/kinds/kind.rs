//! The [`TargetKind`] trait every kind implements, and the case storage it generates into.

use crate::generation::Generation;
use crate::generators::{gate_inputs, CaseKind, SplitMix64};
use crate::judge::nway::{CaseInputs, Judge};
use crate::judge::pair::guard;
use crate::judge::{Answers, Class, Divergence, Filed, Outcome, Signature};
use crate::reach::Reach;
use crate::subjects::{Reference, Reply};
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
    Bundle,
    Bytes,
}

/// A gate case's storage, reused from case to case (the hot loop does not allocate).
#[derive(Clone, Debug)]
pub struct CaseBuf {
    pub bundle: [u8; 64],
    pub bytes: Vec<u8>,
    /// What the case's kind built for the subjects under test ([`TargetKind::case_inputs`]),
    /// when the caller kept it: the case is judged on the stream or module they were asked.
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
    /// The coverage key: `None` when it is core's recorded verdict, else the kind's own.
    pub key: Option<String>,
    /// Whether the case was counted into the reach it was given.
    pub classified: bool,
}

impl Ran {
    pub fn recorded(outcome: Outcome, classified: bool) -> Ran {
        let key = None;
        Ran {
            outcome,
            key,
            classified,
        }
    }

    pub fn keyed(d: impl IntoIterator<Item = Divergence>, key: String, classified: bool) -> Ran {
        Ran {
            outcome: Outcome(d.into_iter().collect()),
            key: Some(key),
            classified,
        }
    }
}

/// Which gate budget caps a kind's generated cases per target (`GateConfig::cases_for`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseBudget {
    /// `--cases` (and at most `--sync-cases`, `--lowering-cases`, this many).
    Cases,
    SyncCases,
    LoweringCases,
    AtMost(u64),
}

/// One kind of differential target.
pub trait TargetKind: Sync {
    /// The kind's name: its file's, the module its type is defined in (`kinds/<name>.rs`).
    fn name(&self) -> &'static str {
        let path = std::any::type_name::<Self>();
        path.rsplit("::").nth(1).unwrap_or(path)
    }

    /// Generates a case of `t` into `buf` (a pure function of `d.r`'s seed); says which half
    /// holds it. Default: length-banded random bytes, for kinds that build their case from bytes.
    fn generate(&self, _t: Target, d: Draw<'_>, buf: &mut CaseBuf) -> Form {
        gate_inputs::banded_bytes(d.r, d.kind, &mut buf.bytes);
        Form::Bytes
    }

    /// Runs the raw `input` of `t` on each subject of `e` and compares the answers. A kind
    /// defines this or [`TargetKind::run`] (each defaults to the other).
    fn compare(&self, e: &Judge, t: Target, input: &[u8]) -> Outcome {
        self.run(e, t, input, None).outcome
    }

    /// [`TargetKind::compare`] with the case's coverage key and, given `reach`, its reach
    /// classes counted.
    fn run(&self, e: &Judge, t: Target, input: &[u8], reach: Option<&mut Reach>) -> Ran {
        let outcome = self.compare(e, t, input);
        let classified = reach.is_some_and(|r| self.record_reach(t, r, input));
        Ran::recorded(outcome, classified)
    }

    /// Whether an input is about every generation: the fuzz entries run it under each, and
    /// its corpus signature joins its runs under each (default: no).
    fn about_every_generation(&self) -> bool {
        false
    }

    /// The first divergence of `input` under every generation it is about (fuzz entries),
    /// with that generation (reference pair only), else under `e`'s, none named.
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

    /// Declares the reach classes the kind's cases are counted into (none by default).
    fn declare_reach(&self, _t: Target, _reach: &mut Reach) {}

    /// Counts the reach classes of one case; `true` when it was classified.
    fn record_reach(&self, _t: Target, _reach: &mut Reach, _input: &[u8]) -> bool {
        false
    }

    fn case_budget(&self) -> CaseBudget {
        CaseBudget::Cases
    }

    /// The kind's own corpus signature of `input` for `minimize` (verdict and outcome
    /// halves), when the coverage key is too coarse to tell seeds apart.
    fn corpus_signature(&self, _t: Target, _input: &[u8]) -> Option<(String, String)> {
        None
    }

    /// What `input` becomes as `t`'s case when that is not the input itself, one line per
    /// item (the report's reading of a divergence).
    fn case_reading(&self, _t: Target, _input: &[u8]) -> Option<String> {
        None
    }

    /// The bundles `input` puts before the subjects as `t`'s case, for folding a divergence
    /// under a validator divergence one of them shows (triage); none for a validator's own.
    fn case_bundles(&self, _t: Target, _input: &[u8]) -> Vec<[u8; 64]> {
        Vec::new()
    }

    /// True if each case of `t` asks the subjects under test one stream or module.
    fn asks_case_inputs(&self, t: Target) -> bool {
        let none: &mut dyn Iterator<Item = &[u8]> = &mut std::iter::empty();
        self.case_inputs(t, Generation::default(), none).is_some()
    }

    /// What the cases `inputs` of `t` ask the subjects under test under `arch` (the batch of
    /// [`Judge::prefetch`]).
    fn case_inputs(
        &self,
        _t: Target,
        _arch: Generation,
        _inputs: &mut dyn Iterator<Item = &[u8]>,
    ) -> Option<CaseInputs> {
        None
    }
}

pub fn whole_bundles(bytes: &[u8]) -> Vec<[u8; 64]> {
    let bundle = |c: &[u8]| <[u8; 64]>::try_from(c).expect("a chunk of 64 bytes");
    bytes.chunks_exact(64).map(bundle).collect()
}

/// The first index where `a` and `b` differ (one being shorter counts), if any.
pub fn first_index_differing<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

/// A whole-case kind's divergence on a built case: what it files, and the case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseDivergence {
    pub filed: Box<Filed>,
    pub case: String,
}

/// Where a whole-case kind files what it finds about `input` of `target`: one description of
/// the reference pair's answers, the signature's sides `sides` (`core`/`oracle`, `model`/`simulator`).
pub struct DescribedCase<'a> {
    target: Target,
    input: &'a [u8],
    names: (&'a str, &'a str),
    sides: (&'static str, &'static str),
}

impl<'a> DescribedCase<'a> {
    pub fn new(
        target: Target,
        input: &'a [u8],
        (left, right): (&'a dyn Reference, &'a dyn Reference),
        sides: (&'static str, &'static str),
    ) -> Self {
        let names = (left.name(), right.name());
        DescribedCase {
            target,
            input,
            names,
            sides,
        }
    }

    /// The divergence `f` of `case`: its description as the left result (the right one empty).
    pub fn divergence(&self, f: Filed, case: String) -> Divergence {
        Divergence {
            target: self.target,
            input: self.input.to_vec(),
            case,
            left_name: self.names.0.to_string(),
            right_name: self.names.1.to_string(),
            left: f.text,
            right: String::new(),
            signature: Signature {
                key: f.key,
                left: self.sides.0.into(),
                right: self.sides.1.into(),
            },
            class: f.class,
            cohorts: Vec::new(),
            answers: Answers::default(),
        }
    }

    /// `judge` of kind `kind` under [`guard`]: its answer, else the divergence of what it filed
    /// or of its panic.
    #[allow(clippy::result_large_err)] // the rare path, as the judge's comparisons
    pub fn guarded<T>(
        &self,
        kind: &str,
        judge: impl FnOnce() -> Result<T, CaseDivergence>,
    ) -> Result<T, Divergence> {
        match guard(judge) {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(d)) => Err(self.divergence(*d.filed, d.case)),
            Err(m) => Err(self.divergence(panicked(kind, m), String::new())),
        }
    }
}

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

/// What a whole-case kind files when the two answers differ: keyed `<kind>:<what differs>`.
pub fn differs(kind: &str, what: &str, text: String) -> Filed {
    Filed::new(Class::DifferentOutput, format!("{kind}:{what}"), text)
}

/// What a whole-case kind files for a panic with `message`.
pub fn panicked(kind: &str, message: String) -> Filed {
    Filed::new(
        Class::Panic,
        format!("{kind}:panic"),
        format!("PANIC: {message}"),
    )
}
