//! Staging a work item: the cases its subjects answer up front are generated and handed
//! over before it is judged, and kept for the per-case loop.

use super::config::GateConfig;
use super::coverage::Runner;
use crate::findings::CaseKind;
use crate::generators::case_rng;
use crate::judge::nway::{batch_of, CaseInputs};
use crate::judge::ordinal_from_input;
use crate::kinds::{CaseBuf, Draw, Form, TargetKind};
use crate::subjects::Batch;
use crate::targets::{Check, Target};
use std::ops::Range;
use std::time::{Duration, Instant};

/// One work item (target index, chunk) and its subjects' prefetch inputs. Each generation's
/// batch is a run ([`Run`]) of `kept` bundles, of LUT `ords` (with their input's length: an
/// input of at most 4 bytes is its ordinal's first LE bytes), or of raw `inputs` end to end
/// (`ends`) with what the kind built from them. `kept_at`: per chunk position, 1 + its index
/// there (0: not kept, generated again when judged).
#[derive(Default)]
pub(super) struct Staged {
    pub(super) item: Option<(usize, u64)>,
    kept: Vec<[u8; 64]>,
    ords: Vec<u32>,
    ord_len: Vec<u8>,
    inputs: Vec<u8>,
    ends: Vec<usize>,
    kept_at: Vec<u32>,
    /// Per runner (generation).
    pub(super) runs: Vec<Run>,
    /// Time spent staging (the item's worker time).
    pub(super) took: Duration,
}

/// One generation's share of a [`Staged`] item; `on` when its subjects prefetch it.
#[derive(Default)]
pub(super) struct Run {
    pub(super) on: bool,
    bundles: Range<usize>,
    ords: Range<usize>,
    inputs: Range<usize>,
    built: Option<CaseInputs>,
}

/// Stages work items for one thread; [`Stager::collect`] takes the answers before judging.
pub(super) struct Stager<'a> {
    pub(super) cfg: &'a GateConfig,
    pub(super) planned: &'a [u64],
    pub(super) rs: &'a [Runner],
    pub(super) hashes: &'a [u64],
    pub(super) kinds: &'a [&'a dyn TargetKind],
}

impl Stager<'_> {
    pub(super) fn stage(&self, st: &mut Staged, (ti, k): (usize, u64), one: &mut CaseBuf) {
        let t0 = Instant::now();
        let cfg = self.cfg;
        let t = cfg.targets[ti];
        let kind = self.kinds[ti];
        let chunk = cfg.chunk_of(t);
        let lo = k * chunk;
        let hi = lo.saturating_add(chunk).min(self.planned[ti]);
        st.item = Some((ti, k));
        st.kept.clear();
        st.ords.clear();
        st.ord_len.clear();
        st.kept_at.clear();
        st.inputs.clear();
        st.ends.clear();
        st.runs.resize_with(self.rs.len(), Run::default);
        let lut = matches!(t.check(), Check::Lut(_));
        let reqs = kind.asks_case_inputs(t);
        for (a, (r, run)) in self.rs.iter().zip(&mut st.runs).enumerate() {
            let (first, first_ord, first_in) = (st.kept.len(), st.ords.len(), st.ends.len());
            run.bundles = first..first;
            run.ords = first_ord..first_ord;
            run.inputs = first_in..first_in;
            run.built = None;
            run.on = !r.judge.under_test().is_empty() && t.is_bundle_or_lut();
            run.on |= reqs && r.judge.prefetching(t).next().is_some();
            if !run.on {
                continue;
            }
            // Case `m` of the chunk, if it is this generation's and judged.
            let generate = |m: u64, one: &mut CaseBuf| {
                let i = cfg.shard.case_index(m);
                (cfg.judges(i) && cfg.arch_index(i) == a).then(|| self.generate(ti, r, i, one))
            };
            if st.kept_at.is_empty() {
                st.kept_at.resize(usize::try_from(hi - lo).unwrap_or(0), 0);
            }
            if reqs {
                let first_start = st.inputs.len();
                for m in lo..hi {
                    let Some(form) = generate(m, one) else {
                        continue;
                    };
                    st.inputs.extend_from_slice(one.input(form));
                    st.ends.push(st.inputs.len());
                    if let Some(p) = st.kept_at.get_mut((m - lo) as usize) {
                        *p = u32::try_from(st.ends.len()).unwrap_or(0);
                    }
                }
                run.inputs = first_in..st.ends.len();
                let ends = &st.ends[run.inputs.clone()];
                let from = |k: usize| if k == 0 { first_start } else { ends[k - 1] };
                let mut inputs = (0..ends.len()).map(|k| &st.inputs[from(k)..ends[k]]);
                run.built = kind.case_inputs(t, r.arch, &mut inputs);
                r.judge
                    .prefetch_begin(t, run.built.as_ref().map(CaseInputs::batch));
                continue;
            }
            for m in lo..hi {
                let Some(form) = generate(m, one) else {
                    continue;
                };
                if lut {
                    let input = one.input(form);
                    st.ords.push(ordinal_from_input(input));
                    if let (Ok(len @ 0..=4), Some(p)) = (
                        u8::try_from(input.len()),
                        st.kept_at.get_mut((m - lo) as usize),
                    ) {
                        *p = u32::try_from(st.ords.len()).unwrap_or(0);
                        st.ord_len.push(len);
                    } else {
                        st.ord_len.push(u8::MAX);
                    }
                    continue;
                }
                // The batch holds every case as the validators get it; bundles are kept.
                st.kept.push(one.bundle);
                if form == Form::Bundle {
                    if let Some(p) = st.kept_at.get_mut((m - lo) as usize) {
                        *p = u32::try_from(st.kept.len()).unwrap_or(0);
                    }
                }
            }
            run.bundles = first..st.kept.len();
            run.ords = first_ord..st.ords.len();
        }
        // Handed over once `kept` is complete: it does not move until collected.
        for (r, run) in self
            .rs
            .iter()
            .zip(&st.runs)
            .filter(|(_, run)| run.on && !reqs)
        {
            r.judge.prefetch_begin(t, st.batch(t, run));
        }
        st.took = t0.elapsed();
    }

    /// Case `m` (index `i`) of `st` under generation `a` into `buf`: the kept case, else
    /// generated again (`one` is scratch). Debug builds check a kept case is its index's.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn case_input(
        &self,
        st: &Staged,
        (ti, lo): (usize, u64),
        (m, i): (u64, u64),
        (a, r): (usize, &Runner),
        buf: &mut CaseBuf,
        one: &mut CaseBuf,
    ) -> Form {
        let t = self.cfg.targets[ti];
        let lut = matches!(t.check(), Check::Lut(_));
        let at = st.kept_at.get((m - lo) as usize).copied().unwrap_or(0) as usize;
        let k = at.checked_sub(1);
        let kept_lut = k
            .filter(|_| lut)
            .and_then(|k| Some((*st.ords.get(k)?, *st.ord_len.get(k)?)));
        // A stream or lowering case: its input, and what its kind built in the run's batch.
        let run = st.runs.get(a).filter(|run| run.built.is_some());
        let kept_input = k.zip(run).and_then(|(k, run)| {
            let end = *st.ends.get(k)?;
            let start = k.checked_sub(1).map_or(0, |p| st.ends[p]);
            Some((
                &st.inputs[start..end],
                run,
                k.checked_sub(run.inputs.start)?,
            ))
        });
        buf.built = None;
        let form = match (kept_input, kept_lut, k.and_then(|k| st.kept.get(k))) {
            (Some((input, run, at)), _, _) => {
                buf.bytes.clear();
                buf.bytes.extend_from_slice(input);
                buf.built = run.built.as_ref().and_then(|b| b.get(at));
                Form::Bytes
            }
            (None, Some((o, n @ 0..=4)), _) => {
                // From its ordinal, byte by byte (cheaper than a memcpy call).
                buf.bytes.clear();
                for &b in o.to_le_bytes().iter().take(usize::from(n)) {
                    buf.bytes.push(b);
                }
                Form::Bytes
            }
            (None, None, Some(b)) if !lut => {
                buf.bundle = *b;
                Form::Bundle
            }
            _ => self.generate(ti, r, i, buf),
        };
        #[cfg(debug_assertions)]
        if k.is_some() {
            let again = self.generate(ti, r, i, one);
            assert_eq!(
                one.input(again),
                buf.input(form),
                "kept case {i} of {}",
                t.name()
            );
        }
        #[cfg(not(debug_assertions))]
        let _ = one;
        form
    }

    /// Generates case `i` of target `ti` under runner `r` into `buf`.
    #[inline(always)]
    fn generate(&self, ti: usize, r: &Runner, i: u64, buf: &mut CaseBuf) -> Form {
        let draw = Draw {
            arch: r.arch,
            r: &mut case_rng(self.cfg.seed, self.hashes[ti], i),
            kind: CaseKind::of(i),
        };
        self.kinds[ti].generate(self.cfg.targets[ti], draw, buf)
    }

    pub(super) fn collect(&self, st: &Staged, tick: &dyn Fn()) {
        let Some((ti, _)) = st.item else { return };
        let t = self.cfg.targets[ti];
        for (r, run) in self.rs.iter().zip(&st.runs).filter(|(_, run)| run.on) {
            r.judge.prefetch(t, st.batch(t, run), tick);
        }
    }
}

impl Staged {
    /// Generation `run`'s batch of target `t`: what its kind built, else kept bundles or ordinals.
    fn batch<'a>(&'a self, t: Target, run: &'a Run) -> Option<Batch<'a>> {
        match &run.built {
            Some(b) => Some(b.batch()),
            None => batch_of(
                t,
                &self.kept[run.bundles.clone()],
                &self.ords[run.ords.clone()],
            ),
        }
    }
}
