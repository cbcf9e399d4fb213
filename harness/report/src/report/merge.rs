//! One [`ReportModel`] from the verified shard folders of one sharded gate run: the verdict
//! recomputed, divergences deduplicated by [`crate::findings::DedupKey`] with the smallest
//! origin as representative (as the unsharded gate keeps). Contracts: `reports/README.md`.

use super::format::{each, find_or_push};
use super::model::{DivergenceRecord, ReportModel, ShardRef, REACH_CASE};
use super::run_json::{
    CohortMeta, GivenUpMeta, MachineMeta, ReachClass, RunMeta, SubjectMachineMeta, SubjectMeta,
};
use crate::findings::DedupKey;
use crate::gate::{ArchStats, Shard, TargetStats};
use crate::targets::Target;
use std::collections::BTreeMap;
use std::fmt;

use super::shard::{verdict_of, MergeError, ShardReport};

/// `x` as the refusal of shards that disagree on it shows it.
fn shown(x: impl fmt::Debug) -> String {
    format!("{x:?}")
}

fn names<T>(v: &[T], name: fn(&T) -> &String) -> Vec<&String> {
    v.iter().map(name).collect()
}

type Fact = fn(&RunMeta) -> String;

/// What the shards of one run have alike, by the name a refusal gives it.
const ALIKE: [(&str, Fact); 12] = [
    ("tool", |m| shown(&m.tool)),
    ("version", |m| shown(&m.version)),
    ("seed", |m| shown(&m.seed)),
    ("cases", |m| shown(m.cases)),
    ("shard count", |m| shown(m.shard.count)),
    ("generations", |m| shown(names(&m.generations, |g| &g.name))),
    ("targets", |m| shown(names(&m.targets, |t| &t.name))),
    ("corpus replay", |m| shown(&m.corpus)),
    ("vector files", |m| shown(&m.vector_files)),
    ("corpus files per target", |m| {
        let per = m
            .targets
            .iter()
            .map(|t| (t.corpus_files, t.corpus_diverged, t.corpus_present));
        shown(per.collect::<Vec<_>>())
    }),
    ("subjects", |m| {
        let subjects = m.subjects.iter().map(|s| {
            let corpus: Vec<(&String, u64)> =
                s.targets.iter().map(|t| (&t.name, t.corpus)).collect();
            (&s.spec, &s.capabilities, corpus, s.vector_checks)
        });
        shown((
            subjects.collect::<Vec<_>>(),
            m.subject_cases_cap,
            &m.unsupported,
        ))
    }),
    ("reach classes", |m| {
        let classes = m.reach.iter().map(|(f, cs)| (f, names(cs, |c| &c.class)));
        shown(classes.collect::<Vec<_>>())
    }),
];

/// The subjects over every shard: cases summed, generations united (in run order).
fn merged_subjects(shards: &[ShardReport]) -> Vec<SubjectMeta> {
    let Some(first) = shards.first() else {
        return Vec::new();
    };
    let order = names(&first.meta.generations, |g| &g.name);
    let mut out = first.meta.subjects.clone();
    for s in &shards[1..] {
        for (m, o) in out.iter_mut().zip(&s.meta.subjects) {
            // Every shard replays the corpus and checks every vector: one
            // shard's counts (the merge checks they are equal).
            for (mt, ot) in m.targets.iter_mut().zip(&o.targets) {
                mt.generated = mt.generated.saturating_add(ot.generated);
            }
            // Each shard's own give-ups.
            for g in &o.given_up {
                let same = |x: &GivenUpMeta| {
                    (&x.generation, &x.operation) == (&g.generation, &g.operation)
                };
                let x = find_or_push(&mut m.given_up, same, || GivenUpMeta {
                    cases_not_run: 0,
                    ..g.clone()
                });
                x.cases_not_run = x.cases_not_run.saturating_add(g.cases_not_run);
            }
            m.failures = m.failures.saturating_add(o.failures);
            for g in &o.generations {
                if !m.generations.contains(g) {
                    m.generations.push(g.clone());
                }
            }
        }
    }
    for m in &mut out {
        m.cases = m.cases_of_parts();
        m.generations
            .sort_by_key(|g| order.iter().position(|o| *o == g).unwrap_or(usize::MAX));
    }
    out
}

/// The shards' `machine` groups summed, the rate recomputed; `None` when no shard has one.
fn merged_machine(shards: &[ShardReport], subjects: &[SubjectMeta]) -> Option<MachineMeta> {
    let mut out: Option<MachineMeta> = None;
    for s in shards {
        let Some(m) = &s.meta.machine else { continue };
        let o = out.get_or_insert_with(MachineMeta::default);
        o.threads = o.threads.saturating_add(m.threads);
        o.elapsed_ms = o.elapsed_ms.saturating_add(m.elapsed_ms);
        for sm in &m.subjects {
            let x = find_or_push(
                &mut o.subjects,
                |x| x.spec == sm.spec,
                || SubjectMachineMeta {
                    spec: sm.spec.clone(),
                    ..SubjectMachineMeta::default()
                },
            );
            x.calls = x.calls.saturating_add(sm.calls);
            x.answers_received = x.answers_received.saturating_add(sm.answers_received);
            x.answers_compared = x.answers_compared.saturating_add(sm.answers_compared);
            x.subject_ms = x.subject_ms.saturating_add(sm.subject_ms);
            x.restarts = x.restarts.saturating_add(sm.restarts);
        }
    }
    for x in out.iter_mut().flat_map(|o| &mut o.subjects) {
        let cases = subjects
            .iter()
            .find(|s| s.spec == x.spec)
            .map_or(0, |s| s.cases);
        x.cases_per_s = cases
            .saturating_mul(1000)
            .checked_div(x.subject_ms)
            .unwrap_or(0);
    }
    out
}

fn merged_cohorts(shards: &[ShardReport]) -> Vec<CohortMeta> {
    let mut by: BTreeMap<String, u64> = BTreeMap::new();
    for s in shards {
        for c in &s.meta.cohorts {
            let e = by.entry(c.pattern.clone()).or_insert(0);
            *e = e.saturating_add(c.inputs);
        }
    }
    by.into_iter()
        .map(|(pattern, inputs)| CohortMeta { pattern, inputs })
        .collect()
}

pub fn merge(mut shards: Vec<ShardReport>) -> Result<ReportModel<'static>, MergeError> {
    let first = shards
        .first()
        .ok_or_else(|| MergeError("no shard folder given".into()))?
        .clone();
    let (d0, count) = (first.dir.display(), first.meta.shard.count);
    for (s, (what, get)) in shards[1..].iter().flat_map(|s| ALIKE.map(|a| (s, a))) {
        let (a, b, d) = (get(&first.meta), get(&s.meta), s.dir.display());
        let m = format!("shards disagree on {what}: {d0} has {a}, {d} has {b}");
        refuse!(a != b, MergeError(m));
    }
    shards.sort_by_key(|s| s.meta.shard.index);
    for w in shards.windows(2) {
        let (a, b) = (w[0].dir.display(), w[1].dir.display());
        let m = format!("shard {} given twice: {a} and {b}", w[0].meta.shard);
        refuse!(
            w[0].meta.shard.index == w[1].meta.shard.index,
            MergeError(m)
        );
    }
    let have: Vec<u64> = shards.iter().map(|s| s.meta.shard.index).collect();
    let missing: Vec<String> = (0..count)
        .filter(|i| have.binary_search(i).is_err())
        .take(10)
        .map(|i| format!("{i}/{count}"))
        .collect();
    let more = if missing.len() >= 10 { ", …" } else { "" };
    let m = format!("{}{more}", missing.join(", "));
    refuse!(have.len() as u64 != count, "missing shard(s)", "{m}");
    let targets = merged_targets(&shards, count)?;
    let divergences = merged_divergences(&shards);
    let mut failures = Vec::new();
    let mut failure_targets = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for s in &shards {
        let name = s.meta.shard.to_string();
        for f in &s.meta.failures {
            failures.push(format!("shard {name}: {f}"));
            failure_targets.push(format!("shard {name}"));
        }
        for n in &s.meta.notes {
            if !notes.contains(n) {
                notes.push(n.clone());
            }
        }
    }
    // Reach: hits summed; a class is unexercised iff no shard hit it. A
    // merged full default run fails on one, as the unsharded gate does
    // (`crate::gate::reach_failure`).
    let mut reach = shards[0].meta.reach.clone();
    for s in &shards[1..] {
        for (field, classes) in &mut reach {
            let other = s.meta.reach.get(field).into_iter().flatten();
            for (c, o) in classes.iter_mut().zip(other) {
                c.hits += o.hits;
            }
        }
    }
    let unexercised: Vec<String> = if reach.is_empty() {
        let mut u = shards[0].meta.unexercised.clone();
        u.retain(|c| shards.iter().all(|s| s.meta.unexercised.contains(c)));
        u
    } else {
        reach
            .iter()
            .flat_map(|(f, cs)| {
                cs.iter()
                    .filter(|c: &&ReachClass| c.hits == 0)
                    .map(move |c| format!("{f}: {}", c.class))
            })
            .collect()
    };
    let all_targets = Target::gate_targets()
        .iter()
        .all(|t| first.meta.targets.iter().any(|m| m.name == t.name()));
    if first.meta.cases >= crate::gate::DEFAULT_CASES && all_targets && !unexercised.is_empty() {
        let classes = unexercised.clone();
        failures.push(crate::gate::GateFailure::Unreached { classes }.to_string());
        failure_targets.push(REACH_CASE.to_string());
    }
    let generations = each(&first.meta.generations, |g| {
        let of = shards.iter().flat_map(|s| &s.meta.generations);
        let of = of.filter(|x| x.name == g.name);
        let (ran, diverged) = of.fold((0, 0), |(r, d), x| (r + x.ran, d + x.diverged));
        ArchStats {
            name: g.name.clone(),
            ran,
            diverged,
        }
    });
    // Tool, version, seed, cases, corpus, vector files, the cap and the unsupported targets
    // are every shard's (checked above).
    let subjects = merged_subjects(&shards);
    let mut meta = RunMeta {
        complete: true,
        bad_input: false,
        shard: Shard::default(),
        merged_from: Some(count),
        targets,
        distinct_divergences: divergences.len() as u64,
        divergent_cases: divergences.iter().map(|d| d.count).sum(),
        failures,
        failure_targets,
        notes,
        unexercised,
        generations,
        machine: merged_machine(&shards, &subjects),
        subjects,
        cohorts: merged_cohorts(&shards),
        reach,
        integrity: None,
        ..first.meta
    };
    // Recomputed from the merged contents, never copied from a shard.
    meta.verdict = verdict_of(&meta, &divergences).into();
    let shard_refs = each(&shards, |s| ShardRef {
        dir: s.dir.clone(),
        shard: s.meta.shard.to_string(),
        verdict: verdict_of(&s.meta, &s.divergences).into(),
    });
    Ok(ReportModel {
        meta,
        divergences,
        shards: shard_refs,
        live: None,
    })
}

/// Per target: counts summed, each shard's planned count checked against its share.
fn merged_targets(shards: &[ShardReport], count: u64) -> Result<Vec<TargetStats>, MergeError> {
    let first = &shards[0];
    let mut targets = Vec::new();
    for (j, t0) in first.meta.targets.iter().enumerate() {
        let total: u64 = shards.iter().map(|s| s.meta.targets[j].planned).sum();
        let m = format!("target {}: no shard planned a generated case", t0.name);
        refuse!(total == 0, first.dir.display(), "nothing was checked: {m}");
        let mut t = TargetStats {
            name: t0.name.clone(),
            planned: total,
            corpus_files: t0.corpus_files,
            corpus_diverged: t0.corpus_diverged,
            corpus_present: t0.corpus_present,
            ..TargetStats::default()
        };
        for s in shards {
            let st = &s.meta.targets[j];
            let index = s.meta.shard.index;
            let share = Shard { index, count }.len(total);
            let m = format!(
                "target {}: shard {} planned {} generated cases, but its share of the shards' \
                 {total} is {share} (different --cases / --sync-cases?)",
                t.name, s.meta.shard, st.planned
            );
            refuse!(st.planned != share, s.dir.display(), "{m}");
            t.add_generated(st.clone());
        }
        targets.push(t);
    }
    Ok(targets)
}

/// Divergences by key, smallest origin wins, renumbered in gate target order, then key.
fn merged_divergences(shards: &[ShardReport]) -> Vec<DivergenceRecord> {
    struct Acc {
        rep: DivergenceRecord,
        // The representative's root cause in its own shard, by signature (shards number
        // their divergences each their own way).
        rep_root: Option<DedupKey>,
        count: u64,
        shards: Vec<String>,
    }
    let mut by_key: BTreeMap<DedupKey, Acc> = BTreeMap::new();
    for s in shards {
        let name = s.meta.shard.to_string();
        let root_of = |d: &DivergenceRecord| {
            let n = d.caused_by?;
            s.divergences
                .iter()
                .find(|r| r.number == n)
                .map(DivergenceRecord::dedup_key)
        };
        for d in &s.divergences {
            let a = by_key.entry(d.dedup_key()).or_insert_with(|| Acc {
                rep: d.clone(),
                rep_root: root_of(d),
                count: 0,
                shards: Vec::new(),
            });
            a.count += d.count;
            a.shards.push(name.clone());
            if d.origin < a.rep.origin {
                a.rep = d.clone();
                a.rep_root = root_of(d);
            }
        }
    }
    let mut accs: Vec<(DedupKey, Acc)> = by_key.into_iter().collect();
    accs.sort_by_key(|(k, _)| Target::from_name(&k.0).map_or(usize::MAX, Target::rank));
    let number_of: BTreeMap<DedupKey, u64> = accs
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.clone(), i as u64 + 1))
        .collect();
    accs.into_iter()
        .enumerate()
        .map(|(i, (_, a))| {
            let number = i as u64 + 1;
            let [file, _, replay_file] = a.rep.replay_of(number);
            DivergenceRecord {
                number,
                count: a.count,
                replay_file,
                file,
                shards: a.shards,
                // Folded under its shard's root cause, by that root's merged number (a root
                // that sorts after it would be a forward reference: left a root).
                caused_by: a
                    .rep_root
                    .as_ref()
                    .and_then(|k| number_of.get(k).copied())
                    .filter(|&n| n < number),
                ..a.rep
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::CorpusFolder;

    /// Shards that replayed different corpora are refused, the refusal showing both rows.
    #[test]
    fn shards_that_disagree_on_the_corpus_replay_are_refused_showing_both() {
        let shard = |index, files| ShardReport {
            dir: format!("s{index}").into(),
            meta: RunMeta {
                shard: Shard { index, count: 2 },
                corpus: vec![CorpusFolder {
                    name: "decode_any".into(),
                    routes: vec!["decode_any".into()],
                    files,
                    diverged: 0,
                }],
                ..RunMeta::default()
            },
            divergences: Vec::new(),
        };
        let e = merge(vec![shard(0, 44), shard(1, 45)]).unwrap_err().0;
        let row = |files| {
            format!(
                "[CorpusFolder {{ name: \"decode_any\", routes: [\"decode_any\"], files: {files}, \
                 diverged: 0 }}]"
            )
        };
        let want = format!(
            "shards disagree on corpus replay: s0 has {}, s1 has {}",
            row(44),
            row(45)
        );
        assert_eq!(e, want);
    }
}
