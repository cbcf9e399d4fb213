//! The report as a document: its sections, tables and lists, stated once
//! from a [`ReportModel`]. `summary.md` ([`super::summary_md`]) and
//! `index.html` ([`super::index_html`]) are two formatters of the same
//! [`Document`], so both hold every section and every table and neither
//! writes one of its own.

use super::byte_map::{blamed_bytes, Side};
use super::format::TIMING_MARKER;
use super::model::{is_bundle_target, DivergenceRecord, ReportModel};
use crate::arch::Arch;
use crate::engine::bundle_from_input;
use crate::explain::explain_bundle;
use crate::gate::OUTCOMES;

/// A piece of inline text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Span {
    /// Plain text.
    Text(String),
    /// Code (`backticks` / `<code>`).
    Code(String),
    /// Emphasised (`**bold**` / `<strong>`), coloured by the verdict it names.
    Verdict(String),
    /// A per-row status: FAIL (true) or ok (false).
    Status(bool),
}

/// One line of inline text.
pub type Line = Vec<Span>;

fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

/// A block of a section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// A paragraph.
    Para(Line),
    /// A bullet list.
    Bullets(Vec<Line>),
    /// A table: column heads, which columns are numeric (right-aligned),
    /// rows of cells.
    Table {
        /// Column heads.
        head: Vec<String>,
        /// Right-aligned columns.
        numeric: Vec<bool>,
        /// Rows.
        rows: Vec<Vec<Line>>,
    },
    /// Preformatted text (`lang` for the Markdown fence).
    Pre {
        /// Fence language (`text`, or empty).
        lang: &'static str,
        /// The text.
        text: String,
    },
    /// An annotated bundle ([`crate::explain`]): lines marked `<== FAILED`
    /// are the failing field's.
    Annotated(String),
    /// The two field dumps of a divergence (Markdown: a unified diff; HTML:
    /// side by side).
    Dumps(Dumps),
    /// The 64-byte map of a divergence's minimised bundle: which bytes each
    /// side blames ([`super::byte_map::blamed_bytes`]).
    ByteMap {
        /// The 64 bytes.
        bytes: [u8; 64],
        /// Per side: subject name, blamed bytes.
        sides: Vec<(String, [bool; 64])>,
    },
}

/// The two field dumps of a divergence ([`Block::Dumps`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dumps {
    /// Left subject.
    pub left_name: String,
    /// Right subject.
    pub right_name: String,
    /// Left dump.
    pub left: String,
    /// Right dump.
    pub right: String,
    /// Shown when the dumps are equal.
    pub when_equal: String,
}

/// One section (`level` 2) or subsection (`level` 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Anchor (unique in the document).
    pub id: String,
    /// 2 or 3.
    pub level: u8,
    /// Title.
    pub title: Line,
    /// Content.
    pub blocks: Vec<Block>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// Title (h1).
    pub title: String,
    /// The bullet lines under the title.
    pub head: Vec<Line>,
    /// Sections in order.
    pub sections: Vec<Section>,
}

fn section(id: &str, title: &str, blocks: Vec<Block>) -> Section {
    Section {
        id: id.to_string(),
        level: 2,
        title: vec![text(title)],
        blocks,
    }
}

fn table(head: &[&str], numeric_from: usize, rows: Vec<Vec<Line>>) -> Block {
    Block::Table {
        head: head.iter().map(|h| (*h).to_string()).collect(),
        numeric: (0..head.len()).map(|i| i >= numeric_from).collect(),
        rows,
    }
}

fn n(x: u64) -> Line {
    vec![text(x.to_string())]
}

fn t(s: impl Into<String>) -> Line {
    vec![text(s)]
}

fn c(s: impl Into<String>) -> Line {
    vec![code(s)]
}

fn secs(d: std::time::Duration) -> f64 {
    d.as_secs_f64()
}

/// Cases per second as a whole number with a unit prefix (`1.34M`, `12.5k`).
pub fn rate(n: u64, s: f64) -> String {
    if s <= 0.0 {
        return "-".into();
    }
    let r = n as f64 / s;
    if r >= 1e6 {
        format!("{:.2}M", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.1}k", r / 1e3)
    } else {
        format!("{r:.0}")
    }
}

/// FACTS' codename of a generation.
fn arch_codename(name: &str) -> &'static str {
    match name.parse::<Arch>() {
        Ok(Arch::V2) => "Sunda",
        Ok(Arch::V3) => "Cayman",
        Ok(Arch::V4) => "Mariana",
        Ok(Arch::V5) => "Maverick",
        Err(_) => "?",
    }
}

/// The annotated reading of a divergence's minimised input (core's
/// reading), or a plain hex dump for inputs that are not bundles.
pub fn annotated(target: &str, input: &[u8], arch: Arch) -> String {
    if is_bundle_target(target) {
        explain_bundle(&bundle_from_input(input), "bundle", false, arch).0
    } else {
        let mut s = String::new();
        for (i, row) in input.chunks(16).enumerate() {
            s.push_str(&format!("{:04x}  ", i * 16));
            for b in row {
                s.push_str(&format!("{b:02x} "));
            }
            s.push('\n');
        }
        s
    }
}

/// Anchor of divergence `number`.
pub fn divergence_id(number: u64) -> String {
    format!("d{number}")
}

/// The document of a report.
pub fn document(m: &ReportModel) -> Document {
    let meta = &m.meta;
    let mut head: Vec<Line> = vec![vec![
        text("result: "),
        Span::Verdict(meta.verdict.clone()),
        text(format!(
            " — {} distinct divergence(s), {} divergent case(s), {} other failure(s)",
            meta.distinct_divergences,
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
                ", shard: {}/{}, generated cases per target requested: {}",
                meta.shard.index, meta.shard.count, meta.cases
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
    if !meta.failures.is_empty() {
        sections.push(section(
            "failures",
            "Failures",
            vec![Block::Bullets(meta.failures.iter().map(t).collect())],
        ));
    }
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
        let mut blocks = Vec::new();
        if m.is_merged() {
            blocks.push(Block::Para(t(
                "Every shard replays the whole corpus: one shard's counts.",
            )));
        }
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
    } else if !meta.unexercised.is_empty() {
        sections.push(section(
            "reach",
            "Unexercised classes (hit by no shard)",
            vec![Block::Bullets(meta.unexercised.iter().map(c).collect())],
        ));
    }
    if !meta.cohorts.is_empty() {
        sections.push(cohorts_section(m));
    }
    sections.extend(coverage_sections(m));
    sections.extend(divergence_sections(m));
    if !meta.notes.is_empty() {
        sections.push(section(
            "notes",
            "Notes",
            vec![Block::Bullets(meta.notes.iter().map(t).collect())],
        ));
    }
    sections.push(throughput_section(m));
    Document {
        title,
        head,
        sections,
    }
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
    let mut blocks = Vec::new();
    if m.is_merged() {
        blocks.push(Block::Para(t(
            "Generated counts are summed over the shards; every shard replays the whole corpus, \
             so corpus counts are one shard's.",
        )));
    }
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
                t(format!("{} {}", g.name, arch_codename(&g.name))),
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

fn subjects_sections(m: &ReportModel) -> Vec<Section> {
    let meta = &m.meta;
    let external = m.live.as_ref().map_or(&[][..], |l| &l.external[..]);
    let rows = meta
        .subjects
        .iter()
        .map(|s| {
            let ext = external.iter().find(|e| e.spec == s.spec);
            let cell = |f: &dyn Fn(&crate::gate::ExternalRun) -> String| ext.map_or("-".into(), f);
            vec![
                c(&s.spec),
                t(cell(&|e| e.stats.hello_name.clone())),
                t(&s.capabilities),
                t(cell(&|e| e.stats.calls.to_string())),
                t(cell(&|e| format!("{:.2} s", e.stats.busy.as_secs_f64()))),
                t(cell(&|e| {
                    e.rate().map_or("-".into(), |r| format!("{r:.0}"))
                })),
                t(cell(&|e| {
                    e.core_rate.map_or("-".into(), |r| format!("{r:.0}"))
                })),
                t(cell(&|e| e.stats.restarts.to_string())),
            ]
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
            &[
                "subject",
                "says it is",
                "capabilities",
                "calls",
                "time in subject",
                "cases/s",
                "core in-process cases/s (same cases)",
                "restarts",
            ],
            3,
            rows,
        ),
        Block::Para(t(format!(
            "cases/s: cases judged per second of time spent waiting for the subject; core \
             in-process: core answering the same generated cases (same case indices and \
             generations, the first {} of each target), weighted by the cases judged per \
             target.",
            crate::report::format::grouped(crate::gate::bench::CORE_RATE_CASES)
        ))),
    ];
    if !meta.unsupported.is_empty() {
        blocks.push(Block::Bullets(
            meta.unsupported
                .iter()
                .map(|u| {
                    t(format!(
                        "{}: not supported by {}",
                        u.target,
                        u.subjects.join(", ")
                    ))
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
            blocks: vec![Block::Pre {
                lang: "text",
                text: e.stats.stderr_tail.join("\n"),
            }],
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
    if m.is_merged() {
        intro.push(Block::Para(t(
            "Summed over the shards (corpus cases once per shard).",
        )));
    }
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

fn divergence_sections(m: &ReportModel) -> Vec<Section> {
    let mut out = vec![section(
        "divergences",
        "Divergences",
        if m.divergences.is_empty() {
            vec![Block::Para(t("None."))]
        } else {
            vec![Block::Bullets(
                m.divergences
                    .iter()
                    .map(|d| {
                        vec![
                            text(format!("{}. ", d.number)),
                            code(&d.target),
                            text(format!(
                                " — {} [{}] x{}",
                                d.signature_line(),
                                d.class,
                                d.count
                            )),
                        ]
                    })
                    .collect(),
            )]
        },
    )];
    if !m.divergences.is_empty() {
        out[0].blocks.push(Block::Para(t(
            "Replay commands name each subject by absolute path (a lib: path, and each relative \
             file argument of a cmd: command, resolved from the folder the gate ran in): the hex \
             form runs from any folder, the file form from this report folder.",
        )));
    }
    for d in &m.divergences {
        out.push(divergence_section(d));
    }
    out
}

fn divergence_section(d: &DivergenceRecord) -> Section {
    let input_len = d.input_bytes().map_or(0, |b| b.len());
    let minimized = d.minimized_bytes().unwrap_or_default();
    let mut facts = vec![
        vec![text("predicate / field: "), code(&d.signature.key)],
        if d.shards.is_empty() {
            t(format!("occurrences: {}; first: {}", d.count, d.origin))
        } else {
            t(format!(
                "occurrences: {} (shards {}); first: {}",
                d.count,
                d.shards.join(", "),
                d.origin
            ))
        },
        vec![text(format!("input ({input_len} bytes): ")), code(&d.input)],
        vec![
            text(format!("minimised ({} bytes): ", minimized.len())),
            code(&d.minimized),
        ],
    ];
    if let super::model::OriginRecord::Vector { expected, .. } = &d.origin {
        facts.push(vec![text("expected by the vector file: "), code(expected)]);
    }
    facts.push(vec![text("replay: "), code(&d.replay)]);
    facts.push(vec![
        text("replay (file, from this report folder): "),
        code(&d.replay_file),
    ]);
    facts.push(vec![text(format!("{}: ", d.left_name)), code(&d.left)]);
    facts.push(vec![text(format!("{}: ", d.right_name)), code(&d.right)]);
    if !d.cohorts.is_empty() {
        facts.push(vec![
            text("cohorts (who gave which answer): "),
            code(d.cohorts_line()),
        ]);
    }
    let mut blocks = vec![Block::Bullets(facts)];
    if is_bundle_target(&d.target) && minimized.len() <= 64 {
        blocks.push(Block::Para(t(
            "Bytes each side blames (byte map of the minimised input):",
        )));
        blocks.push(Block::ByteMap {
            bytes: bundle_from_input(&minimized),
            sides: [Side::Left, Side::Right]
                .into_iter()
                .map(|s| (d.side_name(s).to_string(), blamed_bytes(d, s)))
                .collect(),
        });
    }
    blocks.push(Block::Para(t(
        "Minimised input, annotated (core's reading):",
    )));
    blocks.push(Block::Annotated(annotated(&d.target, &minimized, d.arch())));
    blocks.push(Block::Para(t(format!(
        "Field-level diff ({} → {}) on the minimised input:",
        d.left_name, d.right_name
    ))));
    let w = d.left_name.len().max(d.right_name.len()) + 1;
    blocks.push(Block::Dumps(Dumps {
        left_name: d.left_name.clone(),
        right_name: d.right_name.clone(),
        left: d.left_dump.clone(),
        right: d.right_dump.clone(),
        when_equal: format!(
            "(dumps equal)\n{:w$} {}\n{:w$} {}",
            format!("{}:", d.left_name),
            d.left,
            format!("{}:", d.right_name),
            d.right
        ),
    }));
    Section {
        id: divergence_id(d.number),
        level: 3,
        title: vec![
            text(format!("{}. ", d.number)),
            code(&d.target),
            text(format!(" — {} [{}]", d.signature_line(), d.class)),
        ],
        blocks,
    }
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
                secs(*busy),
                rate(tm.ran, secs(*busy))
            ))
        })
        .collect();
    lines.push(t(format!(
        "{TIMING_MARKER} total: {} generated cases in {:.3} s wall = {} cases/s ({} threads); \
         whole run {:.3} s",
        m.generated(),
        secs(l.gen_elapsed),
        rate(m.generated(), secs(l.gen_elapsed)),
        l.threads,
        secs(l.elapsed)
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
