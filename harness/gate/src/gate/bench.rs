//! Core's in-process rate on the very cases (indices, generations, operations) a subject
//! under test was judged on, for the summary's comparison with the subject's rate.

use super::config::GateConfig;
use super::outcome::{ExternalRun, GateRun};
use crate::findings::CaseKind;
use crate::generation::Generation;
use crate::generators::{case_rng, name_hash};
use crate::judge::{bundle_from_input, ordinal_from_input};
use crate::kinds::{self, CaseBuf, Draw};
use crate::subjects::registry;
use crate::targets::{Check, Target};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Cases per target core's rate is measured on (generating them after the run is what costs).
pub const CORE_RATE_CASES: u64 = 10_000;

/// The timed passes repeat this long, so the figure is not one clock tick.
const CORE_RATE_MIN_TIME: std::time::Duration = std::time::Duration::from_millis(2);

/// The first `n` cases of `t` judged on a subject serving `served` ([`GateConfig::arches`]).
pub fn judged_cases(
    cfg: &GateConfig,
    t: Target,
    served: &[bool],
    n: u64,
) -> Vec<(u64, Generation)> {
    let arches = cfg.arches();
    if !served.iter().any(|s| *s) {
        return Vec::new();
    }
    cfg.shard
        .case_ids(cfg.cases_for(t))
        .take_while(|&i| cfg.judges(i))
        .filter_map(|i| {
            let a = cfg.arch_index(i);
            served
                .get(a)
                .copied()
                .unwrap_or(false)
                .then(|| (i, arches[a.min(arches.len() - 1)]))
        })
        .take(usize::try_from(n).unwrap_or(usize::MAX))
        .collect()
}

/// Cases per second core answers on `cases` of `t`, doing what a subject is asked (generated
/// before the clock); `None` unless [`Target::is_bundle_or_lut`] with some case.
pub fn core_rate(seed: u64, t: Target, cases: &[(u64, Generation)]) -> Option<f64> {
    if !t.is_bundle_or_lut() || cases.is_empty() {
        return None;
    }
    let h = name_hash(t.name());
    let kind = kinds::of(t);
    // The inputs back to back in one buffer: (core of its generation, start, length).
    let cores = Generation::ALL.map(registry::core_for);
    let mut bytes: Vec<u8> = Vec::new();
    let mut buf = CaseBuf::default();
    let spans: Vec<(usize, usize, usize)> = cases
        .iter()
        .map(|&(i, arch)| {
            let draw = Draw {
                arch,
                r: &mut case_rng(seed, h, i),
                kind: CaseKind::of(i),
            };
            let form = kind.generate(t, draw, &mut buf);
            let input = buf.input(form);
            let start = bytes.len();
            bytes.extend_from_slice(input);
            let core = Generation::ALL.iter().position(|&a| a == arch);
            (core.unwrap_or(0), start, input.len())
        })
        .collect();
    let inputs = spans
        .iter()
        .map(|&(c, start, len)| (&*cores[c], &bytes[start..start + len]));
    let start = Instant::now();
    let mut passes = 0u32;
    loop {
        for (core, input) in inputs.clone() {
            let b = bundle_from_input(input);
            match t.check() {
                Check::Validator(v) => {
                    let _ = black_box(core.validate(v, black_box(&b)));
                }
                Check::Decode => {
                    let _ = black_box(core.decode(black_box(&b)));
                }
                Check::Lut(table) => {
                    let ord = ordinal_from_input(input);
                    let _ = black_box(core.lut(table, black_box(ord)));
                }
                _ => {
                    if let Ok(Ok(d)) = core.decode(black_box(&b)) {
                        let _ = black_box(core.encode(d.opcode, &d.fields));
                        let _ = black_box(core.encode(d.opcode, &d.fields));
                    }
                }
            }
        }
        passes += 1;
        if start.elapsed() >= CORE_RATE_MIN_TIME || passes >= 1000 {
            break;
        }
    }
    let s = start.elapsed().as_secs_f64();
    (s > 0.0).then(|| f64::from(passes) * spans.len() as f64 / s)
}

/// [`core_rate`] of each job on `threads` threads (one each); equal jobs are measured once.
pub fn core_rates(
    seed: u64,
    jobs: &[(Target, Vec<(u64, Generation)>)],
    threads: usize,
) -> Vec<Option<f64>> {
    let mut distinct: Vec<usize> = Vec::new();
    let of: Vec<usize> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            distinct
                .iter()
                .position(|&d| jobs[d] == *j)
                .unwrap_or_else(|| {
                    distinct.push(i);
                    distinct.len() - 1
                })
        })
        .collect();
    let next = AtomicUsize::new(0);
    let mut rates: Vec<Option<f64>> = vec![None; distinct.len()];
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.clamp(1, distinct.len().max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some((t, cases)) = distinct.get(k).and_then(|&j| jobs.get(j)) else {
                            break;
                        };
                        mine.push((k, core_rate(seed, *t, cases)));
                    }
                    mine
                })
            })
            .collect();
        for w in workers {
            for (k, r) in w.join().unwrap_or_default() {
                rates[k] = r;
            }
        }
    });
    of.iter().map(|&k| rates[k]).collect()
}

/// Each external subject's statistics with core's rate on its first [`CORE_RATE_CASES`] cases
/// per target, weighted by its cases there (threaded: serially ~35 ms of wall, issue 19).
pub fn external_runs(cfg: &GateConfig, run: &GateRun) -> Vec<ExternalRun> {
    let stats = crate::external::stats();
    let n_arch = cfg.arches().len();
    // Per subject: name, statistics, judged cases, per timed target (weight, job index).
    let mut jobs = Vec::new();
    let subjects: Vec<_> = cfg
        .subjects
        .iter()
        .enumerate()
        .filter_map(|(k, spec)| {
            let name = spec.to_string();
            let st = stats.get(&name)?.clone();
            let judged = run.subject_judged.get(k).cloned().unwrap_or_default();
            let served: Vec<bool> = (0..n_arch)
                .map(|a| judged.by_arch.get(a).is_some_and(|n| *n > 0))
                .collect();
            let mut weights = Vec::new();
            for (t, _) in &run.targets {
                let generated = judged.generated_on(*t);
                if generated == 0 || !t.is_bundle_or_lut() {
                    continue;
                }
                let sample = judged_cases(cfg, *t, &served, generated.min(CORE_RATE_CASES));
                weights.push((generated.saturating_add(judged.replayed_on(*t)), jobs.len()));
                jobs.push((*t, sample));
            }
            Some((name, st, judged, weights))
        })
        .collect();
    let rates = core_rates(cfg.seed, &jobs, cfg.threads);
    subjects
        .into_iter()
        .map(|(name, st, judged, weights)| {
            let (mut w, mut secs) = (0u64, 0f64);
            for (cases, j) in weights {
                if let Some(r) = rates.get(j).copied().flatten() {
                    w = w.saturating_add(cases);
                    secs += cases as f64 / r;
                }
            }
            ExternalRun {
                spec: name,
                stats: st,
                cases: judged.total(),
                core_rate: (secs > 0.0).then(|| w as f64 / secs),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Shard;

    #[test]
    fn judged_cases_are_the_shards_capped_indices_of_the_served_generations() {
        let cfg = GateConfig {
            cases: 100,
            shard: Shard { index: 0, count: 2 },
            subject_cases: Some(40),
            arches: Generation::ALL.to_vec(),
            ..GateConfig::default()
        };
        let t = Target::all().next().expect("a target");
        // Serves v2 and v4: case i runs under Generation::ALL[i % 4].
        let served = [true, false, true, false];
        let want: Vec<(u64, Generation)> = (0..40u64)
            .filter(|i| i % 2 == 0 && (i % 4 == 0 || i % 4 == 2))
            .map(|i| (i, Generation::ALL[(i % 4) as usize]))
            .collect();
        assert_eq!(judged_cases(&cfg, t, &served, 1000), want);
        assert_eq!(judged_cases(&cfg, t, &served, 3), want[..3].to_vec());
        // Serving v3 only, shard 0/2 runs no v3 case; serving nothing: none.
        assert!(judged_cases(&cfg, t, &[false, true, false, false], 1000).is_empty());
        assert!(judged_cases(&cfg, t, &[false; 4], 1000).is_empty());
        // Uncapped: every index of the shard.
        let all = GateConfig {
            subject_cases: None,
            ..cfg
        };
        assert_eq!(judged_cases(&all, t, &[true; 4], 1000).len(), 50);
        assert!(core_rate(all.seed, t, &judged_cases(&all, t, &[true; 4], 10)).is_some());
    }

    #[test]
    fn core_rates_answer_each_job_in_order_measuring_equal_jobs_once() {
        let cfg = GateConfig {
            cases: 100,
            arches: Generation::ALL.to_vec(),
            ..GateConfig::default()
        };
        let timed_targets: Vec<Target> = Target::all()
            .filter(|t| t.is_bundle_or_lut())
            .take(2)
            .collect();
        let untimed = Target::all()
            .find(|t| !t.is_bundle_or_lut())
            .expect("an untimed target");
        let (a, b) = (timed_targets[0], timed_targets[1]);
        let cases = |t, n| judged_cases(&cfg, t, &[true; 4], n);
        let jobs = vec![
            (a, cases(a, 50)),
            (untimed, cases(untimed, 50)),
            (b, cases(b, 50)),
            (a, cases(a, 50)),
            (a, Vec::new()),
            (a, cases(a, 40)),
        ];
        for threads in [1, 2, 8] {
            let r = core_rates(cfg.seed, &jobs, threads);
            assert_eq!(r.len(), jobs.len());
            assert!(r[0].is_some() && r[2].is_some() && r[5].is_some(), "{r:?}");
            assert_eq!(r[1], None, "an untimed target has no rate");
            assert_eq!(r[4], None, "no case, no rate");
            // The same job twice: one measurement (two would differ).
            assert_eq!(r[3], r[0]);
        }
        assert!(core_rates(cfg.seed, &[], 2).is_empty());
    }
}
