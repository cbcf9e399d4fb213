//! The document of a report: its head and every section but the
//! divergences ([`super::divergences`]), in order.

use super::blocks::{
    c, code, n, para, rate, section, t, table, text, Block, Document, Line, Section, Span,
};
use super::divergences::divergence_sections;
use crate::gate::{ArchStats, ExternalRun, TargetStats, OUTCOMES};
use crate::generation::Generation;
use crate::report::format::{each, find_or_push, grouped, TIMING_MARKER};
use crate::report::model::ReportModel;
use crate::report::run_json::{GivenUpMeta, ReachClass, RunMeta, SubjectMeta};

/// The targets a subject lacks, per generation it serves.
type PerGeneration<'a> = Vec<(&'a str, Vec<&'a str>)>;

/// True for a target only the reference pair can answer (its needs include a capability no
/// subject protocol op carries).
fn reference_only(target: &str) -> bool {
    crate::targets::Target::from_name(target).is_some_and(|t| {
        let needs = t.spec().needs;
        crate::subjects::Capability::REFERENCE_ONLY.missing(needs) != needs
    })
}

/// The document of a report.
pub fn document(m: &ReportModel) -> Document {
    let meta = &m.meta;
    let result = format!(
        " — {} distinct divergence(s) ({}), {} divergent case(s), {} other failure(s)",
        meta.distinct_divergences,
        m.root_causes_line(),
        meta.divergent_cases,
        meta.failures.len()
    );
    let mut head = vec![vec![
        text("result: "),
        Span::Verdict(meta.verdict.clone()),
        text(result),
    ]];
    let (mut title, cases) = ("tpbconform gate report".to_string(), meta.cases);
    let cases = format!("generated cases per target requested: {cases}");
    if m.is_merged() {
        let tail = format!(", {cases}, tpbconform {}", meta.version);
        head.push(vec![text("seed: "), code(&meta.seed), text(tail)]);
        title += &format!(" (merged from {} shards)", m.shards.len());
        let mut shards = vec![text("shards: ")];
        for (i, s) in m.shards.iter().enumerate() {
            let sep = if i > 0 { ", " } else { "" };
            shards.push(text(format!("{sep}{} ", s.shard)));
            shards.push(code(s.dir.display().to_string()));
            shards.push(text(format!(" ({})", s.verdict)));
        }
        head.push(shards);
    } else {
        let tail = format!(", shard: {}, {cases}", meta.shard);
        head.push(vec![text("seed: "), code(&meta.seed), text(tail)]);
    }
    let names: Vec<&str> = meta.targets.iter().map(|t| t.name.as_str()).collect();
    head.push(t(format!("targets: {}", names.join(", "))));
    let ran = match (m.is_merged(), meta.complete) {
        (true, _) => "every shard complete",
        (false, true) => "all planned",
        (false, false) => "stopped early",
    };
    head.push(t(format!("generated cases run: {} ({ran})", m.generated())));
    let gens: Vec<&str> = meta.generations.iter().map(|g| g.name.as_str()).collect();
    head.push(t(format!("generations: {}", gens.join(", "))));
    if let Some(l) = &m.live {
        head.push(t(format!("{TIMING_MARKER} generated at {}", l.timestamp)));
        let budget = l
            .cfg
            .seconds
            .map_or_else(|| "none".to_string(), |b| format!("{b} s"));
        head.push(t(format!(
            "{TIMING_MARKER} budget: {budget}, threads: {}",
            l.cfg.threads.max(1)
        )));
    }
    let mut sections = Vec::new();
    sections.extend(bullets("failures", "Failures", &meta.failures, t));
    // Divergences first (issue 32): the result, then what diverged, then the rest.
    sections.extend(divergence_sections(m));
    sections.push(targets_section(m));
    if !meta.generations.is_empty() {
        sections.push(generations_section(m));
    }
    if !meta.subjects.is_empty() {
        sections.extend(subjects_sections(m));
    }
    if !meta.corpus.is_empty() {
        let row = |c: &crate::gate::CorpusFolder| {
            vec![
                t(format!("{}/", c.name)),
                t(c.routes.join(", ")),
                n(c.files),
                n(c.diverged),
            ]
        };
        let mut blocks = merged_note(
            m,
            "Every shard replays the whole corpus: one shard's counts.",
        );
        let head = "folder|replayed through|files|diverged";
        blocks.push(table(head, 2, meta.corpus.iter().map(row).collect()));
        sections.push(section("corpus", "Corpus folders", blocks));
    }
    if !meta.vector_files.is_empty() {
        let row = |v: &crate::gate::vectors::FileStats| {
            vec![
                t(&v.path),
                n(v.vectors),
                n(v.failed),
                n(v.other_generations),
            ]
        };
        let head = "file|checks (vector × generation)|failed|vectors of no generation run";
        let rows = meta.vector_files.iter().map(row).collect();
        let title = "Vector files (checked against core and oracle)";
        sections.push(section("vectors", title, vec![table(head, 1, rows)]));
    }
    if !meta.reach.is_empty() {
        sections.push(reach_section(m));
    } else {
        let title = "Unexercised classes (hit by no shard)";
        sections.extend(bullets("reach", title, &meta.unexercised, c));
    }
    if !meta.cohorts.is_empty() {
        let rows = each(&meta.cohorts, |cm| vec![t(&cm.pattern), n(cm.inputs)]);
        let about = para(
            "With two or more subjects under test: each divergent input (per generation) grouped \
             by which implementations gave the same answer, core's cohort first. Each divergence \
             below lists its representative input's cohorts with their answers.",
        );
        let blocks = vec![about, table("cohort pattern|inputs", 1, rows)];
        sections.push(section("cohorts", "Cohorts: who agreed with whom", blocks));
    }
    sections.extend(coverage_sections(m));
    sections.extend(bullets("notes", "Notes", &meta.notes, t));
    sections.push(throughput_section(m));
    Document {
        title,
        head,
        sections,
    }
}

/// `note` as a paragraph when `m` is merged from shards (what its counts mean then).
fn merged_note(m: &ReportModel, note: &str) -> Vec<Block> {
    m.is_merged().then(|| para(note)).into_iter().collect()
}

/// A section of one bullet per item, none without items.
fn bullets(id: &str, title: &str, items: &[String], line: fn(String) -> Line) -> Option<Section> {
    (!items.is_empty()).then(|| {
        let lines = items.iter().cloned().map(line).collect();
        section(id, title, vec![Block::Bullets(lines)])
    })
}

fn targets_section(m: &ReportModel) -> Section {
    let row = |tm: &TargetStats| {
        let files = if tm.corpus_present {
            n(tm.corpus_files)
        } else {
            t("(no folder)")
        };
        vec![
            t(&tm.name),
            vec![Span::Status(m.target_failed(&tm.name))],
            files,
            n(tm.corpus_diverged),
            t(format!("{} / {}", tm.ran, tm.planned)),
            n(tm.valid),
            n(tm.near_valid),
            n(tm.raw),
            n(tm.diverged),
        ]
    };
    let mut blocks = merged_note(
        m,
        "Generated counts are summed over the shards; every shard replays the whole corpus, so \
         corpus counts are one shard's.",
    );
    let head = "target|status|corpus files|corpus diverged|generated / planned|valid|near-valid|\
                raw|diverged";
    blocks.push(table(head, 2, m.meta.targets.iter().map(row).collect()));
    section("targets", "Targets", blocks)
}

fn generations_section(m: &ReportModel) -> Section {
    let row = |g: &ArchStats| {
        let codename = g
            .name
            .parse::<Generation>()
            .map_or("?", Generation::codename);
        let name = t(format!("{} {codename}", g.name));
        vec![
            name,
            vec![Span::Status(m.generation_failed(g))],
            n(g.ran),
            n(g.diverged),
        ]
    };
    let about = para(format!(
        "Generated case i runs under the (i mod {})-th generation; the corpus and the vectors \
         run under each.",
        m.meta.generations.len()
    ));
    let rows = m.meta.generations.iter().map(row).collect();
    let table = table("generation|status|generated cases|diverged", 2, rows);
    section("generations", "Generations", vec![about, table])
}

/// The operations subject `s` was given up on, each with its generation and
/// the cases not run because of it (`-`: none).
fn given_up_cell(s: &SubjectMeta) -> String {
    if s.given_up.is_empty() {
        return "-".into();
    }
    let one = |g: &GivenUpMeta| {
        let n = grouped(g.cases_not_run);
        format!("{} ({}: {n} case(s) not run)", g.operation, g.generation)
    };
    s.given_up.iter().map(one).collect::<Vec<_>>().join("; ")
}

fn subjects_sections(m: &ReportModel) -> Vec<Section> {
    let meta = &m.meta;
    let external = m.live.as_ref().map_or(&[][..], |l| &l.run.external[..]);
    let row = |s: &SubjectMeta| {
        let says = external.iter().find(|e| e.spec == s.spec);
        let says = says.map_or("-".into(), |e| e.stats.hello_name.clone());
        vec![c(&s.spec), t(says), t(&s.capabilities), t(given_up_cell(s))]
    };
    // Calls, answers, time and restarts depend on the clock and the machine
    // (a restart per fault, re-sent requests, what a thread prefetched): one
    // `[timing]` line each, so two reports of a seed compare equal without
    // them (issue 35).
    let timing = |e: &ExternalRun| {
        let per_s = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.0}"));
        let st = &e.stats;
        t(format!(
            "{TIMING_MARKER} {}: {} calls, {} answers received, {} compared, {:.2} s in the \
             subject = {} cases/s; core in-process on the same cases: {} cases/s; {} restart(s)",
            e.spec,
            st.calls,
            st.received,
            st.compared,
            st.busy.as_secs_f64(),
            per_s(e.rate()),
            per_s(e.core_rate),
            st.restarts
        ))
    };
    let judged_on = match meta.subject_cases_cap {
        None => "every generated case of each target they support".to_string(),
        Some(n) => format!(
            "the first {n} generated cases of each target they support (--subject-cases {n})"
        ),
    };
    let per_target = |s: &SubjectMeta| {
        let targets = s.targets.iter();
        let targets =
            targets.map(|tm| vec![c(&s.spec), t(&tm.name), n(tm.corpus), n(tm.generated)]);
        let vectors = vec![c(&s.spec), t("vectors"), n(s.vector_checks), t("-")];
        targets
            .chain((s.vector_checks > 0).then_some(vectors))
            .collect::<Vec<_>>()
    };
    let mut blocks = vec![
        para(format!(
            "Judged on the corpus, the vectors and {judged_on}, under every generation they \
             accept."
        )),
        Block::Bullets(m.subject_lines().into_iter().map(t).collect()),
        table(
            "subject|target|corpus / vector checks judged|generated cases judged",
            2,
            meta.subjects.iter().flat_map(per_target).collect(),
        ),
        table(
            "subject|says it is|capabilities|given up on",
            4,
            meta.subjects.iter().map(row).collect(),
        ),
        Block::Bullets(external.iter().map(timing).collect()),
        para(format!(
            "calls: requests handed to the subject; answers received: those its transport \
             delivered (not a crash, hang, request never sent, or an answer the harness lost: \
             a harness fault, class Harness, never the subject's divergence); answers \
             compared: those the judge compared with core's. cases/s: cases judged per second \
             of the subject's time (a `lib:` subject's: its \
             worker's own time per shared-memory hand-off, so the gate's work meanwhile is \
             not counted; other subjects: the time spent waiting for them); core \
             in-process: core answering the same generated cases (same case indices and \
             generations, the first {} of each target), weighted by the cases judged per \
             target.",
            grouped(crate::gate::bench::CORE_RATE_CASES)
        )),
    ];
    blocks.extend(unsupported_lines(meta).map(Block::Bullets));
    let title = "Subjects under test (each judged against core)";
    let mut out = vec![section("subjects", title, blocks)];
    for (i, e) in external.iter().enumerate() {
        let tail = &e.stats.stderr_tail;
        if tail.is_empty() {
            continue;
        }
        out.push(Section {
            id: format!("stderr-{}", i + 1),
            level: 3,
            title: vec![
                text("stderr of "),
                code(&e.spec),
                text(format!(" (last {} lines)", tail.len())),
            ],
            blocks: vec![Block::Pre(tail.join("\n"))],
        });
    }
    out
}

/// One line per subject (issue 32), without the targets only the reference pair answers: a
/// subject is listed per generation (`SPEC (v3)`); generations lacking the same targets share
/// one clause. `None` when every subject supports every such target.
fn unsupported_lines(meta: &RunMeta) -> Option<Vec<Line>> {
    let answerable: Vec<&str> = meta
        .targets
        .iter()
        .map(|t| t.name.as_str())
        .filter(|t| !reference_only(t))
        .collect();
    let mut by_subject: Vec<(&str, PerGeneration<'_>)> = Vec::new();
    for u in meta
        .unsupported
        .iter()
        .filter(|u| !reference_only(&u.target))
    {
        for s in &u.subjects {
            let (base, gen) = match s.rsplit_once(" (") {
                Some((b, g)) if g.ends_with(')') => (b, g.trim_end_matches(')')),
                _ => (s.as_str(), ""),
            };
            let (_, gens) = find_or_push(&mut by_subject, |(n, _)| *n == base, || (base, vec![]));
            find_or_push(gens, |(g, _)| *g == gen, || (gen, vec![]))
                .1
                .push(&u.target);
        }
    }
    let line = |(s, gens): &(&str, PerGeneration<'_>)| {
        let mut clauses: Vec<(String, Vec<&str>)> = Vec::new();
        for (g, ts) in gens {
            let what = if *ts == answerable {
                "every target".to_string()
            } else {
                ts.join(", ")
            };
            find_or_push(&mut clauses, |(w, _)| *w == what, || (what.clone(), vec![]))
                .1
                .push(g);
        }
        let clause = |(w, gs): &(String, Vec<&str>)| {
            let gs: Vec<&str> = gs.iter().copied().filter(|g| !g.is_empty()).collect();
            if gs.is_empty() {
                w.clone()
            } else {
                format!("{w} ({})", gs.join(", "))
            }
        };
        let text = clauses.iter().map(clause).collect::<Vec<_>>().join("; ");
        t(format!("{s}: not supported: {text}"))
    };
    (!by_subject.is_empty()).then(|| by_subject.iter().map(line).collect())
}

fn reach_section(m: &ReportModel) -> Section {
    let meta = &m.meta;
    let row = |(field, classes): (&String, &Vec<ReachClass>)| {
        let cells = each(classes, |r| format!("{} ({})", r.class, r.hits));
        vec![c(field), t(cells.join(", "))]
    };
    let mut blocks = vec![
        para(format!(
            "Generated cases, one in {} of each target: each field's declared value classes \
             (enum members and non-members, table edges, zero / one / max, reserved zero / \
             nonzero, equal nonzero reserved bytes; group argument counts; the generation a case \
             ran under) and how often they were hit. A complete unsharded run of every target \
             with the default case count fails when a class is never hit.",
            crate::gate::REACH_SAMPLE
        )),
        table(
            "field|classes hit (count)",
            2,
            meta.reach.iter().map(row).collect(),
        ),
    ];
    match meta.unexercised.len() {
        0 => blocks.push(para("Unexercised classes: none.")),
        n => blocks.extend([
            para(format!("Unexercised classes ({n}):")),
            Block::Bullets(meta.unexercised.iter().map(c).collect()),
        ]),
    }
    section("reach", "Reach: value classes of every field", blocks)
}

fn coverage_sections(m: &ReportModel) -> Vec<Section> {
    let about = "Rows are core's verdict (validator predicate, decode field or mnemonic, LUT / \
                 gate result); columns the differential outcome. Corpus and generated cases.";
    let merged = merged_note(m, "Summed over the shards (corpus cases once per shard).");
    let intro = [vec![para(about)], merged].concat();
    let mut out = vec![section(
        "coverage",
        "Coverage: core verdict × outcome",
        intro,
    )];
    let head = format!("core verdict|{}", OUTCOMES.join("|"));
    for tm in &m.meta.targets {
        let row = |(k, counts): (&String, &[u64; 6])| {
            [c(k)]
                .into_iter()
                .chain(counts.iter().map(|x| n(*x)))
                .collect()
        };
        let mut rows: Vec<Vec<Line>> = tm.coverage.iter().map(row).collect();
        if rows.is_empty() {
            let blank = OUTCOMES.iter().map(|_| Line::new());
            rows.push([t("(no case ran)")].into_iter().chain(blank).collect());
        }
        out.push(Section {
            id: format!("coverage-{}", tm.name),
            level: 3,
            title: t(&tm.name),
            blocks: vec![table(&head, 1, rows)],
        });
    }
    out
}

fn throughput_section(m: &ReportModel) -> Section {
    let Some(l) = &m.live else {
        let why = "Not recorded in a merged report (clock-dependent): see each shard's summary.md.";
        return section("throughput", "Throughput", vec![para(why)]);
    };
    let line = |tm: &TargetStats| {
        let s = tm.busy.as_secs_f64();
        let r = rate(tm.ran, s);
        t(format!(
            "{TIMING_MARKER} {}: {} cases in {s:.3} s worker time = {r} cases/s per core",
            tm.name, tm.ran
        ))
    };
    let mut lines: Vec<Line> = m.meta.targets.iter().map(line).collect();
    let (g, s) = (m.generated(), l.run.gen_elapsed.as_secs_f64());
    lines.push(t(format!(
        "{TIMING_MARKER} total: {g} generated cases in {s:.3} s wall = {} cases/s ({} threads); \
         whole run {:.3} s",
        rate(g, s),
        l.cfg.threads.max(1),
        l.run.elapsed.as_secs_f64()
    )));
    let about = para(
        "Per target: cases per second of worker time (one core); total: generated cases per \
         wall-clock second of the generated phase, all threads.",
    );
    section(
        "throughput",
        "Throughput",
        vec![about, Block::Bullets(lines)],
    )
}
