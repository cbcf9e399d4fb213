//! Phase 1 of the gate: every file under `corpus/<folder>/` (recursive, sorted) through the
//! folder's targets ([`replayed_targets`]). A missing folder is noted; an unreadable one is
//! a [`GateFailure::Corpus`].

use super::config::GateConfig;
use super::coverage::{file_case, CovMap, Runner};
use super::outcome::{add_counts, count_cohorts, merge_cov, CorpusFolder, GateFailure, GateRun};
use crate::findings::{Finding, Origin};
use crate::judge::batch::{Cases, Step};
use crate::judge::pair::guard;
use crate::kinds::{CaseBuf, Form, Ran};
use crate::reach::Reach;
use crate::targets::{folder_targets, Target};
use std::iter::StepBy;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The files under `dir`, recursive and sorted; symlinks go to `skipped` (dangling: error).
fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    skipped: &mut Vec<String>,
) -> Result<(), (String, String)> {
    let err = |p: &Path, e: std::io::Error| (p.display().to_string(), e.to_string());
    for p in super::vectors::sorted_paths(dir).map_err(|e| err(dir, e))? {
        if let Some(why) = crate::input::symlink_skip(&p).map_err(|e| err(&p, e))? {
            skipped.push(format!("{}: {why}", p.display()));
            continue;
        }
        let md = std::fs::symlink_metadata(&p).map_err(|e| err(&p, e))?;
        if md.is_dir() {
            walk(&p, out, skipped)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

pub fn replay_corpus(cfg: &GateConfig, runners: &[Runner], run: &mut GateRun) {
    let mut folders: Vec<String> = match std::fs::read_dir(&cfg.corpus_dir) {
        Ok(rd) => rd
            .filter_map(|x| x.ok())
            .filter(|x| {
                let link = x.file_type().is_ok_and(|t| t.is_symlink());
                if link && x.path().is_dir() {
                    run.failures.push(GateFailure::InputSkipped(format!(
                        "{}: symlink to a directory, not followed",
                        x.path().display()
                    )));
                }
                !link && x.path().is_dir()
            })
            .map(|x| x.file_name().to_string_lossy().to_string())
            .filter(|n| n != "vectors" && !n.starts_with('.'))
            .collect(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            run.notes.push(format!(
                "no corpus folder {} (skipped)",
                cfg.corpus_dir.display()
            ));
            Vec::new()
        }
        Err(err) => {
            run.failures.push(GateFailure::Corpus {
                path: cfg.corpus_dir.display().to_string(),
                error: err.to_string(),
            });
            Vec::new()
        }
    };
    folders.sort();
    for name in folders {
        let rs = replayed_targets(&cfg.targets, &name);
        if rs.is_empty() {
            let why = if folder_targets(&name).is_empty() {
                "not a gate or fuzz target"
            } else {
                "target not selected"
            };
            run.notes
                .push(format!("corpus folder {name}/ not replayed ({why})"));
            continue;
        }
        let (mut files, mut skipped) = (Vec::new(), Vec::new());
        if let Err((path, error)) = walk(&cfg.corpus_dir.join(&name), &mut files, &mut skipped) {
            run.failures.push(GateFailure::Corpus { path, error });
            continue;
        }
        run.failures
            .extend(skipped.into_iter().map(GateFailure::InputSkipped));
        let mut folder = CorpusFolder {
            name: name.clone(),
            routes: rs.iter().map(|t| t.name().to_string()).collect(),
            ..CorpusFolder::default()
        };
        let mut covs: Vec<CovMap> = rs.iter().map(|_| CovMap::default()).collect();
        let mut files = files.into_iter().peekable();
        let mut block: Vec<(String, Vec<u8>)> = Vec::new();
        let mut interrupted = false;
        while files.peek().is_some() && !interrupted {
            // A block of files (bounded), then replayed target by target.
            block.clear();
            let mut bytes = 0usize;
            while block.len() < CORPUS_BLOCK_FILES && bytes < CORPUS_BLOCK_BYTES {
                let Some(p) = files.next() else { break };
                if cfg.interrupted() {
                    interrupted = true;
                    break;
                }
                let path = p.display().to_string();
                match crate::input::read_corpus_file(&p) {
                    Ok(Ok(d)) => {
                        bytes += d.len();
                        block.push((path, d));
                    }
                    Ok(Err(why)) => {
                        run.failures.push(GateFailure::InputSkipped(why));
                    }
                    Err(err) => run.failures.push(GateFailure::Corpus {
                        path,
                        error: err.to_string(),
                    }),
                }
            }
            let done = replay_block(runners, &rs, &block, &mut covs, run, &|| cfg.interrupted());
            folder.files += done.len() as u64;
            folder.diverged += done.iter().filter(|any| **any).count() as u64;
            interrupted |= done.len() < block.len();
        }
        if interrupted {
            run.notes.push("corpus replay interrupted".to_string());
        }
        for (t, cov) in rs.iter().zip(covs) {
            if let Some((_, st)) = run.targets.iter_mut().find(|(g, _)| g == t) {
                merge_cov(&mut st.coverage, cov);
            }
        }
        run.corpus.push(folder);
    }
    for (t, st) in &run.targets {
        if !st.corpus_present {
            run.notes.push(format!("no corpus files for target {t}"));
        }
    }
}

/// The targets folder `name` is replayed through: its selected gate targets, its fuzz-only
/// ones (`custom_op_stream`, `structured_diff`) when every gate target is selected.
pub fn replayed_targets(selected: &[Target], name: &str) -> Vec<Target> {
    let all_selected = Target::gate_targets().iter().all(|t| selected.contains(t));
    folder_targets(name)
        .into_iter()
        .filter(|t| {
            if t.spec().gate {
                selected.contains(t)
            } else {
                all_selected
            }
        })
        .collect()
}

/// A block of corpus files: one hand-off per target and generation, memory bounded.
const CORPUS_BLOCK_FILES: usize = 4096;
const CORPUS_BLOCK_BYTES: usize = 16 << 20;

/// One corpus file, judged as a batch of one case under runner `r` (its reach not counted).
struct File<'a> {
    r: &'a Runner,
    data: &'a [u8],
    origin: &'a dyn Fn() -> Origin,
    cov: &'a mut CovMap,
    reach: Reach,
    found: Vec<Finding>,
}

impl Cases for File<'_> {
    fn positions(&self) -> StepBy<Range<u32>> {
        (0..1).step_by(1)
    }

    fn case(&mut self, _j: u32, buf: &mut CaseBuf, _again: bool) -> Option<Step> {
        buf.bytes.clear();
        buf.bytes.extend_from_slice(self.data);
        Some(Step {
            form: Form::Bytes,
            judged: true,
            sampled: false,
        })
    }

    fn reach(&mut self) -> &mut Reach {
        &mut self.reach
    }

    fn judged(&mut self, _j: u32, ran: Ran, key: &str) {
        self.found = file_case(self.r, ran, key, &mut self.reach, self.origin, self.cov);
    }
}

/// Replays `block` through `rs` in turn under every generation, the subjects first given it
/// as one batch; per file replayed (fewer when `stop` cut it short): whether it diverged.
fn replay_block(
    runners: &[Runner],
    rs: &[Target],
    block: &[(String, Vec<u8>)],
    covs: &mut [CovMap],
    run: &mut GateRun,
    stop: &dyn Fn() -> bool,
) -> Vec<bool> {
    let mut any = vec![false; block.len()];
    let mut replayed = block.len();
    let mut buf = CaseBuf::default();
    for (t, cov) in rs.iter().zip(covs.iter_mut()) {
        for r in runners {
            r.judge
                .prefetch_inputs(*t, block.iter().map(|(_, d)| d.as_slice()));
        }
        for (k, (path, data)) in block.iter().enumerate().take(replayed) {
            if stop() {
                replayed = k;
                break;
            }
            let origin = || Origin::Corpus { path: path.clone() };
            let f = guard(|| {
                let mut fs = Vec::new();
                let mut cohorts = std::collections::BTreeMap::new();
                for r in runners {
                    let mut file = File {
                        r,
                        data,
                        origin: &origin,
                        cov,
                        reach: Reach::default(),
                        found: Vec::new(),
                    };
                    r.judge.judge_batch(*t, false, &mut buf, &mut file);
                    let one = file.found;
                    count_cohorts(&mut cohorts, &one);
                    fs.extend(one);
                }
                (fs, cohorts)
            });
            if let Some(st) = run.targets.iter_mut().find(|(g, _)| g == t).map(|(_, s)| s) {
                st.corpus_present = true;
                st.corpus_files += 1;
                if matches!(&f, Ok((v, _)) if !v.is_empty()) {
                    st.corpus_diverged += 1;
                }
            }
            match f {
                Ok((fs, cohorts)) => {
                    add_counts(&mut run.cohorts, cohorts);
                    any[k] |= !fs.is_empty();
                    for f in fs {
                        run.findings.add(f);
                    }
                }
                Err(m) => run.failures.push(GateFailure::InternalPanic {
                    target: t.name().to_string(),
                    index: 0,
                    message: format!("corpus file {path}: {m}"),
                }),
            }
        }
    }
    any.truncate(replayed);
    any
}
