//! One shard's report folder read and verified ([`load`]), for `tpbconform report merge`: its
//! integrity record, its files against each other and the verdict they give, each file read
//! with a cap of [`MAX_BYTES`]. What is checked: `reports/README.md` ("Merging the reports of a
//! sharded gate"); a refusal is a [`MergeError`] (exit 2, nothing written).

use super::divergences_jsonl::{self, LineError};
use super::integrity::{self};
use super::model::{DivergenceRecord, OriginRecord, VECTORS_CASE};
use super::run_json::{self, RunMeta, ShardMeta, TargetMeta, FAIL, INCOMPLETE, PASS};
use crate::targets::Target;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::merge_error::{MergeError, MAX_BYTES};

/// One shard's report folder, read and verified.
#[derive(Clone, Debug)]
pub struct ShardReport {
    pub dir: PathBuf,
    pub meta: RunMeta,
    pub divergences: Vec<DivergenceRecord>,
}

fn open_regular(path: &Path) -> Result<std::fs::File, MergeError> {
    let read = |e| MergeError::read(path, e);
    let md = std::fs::symlink_metadata(path).map_err(read)?;
    if !md.is_file() {
        return Err(MergeError::at(path.display(), "not a regular file"));
    }
    std::fs::File::open(path).map_err(read)
}

fn read_capped(path: &Path) -> Result<String, MergeError> {
    let mut text = String::new();
    open_regular(path)?
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| MergeError::read(path, e))?;
    if text.len() as u64 > MAX_BYTES {
        return Err(MergeError::too_large(path, 0));
    }
    Ok(text)
}

/// Reads `run.json` of `dir`.
fn read_meta(dir: &Path) -> Result<RunMeta, MergeError> {
    let path = dir.join(run_json::FILE);
    let text = read_capped(&path)?;
    let v = crate::strict_json::parse(&text).map_err(|e| MergeError::line(&path, e.line(), e))?;
    // Check the format first, so an older or newer layout is named as such.
    let format = v.get("format").and_then(crate::strict_json::Json::as_u64);
    if format != Some(u64::from(run_json::FORMAT)) {
        let found = format.map_or_else(|| "missing".to_string(), |n| n.to_string());
        let m = format!("run.json format {found} (expected {})", run_json::FORMAT);
        return Err(MergeError::line(&path, 1, m));
    }
    serde_json::from_value(v.to_value()).map_err(|e| MergeError::line(&path, 1, e))
}

/// Reads `divergences.jsonl` of `dir`: at most `expected` records (the
/// `run.json` count), so memory stays bounded by what `run.json` announces.
fn read_divergences(dir: &Path, expected: u64) -> Result<Vec<DivergenceRecord>, MergeError> {
    let path = dir.join(divergences_jsonl::FILE);
    divergences_jsonl::read(open_regular(&path)?, expected).map_err(|e| match e {
        LineError::Io(e) => MergeError::read(&path, e),
        LineError::TooLong(line) => MergeError::too_large(&path, line),
        LineError::TooMany(line) => MergeError::at(
            dir.display(),
            format_args!(
                "{} has more than the {expected} divergence(s) run.json says (line {line})",
                divergences_jsonl::FILE
            ),
        ),
        LineError::Bad(line, m) => MergeError::line(&path, line, m),
    })
}

pub(super) fn shard_name(s: ShardMeta) -> String {
    format!("{}/{}", s.index, s.count)
}

/// The verdict of the facts of `meta` and `records`: FAIL when they hold a divergence or a
/// failure, else PASS.
pub(super) fn verdict_of(meta: &RunMeta, records: &[DivergenceRecord]) -> &'static str {
    let found = !records.is_empty()
        || !meta.failures.is_empty()
        || meta.distinct_divergences > 0
        || meta.divergent_cases > 0
        || meta
            .targets
            .iter()
            .any(|t| t.diverged > 0 || t.corpus_diverged > 0)
        || meta.vector_files.iter().any(|v| v.failed > 0)
        || meta.generations.iter().any(|g| g.diverged > 0)
        || meta.corpus.iter().any(|c| c.diverged > 0);
    if found {
        FAIL
    } else {
        PASS
    }
}

/// The verdict `summary.md` states (`- result: **X**`), from its first lines.
fn summary_verdict(dir: &Path) -> Result<Option<String>, MergeError> {
    let text = read_capped(&dir.join("summary.md"))?;
    Ok(text.lines().take(20).find_map(|l| {
        let rest = l.strip_prefix("- result: **")?;
        Some(rest.split("**").next()?.to_string())
    }))
}

/// The `verdict` property and the testcase names of `junit.xml`.
fn junit_facts(dir: &Path) -> Result<(Option<String>, Vec<String>), MergeError> {
    let text = read_capped(&dir.join("junit.xml"))?;
    let attr = |tag: &str, l: &str| -> Option<String> {
        let at = l.find(tag)? + tag.len();
        Some(l[at..].split('"').next()?.to_string())
    };
    let verdict = text
        .lines()
        .find(|l| l.contains("<property name=\"verdict\""))
        .and_then(|l| attr("value=\"", l));
    let cases = text
        .lines()
        .filter(|l| l.trim_start().starts_with("<testcase "))
        .filter_map(|l| attr(" name=\"", l))
        .collect();
    Ok((verdict, cases))
}

/// Checks one shard's files against each other (see the module docs).
/// The subjects' coverage and the cohort counts agree with the rest of
/// `run.json`: each subject's total is its parts, it names only the run's
/// targets and generations, judged no more generated cases of a target than
/// ran, and one judged on nothing has a failure saying so; cohort inputs
/// are at most the diverged inputs.
fn check_subjects(meta: &RunMeta) -> Result<(), String> {
    for s in &meta.subjects {
        let (spec, cases, parts) = (&s.spec, s.cases, s.cases_of_parts());
        let m = "its targets and vector checks add up to";
        refuse!(
            cases != parts,
            format!("subject {spec}: {cases} case(s) judged, but {m} {parts}")
        );
        for st in &s.targets {
            let (name, generated) = (&st.name, st.generated);
            let Some(t) = meta.targets.iter().find(|t| t.name == *name) else {
                return Err(format!(
                    "subject {spec}: target `{name}` is not one of the run's"
                ));
            };
            let m = format!(
                "judged on {generated} generated case(s) of {name}, which ran {}",
                t.ran
            );
            refuse!(generated > t.ran, format!("subject {spec}: {m}"));
        }
        let foreign = |g: &&String| !meta.generations.iter().any(|m| m.name == **g);
        if let Some(g) = s.generations.iter().find(foreign) {
            return Err(format!(
                "subject {spec}: generation `{g}` is not one of the run's"
            ));
        }
        let m = format!("subject {spec} was judged on no case, yet no failure says so");
        refuse!(cases == 0 && s.failures == 0, m);
    }
    let named = meta
        .subjects
        .iter()
        .fold(0u64, |a, s| a.saturating_add(s.failures));
    refuse!(
        named > meta.failures.len() as u64,
        format!(
            "the subjects have {named} failure(s), but run.json lists {}",
            meta.failures.len()
        )
    );
    let inputs = meta
        .cohorts
        .iter()
        .fold(0u64, |a, c| a.saturating_add(c.inputs));
    let per_gen = meta.generations.len().max(1) as u64;
    let diverged = meta.targets.iter().fold(0u64, |a, t| {
        a.saturating_add(t.diverged)
            .saturating_add(t.corpus_diverged.saturating_mul(per_gen))
    });
    refuse!(
        inputs > diverged,
        format!("{inputs} divergent input(s) counted by cohort, but only {diverged} diverged")
    );
    Ok(())
}

/// `at: message` as the refusal when `bad`.
fn check(bad: bool, at: impl fmt::Display, message: impl fmt::Display) -> Result<(), MergeError> {
    match bad {
        true => Err(MergeError::at(at, message)),
        false => Ok(()),
    }
}

fn check_shard(dir: &Path, meta: &RunMeta, recs: &[DivergenceRecord]) -> Result<(), MergeError> {
    let (d, jsonl) = (&dir.display(), divergences_jsonl::FILE);
    let nothing = "nothing was checked";
    check(
        meta.targets.is_empty(),
        d,
        format_args!("{nothing}: run.json lists no target"),
    )?;
    let zero = "zero generated cases requested (cases = 0)";
    check(meta.cases == 0, d, format_args!("{nothing}: {zero}"))?;
    let (n, want) = (recs.len(), meta.distinct_divergences);
    let m = format_args!("{jsonl} has {n} divergence(s), run.json says {want}");
    check(n as u64 != want, d, m)?;
    let (total, want) = (
        recs.iter().map(|r| r.count).sum::<u64>(),
        meta.divergent_cases,
    );
    let m = format_args!("{jsonl} records {total} divergent case(s), run.json says {want}");
    check(total != want, d, m)?;
    for (i, t) in meta.targets.iter().enumerate() {
        let name = &t.name;
        let unknown = Target::from_name(name).is_none();
        check(
            unknown,
            d,
            format_args!("run.json: unknown target `{name}`"),
        )?;
        let twice = meta.targets[..i].iter().any(|u| u.name == *name);
        check(
            twice,
            d,
            format_args!("run.json: target `{name}` listed twice"),
        )?;
        refuse!(
            t.ran != t.planned,
            MergeError::incomplete(dir, &shard_name(meta.shard))
        );
        check(
            t.valid + t.near_valid + t.raw != t.ran || t.diverged > t.ran,
            d,
            format_args!(
                "target {name}: {} run but {} valid + {} near-valid + {} raw, {} diverged",
                t.ran, t.valid, t.near_valid, t.raw, t.diverged
            ),
        )?;
        let (cd, cf) = (t.corpus_diverged, t.corpus_files);
        let m = format_args!("target {name}: {cd} of {cf} corpus files diverged");
        check(cd > cf, d, m)?;
        let of_t = recs.iter().filter(|r| r.target == *name);
        let (records, occurrences) = (of_t.clone().count(), of_t.map(|r| r.count).sum::<u64>());
        let cases = t.diverged + t.corpus_diverged;
        check(
            cases > occurrences,
            d,
            format_args!(
                "target {name}: {cases} diverged case(s) in run.json but {records} divergence \
                 record(s) with {occurrences} occurrence(s) in {jsonl}"
            ),
        )?;
    }
    let vector_failed: u64 = meta.vector_files.iter().map(|v| v.failed).sum();
    let vector_recs: u64 = recs
        .iter()
        .filter(|r| r.target == VECTORS_CASE)
        .map(|r| r.count)
        .sum();
    check(
        meta.vector_files.iter().any(|v| v.failed > v.vectors) || vector_failed > vector_recs,
        d,
        format_args!(
            "{vector_failed} failed vector check(s) in run.json but {vector_recs} vector \
             divergence occurrence(s) in {jsonl}"
        ),
    )?;
    let sum =
        |it: &mut dyn Iterator<Item = (u64, u64)>| it.fold((0, 0), |(a, b), (r, d)| (a + r, b + d));
    let (g_ran, g_div) = sum(&mut meta.generations.iter().map(|g| (g.ran, g.diverged)));
    let (t_ran, t_div) = sum(&mut meta.targets.iter().map(|t| (t.ran, t.diverged)));
    check(
        meta.generations.is_empty() || g_ran != t_ran || g_div != t_div,
        d,
        format_args!(
            "generations run {g_ran} case(s), {g_div} diverged; targets run {t_ran}, {t_div} \
             diverged"
        ),
    )?;
    check_subjects(meta).map_err(|m| MergeError::at(d, m))?;
    let m = "run.json: failures and failure_targets differ in length";
    check(meta.failures.len() != meta.failure_targets.len(), d, m)?;
    for (i, r) in recs.iter().enumerate() {
        check_record(dir, meta, i, r)?;
    }
    let want = verdict_of(meta, recs);
    check(
        meta.verdict != want,
        d,
        format_args!(
            "run.json verdict `{}` but its files hold {} divergence record(s), {} failure(s) \
             and {t_div} diverged generated case(s): the verdict is {want}",
            meta.verdict,
            recs.len(),
            meta.failures.len()
        ),
    )?;
    let sv = summary_verdict(dir)?;
    let said = sv.as_deref().unwrap_or("no result");
    let m = format_args!("summary.md says {said} but the verdict is {want}");
    check(sv.as_deref() != Some(want), d, m)?;
    let (jv, cases) = junit_facts(dir)?;
    let said = jv.as_deref().unwrap_or("no verdict");
    let m = format_args!("junit.xml says {said} but the verdict is {want}");
    check(jv.as_deref() != Some(want), d, m)?;
    if let Some(t) = meta.targets.iter().find(|t| !cases.contains(&t.name)) {
        let m = format_args!("junit.xml has no testcase for target {}", t.name);
        check(true, d, m)?;
    }
    let unlisted =
        |c: &&String| Target::from_name(c).is_some() && !meta.targets.iter().any(|t| t.name == **c);
    if let Some(c) = cases.iter().find(unlisted) {
        let m = format_args!(
            "junit.xml has a testcase for target {c}, which run.json does not list (a missing \
             target)"
        );
        check(true, d, m)?;
    }
    Ok(())
}

fn check_record(
    dir: &Path,
    meta: &RunMeta,
    i: usize,
    r: &DivergenceRecord,
) -> Result<(), MergeError> {
    let jsonl = divergences_jsonl::FILE;
    let line = i + 1;
    // A bad field is refused at the line, an inconsistent one at the folder.
    let at = &format!("{}:{line}", dir.join(jsonl).display());
    let between = &format!("{}: {jsonl}:{line}", dir.display());
    let target = meta.targets.iter().find(|t| t.name == r.target);
    let m = format_args!("record number {} (expected {line})", r.number);
    check(r.number != line as u64, at, m)?;
    check(r.count == 0, at, "field `count` is 0")?;
    let m = format_args!("target `{}` is not one of the run's targets", r.target);
    check(target.is_none() && r.target != VECTORS_CASE, at, m)?;
    if Target::from_name(r.replay_target()).is_none() {
        return Err(MergeError::at(
            at,
            match &r.replay_target {
                None => "a vector line's record without `replay_target` (a report of an older \
                         tpbconform? run the gate again)"
                    .to_string(),
                Some(t) => format!("replay target `{t}` is not a target"),
            },
        ));
    }
    // Checked before it is read: the raw file is the record's own, inside the folder.
    let [file, replay, replay_file] = r.replay_of(r.number);
    let m = format_args!("field `file` is `{}`, expected {file}", r.file);
    check(r.file != file, at, m)?;
    let minimized = r
        .minimized_bytes()
        .map_err(|e| MergeError::at(at, format_args!("field `minimized`: {e}")))?;
    // The raw file beside the record holds the same bytes.
    let bin = dir.join(&r.file);
    let mut held = Vec::new();
    open_regular(&bin)?
        .take(MAX_BYTES + 1)
        .read_to_end(&mut held)
        .map_err(|e| MergeError::read(&bin, e))?;
    check(
        held != minimized,
        dir.display(),
        format_args!(
            "{}: does not hold the minimised input of record {line} of {jsonl}",
            r.file
        ),
    )?;
    if let Err(e) = r.input_bytes() {
        check(true, at, format_args!("field `input`: {e}"))?;
    }
    let m = format_args!("generation `{}` is not one of the run's", r.arch);
    check(!meta.generations.iter().any(|g| g.name == r.arch), at, m)?;
    // The file and the replay commands are what the typed fields give (a record of an older
    // tpbconform, without `replay_subjects` / `replay_target`, fails here).
    check(
        [&r.replay, &r.replay_file] != [&replay, &replay_file],
        at,
        "fields `replay` and `replay_file` are not the ones its target, generation, replay \
         subjects and minimised input give (a report of an older tpbconform? run the gate again)",
    )?;
    let target_has = |n: fn(&TargetMeta) -> u64| target.is_some_and(|t| n(t) > 0);
    match &r.origin {
        OriginRecord::Generated { generated, kind } => {
            let m = format_args!("unknown case kind `{kind}`");
            check(!r.origin.kind_known(), at, m)?;
            let (n, shard) = (generated, shard_name(meta.shard));
            let m =
                format_args!("divergence from generated case #{n}, which is not in shard {shard}");
            check(generated % meta.shard.count != meta.shard.index, between, m)?;
            check(
                !target_has(|t| t.diverged),
                between,
                format_args!(
                    "divergence from generated case #{n} but run.json has no diverged generated \
                     case of {}",
                    r.target
                ),
            )?;
        }
        OriginRecord::Corpus { corpus } => check(
            !target_has(|t| t.corpus_diverged),
            between,
            format_args!(
                "divergence from corpus file {corpus} but run.json has no diverged corpus file \
                 of {}",
                r.target
            ),
        )?,
        OriginRecord::Vector { vector, .. } => check(
            !meta
                .vector_files
                .iter()
                .any(|v| v.path == *vector && v.failed > 0),
            between,
            format_args!(
                "divergence from vector file {vector} but run.json has no failed check in it"
            ),
        )?,
    }
    Ok(())
}

/// Reads one shard folder and verifies it on its own (see the module docs).
pub fn load(dir: &Path) -> Result<ShardReport, MergeError> {
    let meta = read_meta(dir)?;
    let (shard, d) = (shard_name(meta.shard), &dir.display());
    let bad = meta.shard.count == 0 || meta.shard.index >= meta.shard.count;
    check(bad, d, format_args!("run.json: bad shard {shard}"))?;
    refuse!(
        meta.verdict == INCOMPLETE || !meta.complete,
        MergeError::incomplete(dir, &shard)
    );
    let m = format_args!("shard {shard} had bad input (its gate exited 2)");
    check(meta.bad_input, d, m)?;
    let divergences = read_divergences(dir, meta.distinct_divergences)?;
    let facts = run_json::render(&meta);
    integrity::verify(dir, run_json::FILE, meta.integrity.as_ref(), &facts)
        .map_err(|m| MergeError::at(d, m))?;
    check_shard(dir, &meta, &divergences)?;
    Ok(ShardReport {
        dir: dir.to_path_buf(),
        meta,
        divergences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::run_json::SubjectMeta;

    /// A subject judged on nothing needs a failure about it, counted in its typed
    /// `failures` (the failure's text is not read), and no more than run.json lists.
    #[test]
    fn a_subject_judged_on_nothing_needs_a_failure_about_it() {
        let mut meta = RunMeta {
            failures: vec!["subject cmd:x was judged on no case".into()],
            ..RunMeta::default()
        };
        meta.subjects = vec![SubjectMeta {
            spec: "cmd:x".into(),
            capabilities: String::new(),
            targets: Vec::new(),
            vector_checks: 0,
            generations: Vec::new(),
            cases: 0,
            failures: 0,
            given_up: Vec::new(),
        }];
        assert!(check_subjects(&meta)
            .unwrap_err()
            .contains("yet no failure says so"));
        meta.subjects[0].failures = 1;
        assert_eq!(check_subjects(&meta), Ok(()));
        meta.subjects[0].failures = 2;
        assert!(check_subjects(&meta).unwrap_err().contains("2 failure(s)"));
    }
}
