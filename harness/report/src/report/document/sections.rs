//! The document of a report: its head and every section but the
//! divergences ([`super::divergences`]), in order.

use super::blocks::{
    c, code, n, rate, section, t, table, text, Block, Document, Line, Section, Span,
};
use super::divergences::divergence_sections;
use crate::gate::OUTCOMES;
use crate::generation::Generation;
use crate::report::format::{find_or_push, TIMING_MARKER};
use crate::report::model::ReportModel;
use crate::report::run_json::SubjectMeta;
use crate::report::shard::shard_name;

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
    let mut head: Vec<Line> = vec![vec![
        text("result: "),
        Span::Verdict(meta.verdict.clone()),
        text(format!(
            " — {} distinct divergence(s) ({}), {} divergent case(s), {} other failure(s)",
            meta.distinct_divergences,
            m.root_causes_line(),
            meta.divergent_cases,
            meta.failures.len()
        )),
    ]];
    let title = if m.is_merged() {
        head.push(vec![
            text("seed: "),
            code(&meta.seed),
            text(format!(
                ", generated cases per target requested: {}, tpbconform {}",
                meta.cases, meta.version
            )),
        ]);
        let mut shards = vec![text("shards: ")];
        for (i, s) in m.shards.iter().enumerate() {
            if i > 0 {
                shards.push(text(", "));
            }
            shards.push(text(format!("{} ", s.shard)));
            shards.push(code(s.dir.display().to_string()));
            shards.push(text(format!(" ({})", s.verdict)));
        }
        head.push(shards);
        format!(
            "tpbconform gate report (merged from {} shards)",
            m.shards.len()
        )
    } else {
        head.push(vec![
            text("seed: "),
            code(&meta.seed),
            text(format!(
                ", shard: {}, generated cases per target requested: {}",
                shard_name(meta.shard),
                meta.cases
            )),
        ]);
        "tpbconform gate report".to_string()
    };
    let names: Vec<&str> = meta.targets.iter().map(|t| t.name.as_str()).collect();
    head.push(t(format!("targets: {}", names.join(", "))));
    head.push(t(format!(
        "generated cases run: {} ({})",
        m.generated(),
        if m.is_merged() {
            "every shard complete"
        } else if meta.complete {
            "all planned"
        } else {
            "stopped early"
        }
    )));
    let gens: Vec<&str> = meta.generations.iter().map(|g| g.name.as_str()).collect();
    head.push(t(format!("generations: {}", gens.join(", "))));
    if let Some(l) = &m.live {
        head.push(t(format!("{TIMING_MARKER} generated at {}", l.timestamp)));
        head.push(t(format!(
            "{TIMING_MARKER} budget: {}, threads: {}",
            l.budget
                .map_or_else(|| "none".to_string(), |b| format!("{b} s")),
            l.threads
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
        let rows = meta
            .corpus
            .iter()
            .map(|c| {
                vec![
                    t(format!("{}/", c.name)),
                    t(c.routes.join(", ")),
                    n(c.files),
                    n(c.diverged),
                ]
            })
            .collect();
        let mut blocks = merged_note(
            m,
            "Every shard replays the whole corpus: one shard's counts.",
        );
        blocks.push(table(
            &["folder", "replayed through", "files", "diverged"],
            2,
            rows,
        ));
        sections.push(section("corpus", "Corpus folders", blocks));
    }
    if !meta.vector_files.is_empty() {
        let rows = meta
            .vector_files
            .iter()
            .map(|v| {
                vec![
                    t(&v.path),
                    n(v.vectors),
                    n(v.failed),
                    n(v.other_generations),
                ]
            })
            .collect();
        sections.push(section(
            "vectors",
            "Vector files (checked against core and oracle)",
            vec![table(
                &[
                    "file",
                    "checks (vector × generation)",
                    "failed",
                    "vectors of no generation run",
                ],
                1,
                rows,
            )],
        ));
    }
    if !meta.reach.is_empty() {
        sections.push(reach_section(m));
    } else {
        sections.extend(bullets(
            "reach",
            "Unexercised classes (hit by no shard)",
            &meta.unexercised,
            c,
        ));
    }
    if !meta.cohorts.is_empty() {
        sections.push(cohorts_section(m));
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
    if m.is_merged() {
        vec![Block::Para(t(note))]
    } else {
        Vec::new()
    }
}

/// A section of one bullet per item, none without items.
fn bullets(id: &str, title: &str, items: &[String], line: fn(String) -> Line) -> Option<Section> {
    (!items.is_empty()).then(|| {
        let lines = items.iter().cloned().map(line).collect();
        section(id, title, vec![Block::Bullets(lines)])
    })
}

fn targets_section(m: &ReportModel) -> Section {
    let rows = m
        .meta
        .targets
        .iter()
        .map(|tm| {
            vec![
                t(&tm.name),
                vec![Span::Status(m.target_failed(&tm.name))],
                if tm.corpus_present {
                    n(tm.corpus_files)
                } else {
                    t("(no folder)")
                },
                n(tm.corpus_diverged),
                t(format!("{} / {}", tm.ran, tm.planned)),
                n(tm.valid),
                n(tm.near_valid),
                n(tm.raw),
                n(tm.diverged),
            ]
        })
        .collect();
    let mut blocks = merged_note(
        m,
        "Generated counts are summed over the shards; every shard replays the whole corpus, so \
         corpus counts are one shard's.",
    );
    blocks.push(table(
        &[
            "target",
            "status",
            "corpus files",
            "corpus diverged",
            "generated / planned",
            "valid",
            "near-valid",
            "raw",
            "diverged",
        ],
        2,
        rows,
    ));
    section("targets", "Targets", blocks)
}

fn generations_section(m: &ReportModel) -> Section {
    let rows = m
        .meta
        .generations
        .iter()
        .map(|g| {
            vec![
                t(format!(
                    "{} {}",
                    g.name,
                    g.name
                        .parse::<Generation>()
                        .map_or("?", Generation::codename)
                )),
                vec![Span::Status(m.generation_failed(g))],
                n(g.ran),
                n(g.diverged),
            ]
        })
        .collect();
    section(
        "generations",
        "Generations",
        vec![
            Block::Para(t(format!(
                "Generated case i runs under the (i mod {})-th generation; the corpus and the \
                 vectors run under each.",
                m.meta.generations.len()
            ))),
            table(
                &["generation", "status", "generated cases", "diverged"],
                2,
                rows,
            ),
        ],
    )
}

/// The operations subject `s` was given up on, each with its generation and
/// the cases not run because of it (`-`: none).
fn given_up_cell(s: &SubjectMeta) -> String {
    if s.given_up.is_empty() {
        return "-".into();
    }
    s.given_up
        .iter()
        .map(|g| {
            format!(
                "{} ({}: {} case(s) not run)",
                g.operation,
                g.generation,
                crate::report::format::grouped(g.cases_not_run)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn subjects_sections(m: &ReportModel) -> Vec<Section> {
    let meta = &m.meta;
    let external = m.live.as_ref().map_or(&[][..], |l| &l.external[..]);
    let rows = meta
        .subjects
        .iter()
        .map(|s| {
            let ext = external.iter().find(|e| e.spec == s.spec);
            vec![
                c(&s.spec),
                t(ext.map_or("-".into(), |e| e.stats.hello_name.clone())),
                t(&s.capabilities),
                t(given_up_cell(s)),
            ]
        })
        .collect();
    // Calls, answers, time and restarts depend on the clock and the machine
    // (a restart per fault, re-sent requests, what a thread prefetched): one
    // `[timing]` line each, so two reports of a seed compare equal without
    // them (issue 35).
    let timing: Vec<Line> = external
        .iter()
        .map(|e| {
            t(format!(
                "{TIMING_MARKER} {}: {} calls, {} answers received, {} compared, {:.2} s in the \
                 subject = {} cases/s; core in-process on the same cases: {} cases/s; {} \
                 restart(s)",
                e.spec,
                e.stats.calls,
                e.stats.received,
                e.stats.compared,
                e.stats.busy.as_secs_f64(),
                e.rate().map_or("-".into(), |r| format!("{r:.0}")),
                e.core_rate.map_or("-".into(), |r| format!("{r:.0}")),
                e.stats.restarts
            ))
        })
        .collect();
    let judged_on = match meta.subject_cases_cap {
        None => "every generated case of each target they support, under every generation they \
                 accept"
            .to_string(),
        Some(n) => format!(
            "the first {n} generated cases of each target they support (--subject-cases {n}), \
             under every generation they accept"
        ),
    };
    let per_target: Vec<Vec<Line>> = meta
        .subjects
        .iter()
        .flat_map(|s| {
            s.targets
                .iter()
                .map(|tm| vec![c(&s.spec), t(&tm.name), n(tm.corpus), n(tm.generated)])
                .chain(
                    (s.vector_checks > 0)
                        .then(|| vec![c(&s.spec), t("vectors"), n(s.vector_checks), t("-")]),
                )
                .collect::<Vec<_>>()
        })
        .collect();
    let mut blocks = vec![
        Block::Para(t(format!(
            "Judged on the corpus, the vectors and {judged_on}."
        ))),
        Block::Bullets(m.subject_lines().into_iter().map(t).collect()),
        table(
            &[
                "subject",
                "target",
                "corpus / vector checks judged",
                "generated cases judged",
            ],
            2,
            per_target,
        ),
        table(
            &["subject", "says it is", "capabilities", "given up on"],
            4,
            rows,
        ),
        Block::Bullets(timing),
        Block::Para(t(format!(
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
            crate::report::format::grouped(crate::gate::bench::CORE_RATE_CASES)
        ))),
    ];
    // One line per subject (issue 32), without the targets only the reference pair answers: a
    // subject is listed per generation (`SPEC (v3)`); generations lacking the same targets share
    // one clause.
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
    if !by_subject.is_empty() {
        blocks.push(Block::Bullets(
            by_subject
                .iter()
                .map(|(s, gens)| {
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
                    let text = clauses
                        .iter()
                        .map(|(w, gs)| {
                            let gs: Vec<&str> =
                                gs.iter().copied().filter(|g| !g.is_empty()).collect();
                            if gs.is_empty() {
                                w.clone()
                            } else {
                                format!("{w} ({})", gs.join(", "))
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("; ");
                    t(format!("{s}: not supported: {text}"))
                })
                .collect(),
        ));
    }
    let mut out = vec![section(
        "subjects",
        "Subjects under test (each judged against core)",
        blocks,
    )];
    for (i, e) in external.iter().enumerate() {
        if e.stats.stderr_tail.is_empty() {
            continue;
        }
        out.push(Section {
            id: format!("stderr-{}", i + 1),
            level: 3,
            title: vec![
                text("stderr of "),
                code(&e.spec),
                text(format!(" (last {} lines)", e.stats.stderr_tail.len())),
            ],
            blocks: vec![Block::Pre(e.stats.stderr_tail.join("\n"))],
        });
    }
    out
}

fn cohorts_section(m: &ReportModel) -> Section {
    let rows = m
        .meta
        .cohorts
        .iter()
        .map(|cm| vec![t(&cm.pattern), n(cm.inputs)])
        .collect();
    section(
        "cohorts",
        "Cohorts: who agreed with whom",
        vec![
            Block::Para(t(
                "With two or more subjects under test: each divergent input (per generation) \
                 grouped by which implementations gave the same answer, core's cohort first. \
                 Each divergence below lists its representative input's cohorts with their \
                 answers.",
            )),
            table(&["cohort pattern", "inputs"], 1, rows),
        ],
    )
}

fn reach_section(m: &ReportModel) -> Section {
    let meta = &m.meta;
    let rows = meta
        .reach
        .iter()
        .map(|(field, classes)| {
            let cells: Vec<String> = classes
                .iter()
                .map(|r| format!("{} ({})", r.class, r.hits))
                .collect();
            vec![c(field), t(cells.join(", "))]
        })
        .collect();
    let mut blocks = vec![
        Block::Para(t(format!(
            "Generated cases, one in {} of each target: each field's declared value classes \
             (enum members and non-members, table edges, zero / one / max, reserved zero / \
             nonzero, equal nonzero reserved bytes; group argument counts; the generation a case \
             ran under) and how often they were hit. A complete unsharded run of every target \
             with the default case count fails when a class is never hit.",
            crate::gate::REACH_SAMPLE
        ))),
        table(&["field", "classes hit (count)"], 2, rows),
    ];
    if meta.unexercised.is_empty() {
        blocks.push(Block::Para(t("Unexercised classes: none.")));
    } else {
        blocks.push(Block::Para(t(format!(
            "Unexercised classes ({}):",
            meta.unexercised.len()
        ))));
        blocks.push(Block::Bullets(meta.unexercised.iter().map(c).collect()));
    }
    section("reach", "Reach: value classes of every field", blocks)
}

fn coverage_sections(m: &ReportModel) -> Vec<Section> {
    let mut intro = vec![Block::Para(t(
        "Rows are core's verdict (validator predicate, decode field or mnemonic, LUT / gate \
         result); columns the differential outcome. Corpus and generated cases.",
    ))];
    intro.extend(merged_note(
        m,
        "Summed over the shards (corpus cases once per shard).",
    ));
    let mut out = vec![section(
        "coverage",
        "Coverage: core verdict × outcome",
        intro,
    )];
    let mut head = vec!["core verdict"];
    head.extend(OUTCOMES);
    for tm in &m.meta.targets {
        let mut rows: Vec<Vec<Line>> = tm
            .coverage
            .iter()
            .map(|(k, counts)| {
                let mut r = vec![c(k)];
                r.extend(counts.iter().map(|x| n(*x)));
                r
            })
            .collect();
        if rows.is_empty() {
            let mut r = vec![t("(no case ran)")];
            r.extend(OUTCOMES.iter().map(|_| Line::new()));
            rows.push(r);
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
        return section(
            "throughput",
            "Throughput",
            vec![Block::Para(t(
                "Not recorded in a merged report (clock-dependent): see each shard's summary.md.",
            ))],
        );
    };
    let mut lines: Vec<Line> = m
        .meta
        .targets
        .iter()
        .zip(&l.busy)
        .map(|(tm, busy)| {
            t(format!(
                "{TIMING_MARKER} {}: {} cases in {:.3} s worker time = {} cases/s per core",
                tm.name,
                tm.ran,
                busy.as_secs_f64(),
                rate(tm.ran, busy.as_secs_f64())
            ))
        })
        .collect();
    lines.push(t(format!(
        "{TIMING_MARKER} total: {} generated cases in {:.3} s wall = {} cases/s ({} threads); \
         whole run {:.3} s",
        m.generated(),
        l.gen_elapsed.as_secs_f64(),
        rate(m.generated(), l.gen_elapsed.as_secs_f64()),
        l.threads,
        l.elapsed.as_secs_f64()
    )));
    section(
        "throughput",
        "Throughput",
        vec![
            Block::Para(t(
                "Per target: cases per second of worker time (one core); total: generated cases \
                 per wall-clock second of the generated phase, all threads.",
            )),
            Block::Bullets(lines),
        ],
    )
}
