//! One shard's report folder read and verified ([`load`]) for `report merge`: its integrity
//! record, its files against each other and the verdict they give, each read with a cap
//! ([`MAX_BYTES`]); why a set of folders cannot be merged ([`MergeError`], exit 2). What is
//! checked: `reports/README.md`.

use super::divergences_jsonl::{self, FILE};
use super::integrity;
use super::model::{DivergenceRecord, OriginRecord, VECTORS_CASE};
use super::run_json::{self, RunMeta, FAIL, INCOMPLETE, PASS};
use crate::targets::Target;
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Cap on `run.json`, `summary.md`, `junit.xml` and one jsonl line.
pub const MAX_BYTES: u64 = 16 << 20;

/// One line naming the folder, file or line and what is wrong.
#[derive(Debug)]
pub struct MergeError(pub String);

impl MergeError {
    pub fn at(at: impl fmt::Display, message: impl fmt::Display) -> Self {
        MergeError(format!("{at}: {message}"))
    }

    pub fn read(path: &Path, error: impl fmt::Display) -> Self {
        Self::at(path.display(), format_args!("cannot read: {error}"))
    }

    /// At 1-based `line` of `path`.
    pub fn line(path: &Path, line: usize, message: impl fmt::Display) -> Self {
        Self::at(format_args!("{}:{line}", path.display()), message)
    }

    pub fn incomplete(dir: &Path, shard: &str) -> Self {
        let m = format!("shard {shard} is INCOMPLETE (cut short); re-run it");
        Self::at(dir.display(), m)
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MergeError {}

/// `path` opened, refused unless it is a regular file (no symlink).
pub fn open_regular(path: &Path) -> Result<std::fs::File, MergeError> {
    let read = |e| MergeError::read(path, e);
    let md = std::fs::symlink_metadata(path).map_err(read)?;
    refuse!(!md.is_file(), path.display(), "not a regular file");
    std::fs::File::open(path).map_err(read)
}

/// The text of the regular file `path`, refused over [`MAX_BYTES`].
pub fn read_text(path: &Path) -> Result<String, MergeError> {
    let mut text = String::new();
    open_regular(path)?
        .take(MAX_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| MergeError::read(path, e))?;
    let over = text.len() as u64 > MAX_BYTES;
    refuse!(over, path.display(), "larger than {MAX_BYTES} bytes");
    Ok(text)
}

/// Reads the records of `dir`'s `divergences.jsonl`, streaming; blank lines skipped; at most `expected`
/// records (the `run.json` count), so memory stays bounded by what `run.json` announces.
pub fn read_divergences(dir: &Path, expected: u64) -> Result<Vec<DivergenceRecord>, MergeError> {
    let path = &dir.join(FILE);
    let mut r = BufReader::new(open_regular(path)?);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for line in 1.. {
        buf.clear();
        let n = r
            .by_ref()
            .take(MAX_BYTES + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| MergeError::read(path, e))?;
        if n == 0 {
            break;
        }
        let m = format!("line longer than {MAX_BYTES} bytes");
        refuse!(n as u64 > MAX_BYTES, MergeError::line(path, line, m));
        let bad = |e: &dyn std::fmt::Display| MergeError::line(path, line, e);
        let text = std::str::from_utf8(&buf).map_err(|e| bad(&e))?;
        if text.trim().is_empty() {
            continue;
        }
        refuse!(
            out.len() as u64 >= expected,
            dir.display(),
            "{FILE} has more than the {expected} divergence(s) run.json says (line {line})"
        );
        crate::strict_json::parse(text).map_err(|e| bad(&e))?;
        out.push(serde_json::from_str(text).map_err(|e| bad(&e))?);
    }
    Ok(out)
}

#[derive(Clone, Debug)]
pub struct ShardReport {
    pub dir: PathBuf,
    pub meta: RunMeta,
    pub divergences: Vec<DivergenceRecord>,
}

fn read_meta(dir: &Path) -> Result<RunMeta, MergeError> {
    let path = dir.join(run_json::FILE);
    let text = read_text(&path)?;
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

/// FAIL when `meta` or `records` hold a divergence or a failure, else PASS.
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
    let text = read_text(&dir.join("summary.md"))?;
    Ok(text.lines().take(20).find_map(|l| {
        let rest = l.strip_prefix("- result: **")?;
        Some(rest.split("**").next()?.to_string())
    }))
}

/// The `verdict` property and the testcase names of `junit.xml`.
fn junit_facts(dir: &Path) -> Result<(Option<String>, Vec<String>), MergeError> {
    let text = read_text(&dir.join("junit.xml"))?;
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

/// The subjects' coverage and the cohort counts agree with the rest of `run.json`.
fn check_subjects(d: &str, meta: &RunMeta) -> Result<(), MergeError> {
    for s in &meta.subjects {
        let (spec, cases, parts) = (&s.spec, s.cases, s.cases_of_parts());
        let m = "its targets and vector checks add up to";
        refuse!(
            cases != parts,
            d,
            "subject {spec}: {cases} case(s) judged, but {m} {parts}"
        );
        for st in &s.targets {
            let (name, generated) = (&st.name, st.generated);
            let t = meta.targets.iter().find(|t| t.name == *name);
            let m = format!("subject {spec}: target `{name}` is not one of the run's");
            let Some(t) = t else {
                return Err(MergeError::at(d, m));
            };
            let m = format!("judged on {generated} generated case(s) of {name}, which ran");
            refuse!(generated > t.ran, d, "subject {spec}: {m} {}", t.ran);
        }
        let foreign = |g: &&String| !meta.generations.iter().any(|m| m.name == **g);
        if let Some(g) = s.generations.iter().find(foreign) {
            let m = format!("subject {spec}: generation `{g}` is not one of the run's");
            return Err(MergeError::at(d, m));
        }
        let m = format!("subject {spec} was judged on no case, yet no failure says so");
        refuse!(cases == 0 && s.failures == 0, d, "{m}");
    }
    let named = sum(&meta.subjects, |s| s.failures);
    let listed = meta.failures.len();
    let m = format!("the subjects have {named} failure(s), but run.json lists {listed}");
    refuse!(named > listed as u64, d, "{m}");
    let inputs = sum(&meta.cohorts, |c| c.inputs);
    let per_gen = meta.generations.len().max(1) as u64;
    let diverged = sum(&meta.targets, |t| {
        t.diverged
            .saturating_add(t.corpus_diverged.saturating_mul(per_gen))
    });
    let m = format!("{inputs} divergent input(s) counted by cohort, but only {diverged} diverged");
    refuse!(inputs > diverged, d, "{m}");
    Ok(())
}

fn sum<T>(v: &[T], f: impl Fn(&T) -> u64) -> u64 {
    v.iter().fold(0, |a, x| a.saturating_add(f(x)))
}

fn check_shard(dir: &Path, meta: &RunMeta, recs: &[DivergenceRecord]) -> Result<(), MergeError> {
    let (d, jsonl) = (&dir.display().to_string(), divergences_jsonl::FILE);
    let nothing = "nothing was checked";
    refuse!(
        meta.targets.is_empty(),
        d,
        "{nothing}: run.json lists no target"
    );
    let zero = "zero generated cases requested (cases = 0)";
    refuse!(meta.cases == 0, d, "{nothing}: {zero}");
    let (n, want) = (recs.len() as u64, meta.distinct_divergences);
    let m = format!("{jsonl} has {n} divergence(s), run.json says {want}");
    refuse!(n != want, d, "{m}");
    let (total, want) = (sum(recs, |r| r.count), meta.divergent_cases);
    let m = format!("{jsonl} records {total} divergent case(s), run.json says {want}");
    refuse!(total != want, d, "{m}");
    for (i, t) in meta.targets.iter().enumerate() {
        let name = &t.name;
        let unknown = Target::from_name(name).is_none();
        refuse!(unknown, d, "run.json: unknown target `{name}`");
        let twice = meta.targets[..i].iter().any(|u| u.name == *name);
        refuse!(twice, d, "run.json: target `{name}` listed twice");
        refuse!(
            t.ran != t.planned,
            MergeError::incomplete(dir, &meta.shard.to_string())
        );
        let m = format!(
            "target {name}: {} run but {} valid + {} near-valid + {} raw, {} diverged",
            t.ran, t.valid, t.near_valid, t.raw, t.diverged
        );
        refuse!(
            t.valid + t.near_valid + t.raw != t.ran || t.diverged > t.ran,
            d,
            "{m}"
        );
        let (cd, cf) = (t.corpus_diverged, t.corpus_files);
        refuse!(
            cd > cf,
            d,
            "target {name}: {cd} of {cf} corpus files diverged"
        );
        let of_t: Vec<_> = recs.iter().filter(|r| r.target == *name).collect();
        let (records, occurrences) = (of_t.len(), sum(&of_t, |r| r.count));
        let cases = t.diverged + t.corpus_diverged;
        let m = format!(
            "target {name}: {cases} diverged case(s) in run.json but {records} divergence \
             record(s) with {occurrences} occurrence(s) in {jsonl}"
        );
        refuse!(cases > occurrences, d, "{m}");
    }
    let vector_failed = sum(&meta.vector_files, |v| v.failed);
    let vector_recs = sum(recs, |r| if r.target == VECTORS_CASE { r.count } else { 0 });
    let m = format!(
        "{vector_failed} failed vector check(s) in run.json but {vector_recs} vector \
         divergence occurrence(s) in {jsonl}"
    );
    let over = meta.vector_files.iter().any(|v| v.failed > v.vectors);
    refuse!(over || vector_failed > vector_recs, d, "{m}");
    let (g_ran, g_div) = (
        sum(&meta.generations, |g| g.ran),
        sum(&meta.generations, |g| g.diverged),
    );
    let (t_ran, t_div) = (
        sum(&meta.targets, |t| t.ran),
        sum(&meta.targets, |t| t.diverged),
    );
    let m = format!(
        "generations run {g_ran} case(s), {g_div} diverged; targets run {t_ran}, {t_div} diverged"
    );
    refuse!(
        meta.generations.is_empty() || g_ran != t_ran || g_div != t_div,
        d,
        "{m}"
    );
    check_subjects(d, meta)?;
    let m = "run.json: failures and failure_targets differ in length";
    refuse!(meta.failures.len() != meta.failure_targets.len(), d, "{m}");
    for (i, r) in recs.iter().enumerate() {
        check_record(dir, meta, i, r)?;
    }
    let want = verdict_of(meta, recs);
    let m = format!(
        "run.json verdict `{}` but its files hold {} divergence record(s), {} failure(s) and \
         {t_div} diverged generated case(s): the verdict is {want}",
        meta.verdict,
        recs.len(),
        meta.failures.len()
    );
    refuse!(meta.verdict != want, d, "{m}");
    let sv = summary_verdict(dir)?;
    let said = sv.as_deref().unwrap_or("no result");
    let m = format!("summary.md says {said} but the verdict is {want}");
    refuse!(sv.as_deref() != Some(want), d, "{m}");
    let (jv, cases) = junit_facts(dir)?;
    let said = jv.as_deref().unwrap_or("no verdict");
    let m = format!("junit.xml says {said} but the verdict is {want}");
    refuse!(jv.as_deref() != Some(want), d, "{m}");
    if let Some(t) = meta.targets.iter().find(|t| !cases.contains(&t.name)) {
        let m = format!("junit.xml has no testcase for target {}", t.name);
        return Err(MergeError::at(d, m));
    }
    let unlisted =
        |c: &&String| Target::from_name(c).is_some() && !meta.targets.iter().any(|t| t.name == **c);
    if let Some(c) = cases.iter().find(unlisted) {
        let m = format!(
            "junit.xml has a testcase for target {c}, which run.json does not list (a missing \
             target)"
        );
        return Err(MergeError::at(d, m));
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
    let m = format!("record number {} (expected {line})", r.number);
    refuse!(r.number != line as u64, at, "{m}");
    refuse!(r.count == 0, at, "field `count` is 0");
    let m = format!("target `{}` is not one of the run's targets", r.target);
    refuse!(target.is_none() && r.target != VECTORS_CASE, at, "{m}");
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
    let m = format!("field `file` is `{}`, expected {file}", r.file);
    refuse!(r.file != file, at, "{m}");
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
    let m = format!(
        "{}: does not hold the minimised input of record {line} of {jsonl}",
        r.file
    );
    refuse!(held != minimized, dir.display(), "{m}");
    if let Err(e) = r.input_bytes() {
        return Err(MergeError::at(at, format_args!("field `input`: {e}")));
    }
    let m = format!("generation `{}` is not one of the run's", r.arch);
    refuse!(
        !meta.generations.iter().any(|g| g.name == r.arch),
        at,
        "{m}"
    );
    // The file and the replay commands are what the typed fields give (a record of an older
    // tpbconform, without `replay_subjects` / `replay_target`, fails here).
    refuse!(
        [&r.replay, &r.replay_file] != [&replay, &replay_file],
        at,
        "fields `replay` and `replay_file` are not the ones its target, generation, replay \
         subjects and minimised input give (a report of an older tpbconform? run the gate again)"
    );
    let target_has = |n: fn(&crate::gate::TargetStats) -> u64| target.is_some_and(|t| n(t) > 0);
    let t = &r.target;
    let (has, what) = match &r.origin {
        OriginRecord::Generated { generated: n, kind } => {
            refuse!(!r.origin.kind_known(), at, "unknown case kind `{kind}`");
            let shard = meta.shard.to_string();
            let m = format!("divergence from generated case #{n}, which is not in shard {shard}");
            refuse!(n % meta.shard.count != meta.shard.index, between, "{m}");
            let m =
                format!("generated case #{n} but run.json has no diverged generated case of {t}");
            (target_has(|t| t.diverged), m)
        }
        OriginRecord::Corpus { corpus } => {
            let m = format!("corpus file {corpus} but run.json has no diverged corpus file of {t}");
            (target_has(|t| t.corpus_diverged), m)
        }
        OriginRecord::Vector { vector, .. } => {
            let failed = |v: &crate::gate::vectors::FileStats| v.path == *vector && v.failed > 0;
            let m = format!("vector file {vector} but run.json has no failed check in it");
            (meta.vector_files.iter().any(failed), m)
        }
    };
    refuse!(!has, between, "divergence from {what}");
    Ok(())
}

pub fn load(dir: &Path) -> Result<ShardReport, MergeError> {
    let meta = read_meta(dir)?;
    let (shard, d) = (meta.shard.to_string(), &dir.display());
    let bad = meta.shard.count == 0 || meta.shard.index >= meta.shard.count;
    refuse!(bad, d, "run.json: bad shard {shard}");
    refuse!(
        meta.verdict == INCOMPLETE || !meta.complete,
        MergeError::incomplete(dir, &shard)
    );
    refuse!(
        meta.bad_input,
        d,
        "shard {shard} had bad input (its gate exited 2)"
    );
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
        let refusal = |meta: &RunMeta| check_subjects("d", meta).unwrap_err().0;
        assert!(refusal(&meta).contains("yet no failure says so"));
        meta.subjects[0].failures = 1;
        assert!(check_subjects("d", &meta).is_ok());
        meta.subjects[0].failures = 2;
        assert!(refusal(&meta).contains("2 failure(s)"));
    }
}
