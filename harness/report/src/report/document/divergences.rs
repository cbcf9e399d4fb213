//! The divergence sections: the list, then one per divergence (facts, byte map, annotated
//! input, field diff).

use super::blocks::{code, para, section, t, text, Block, Dumps, Section};
use crate::explain::explain_bundle;
use crate::generation::Generation;
use crate::judge::bundle_from_input;
use crate::report::byte_map::{blamed_bytes, side_detail, Side};
use crate::report::format::shown;
use crate::report::model::{is_bundle_target, DivergenceRecord, ReportModel};
use crate::targets::Target;

/// Core's annotated reading of a minimised input, or a hex dump for inputs that are not bundles.
fn annotated(target: &str, input: &[u8], arch: Generation) -> Block {
    if is_bundle_target(target) {
        let e = explain_bundle(&bundle_from_input(input), "bundle", false, arch);
        return Block::Annotated {
            text: e.text(),
            failed_lines: e.failed_lines,
        };
    }
    let mut s = String::new();
    for (i, row) in input.chunks(16).enumerate() {
        let bytes: String = row.iter().map(|b| format!("{b:02x} ")).collect();
        s.push_str(&format!("{:04x}  {bytes}\n", i * 16));
    }
    // What the input becomes when that is not the input itself (a LUT
    // ordinal, a stream program's stream: what every side was asked about).
    if let Some(r) =
        Target::from_name(target).and_then(|t| crate::kinds::of(t).case_reading(t, input))
    {
        s.push('\n');
        s.push_str(&r);
    }
    Block::Annotated {
        text: s,
        failed_lines: Vec::new(),
    }
}

/// `input (N bytes): HEX`; for a case that is not its input (a stream program), what the
/// subjects were asked: `input: the stream it builds (K bundles, N bytes): HEX (generator
/// bytes: HEX)` (issue 32).
fn input_fact(what: &str, target: &str, bytes: &[u8], hex: &str) -> Vec<super::blocks::Span> {
    let built: Vec<u8> = Target::from_name(target)
        .map(|t| crate::kinds::of(t).case_bundles(t, bytes).concat())
        .unwrap_or_default();
    if built.is_empty() || built == bytes || is_bundle_target(target) {
        return vec![text(format!("{what} ({} bytes): ", bytes.len())), code(hex)];
    }
    let more = if built.len() > 256 { "…" } else { "" };
    vec![
        text(format!(
            "{what}: the stream it builds ({} bundles, {} bytes): ",
            built.len() / 64,
            built.len()
        )),
        code(crate::subjects::hex(&built[..built.len().min(256)]) + more),
        text(" (generator bytes: "),
        code(hex),
        text(")"),
    ]
}

pub(super) fn divergence_sections(m: &ReportModel) -> Vec<Section> {
    let item = |d: &DivergenceRecord| {
        let headline = format!(" — {}{}", d.headline(Some(d.count)), fold_note(m, d));
        vec![
            text(format!("{}. ", d.number)),
            code(&d.target),
            text(headline),
        ]
    };
    let list = if m.divergences.is_empty() {
        vec![para("None.")]
    } else {
        let replay = para(
            "Replay commands name each subject by absolute path (a lib: path, and each relative \
             file argument of a cmd: command, resolved from the folder the gate ran in): the hex \
             form runs from any folder, the file form from this report folder.",
        );
        vec![
            Block::Bullets(m.divergences.iter().map(item).collect()),
            replay,
        ]
    };
    let each = m
        .divergences
        .iter()
        .map(|d| divergence_section(d, fold_note(m, d)));
    [section("divergences", "Divergences", list)]
        .into_iter()
        .chain(each)
        .collect()
}

/// `; probably caused by #1` for a folded divergence, `; 10 more probably caused by this one
/// (#2–#11)` for a root with folded ones (triage's folding, issue 32), else nothing.
fn fold_note(m: &ReportModel, d: &DivergenceRecord) -> String {
    if let Some(root) = d.caused_by {
        return format!("; probably caused by #{root}");
    }
    let folded = m
        .divergences
        .iter()
        .filter(|f| f.caused_by == Some(d.number));
    let folded: Vec<String> = folded.map(|f| format!("#{}", f.number)).collect();
    match folded.len() {
        0 => String::new(),
        n => format!(
            "; {n} more probably caused by this one ({})",
            folded.join(", ")
        ),
    }
}

/// Divergence `d`'s section, `note` ([`fold_note`]) ending its title.
fn divergence_section(d: &DivergenceRecord, note: String) -> Section {
    let minimized = d.minimized_bytes().unwrap_or_default();
    let shards = if d.shards.is_empty() {
        String::new()
    } else {
        format!(" (shards {})", d.shards.join(", "))
    };
    let input = d.input_bytes().unwrap_or_default();
    let mut facts = vec![
        vec![text("predicate / field: "), code(&d.signature.key)],
        t(format!(
            "occurrences: {}{shards}; first: {}",
            d.count, d.origin
        )),
        input_fact("input", &d.target, &input, &d.input),
        input_fact("minimised", &d.target, &minimized, &d.minimized),
    ];
    if let crate::report::model::OriginRecord::Vector { expected, .. } = &d.origin {
        facts.push(vec![text("expected by the vector file: "), code(expected)]);
    }
    facts.push(vec![text("replay: "), code(&d.replay)]);
    facts.push(vec![
        text("replay (file, from this report folder): "),
        code(&d.replay_file),
    ]);
    // Each side's answer, and what it is about: the field and its value (issue 32).
    for side in [Side::Left, Side::Right] {
        let (name, answer, _) = d.side(side);
        let mut fact = vec![text(format!("{name}: ")), code(answer)];
        if let Some(detail) = side_detail(d, side) {
            fact.push(text(format!(" — {detail}")));
        }
        facts.push(fact);
    }
    if !d.cohorts.is_empty() {
        facts.push(vec![
            text("cohorts (who gave which answer): "),
            code(crate::judge::cohort::Line(&d.cohorts).to_string()),
        ]);
    }
    let mut blocks = vec![Block::Bullets(facts)];
    // A subject's crash or hang is kept as it faulted (triage: not re-run).
    let input = if crate::triage::is_fault_class(d.class) {
        "input (as it faulted: a crash or hang is not minimised)"
    } else {
        "minimised input"
    };
    if is_bundle_target(&d.target) && minimized.len() <= 64 {
        blocks.push(para(format!(
            "Bytes each side blames (byte map of the {input}):"
        )));
        let side = |s| (d.side(s).0.to_string(), blamed_bytes(d, s));
        let mut sides = vec![side(Side::Left), side(Side::Right)];
        // Beside the rule's blame, what the subject's own answers say (issue 32).
        if let Some(asked) = &d.subject_blame {
            let name = format!(
                "{} asked (single-byte changes that flip its answer)",
                d.left_name
            );
            sides.push((name, std::array::from_fn(|i| asked.contains(&(i as u64)))));
        }
        let bytes = bundle_from_input(&minimized);
        blocks.push(Block::ByteMap { bytes, sides });
    }
    let mut capital = input.to_string();
    capital[..1].make_ascii_uppercase();
    blocks.push(para(format!("{capital}, annotated (core's reading):")));
    blocks.push(annotated(&d.target, &minimized, d.arch()));
    let (left, right) = (&d.left_name, &d.right_name);
    blocks.push(para(format!(
        "Field-level diff ({left} → {right}) on the {input}:"
    )));
    // The names shown (E5) in this multi-line text, so a newline in one cannot split its line.
    let (l, r) = (shown(&d.left_name), shown(&d.right_name));
    let w = l.len().max(r.len()) + 1;
    blocks.push(Block::Dumps(Dumps {
        left_name: d.left_name.clone(),
        right_name: d.right_name.clone(),
        left: d.left_dump.clone(),
        right: d.right_dump.clone(),
        when_equal: format!(
            "(dumps equal)\n{:w$} {}\n{:w$} {}",
            format!("{l}:"),
            d.left,
            format!("{r}:"),
            d.right
        ),
    }));
    Section {
        id: format!("d{}", d.number),
        level: 3,
        title: vec![
            text(format!("{}. ", d.number)),
            code(&d.target),
            text(format!(" — {}", d.headline(None))),
            text(note),
        ],
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_program_is_shown_with_the_stream_it_builds() {
        let input = [0u8, 0];
        let stream = crate::judge::stream_from_input(&input);
        assert!(!stream.is_empty());
        let text = |b: Block| match b {
            Block::Annotated { text, failed_lines } if failed_lines.is_empty() => text,
            b => panic!("{b:?}"),
        };
        let a = text(annotated("custom_op_group", &input, Generation::V2));
        assert!(a.contains("the stream it builds"), "{a}");
        for b in stream.chunks(64) {
            assert!(a.contains(&crate::subjects::hex(b)), "{a}");
        }
        // A LUT input is its bytes and the ordinal they make, no stream.
        let lut = text(annotated("alu_lut", &[0x13], Generation::V2));
        assert!(!lut.contains("stream"), "{lut}");
        assert!(
            lut.contains("ordinal 19 (0x13) through table alu_op"),
            "{lut}"
        );
    }
}
