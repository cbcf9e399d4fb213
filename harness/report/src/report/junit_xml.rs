//! `junit.xml`: one testcase per target, one for the value-class reach (when
//! the run sampled it) and one for the vector files, plus one per other name
//! a divergence or failure is filed under (a merged report's shards).

use super::format::{find_or_push, xml_escape, TIMING_MARKER};
use super::model::ReportModel;
use super::model::{REACH_CASE, VECTORS_CASE};
use std::fmt::Write as _;

/// One testcase: name, divergence lines (one `<failure>`), other failures
/// (one `<error>` each, `(type, message)`: `gate` for a failure, `incomplete` for a target cut
/// short), notes (`<system-out>`: the subjects it is not supported by, neither a pass nor a
/// failure of theirs).
type Case = (
    String,
    Vec<String>,
    Vec<(&'static str, String)>,
    Vec<String>,
);

fn case_at<'a>(cases: &'a mut Vec<Case>, name: &str) -> &'a mut Case {
    find_or_push(
        cases,
        |c| c.0 == name,
        || (name.to_string(), vec![], vec![], vec![]),
    )
}

pub fn render(m: &ReportModel) -> String {
    let meta = &m.meta;
    let mut cases: Vec<Case> = Vec::new();
    for t in &meta.targets {
        case_at(&mut cases, &t.name);
    }
    if !meta.reach.is_empty() {
        case_at(&mut cases, REACH_CASE);
    }
    case_at(&mut cases, VECTORS_CASE);
    for s in &m.shards {
        case_at(&mut cases, &format!("shard {}", s.shard));
    }
    for d in &m.divergences {
        let (n, headline) = (d.number, d.headline(Some(d.count)));
        let line = format!("#{n} {headline}\nreplay: {}", d.replay);
        case_at(&mut cases, &d.target).1.push(line);
    }
    for u in &meta.unsupported {
        let c = case_at(&mut cases, &u.target);
        c.3.extend(u.subjects.iter().map(|s| format!("not supported by {s}")));
    }
    for (f, t) in meta.failures.iter().zip(&meta.failure_targets) {
        case_at(&mut cases, t).2.push(("gate", f.clone()));
    }
    // A cut-short run is not a green one: every target that did not run all
    // its planned cases gets an `incomplete` error.
    for t in meta
        .targets
        .iter()
        .filter(|t| !meta.complete && t.ran < t.planned)
    {
        let (ran, planned) = (t.ran, t.planned);
        let e =
            format!("incomplete: ran {ran} of {planned} planned generated cases (run cut short)");
        case_at(&mut cases, &t.name).2.push(("incomplete", e));
    }
    let mut properties = vec![
        ("verdict".to_string(), meta.verdict.clone()),
        ("seed".to_string(), meta.seed.clone()),
        if m.is_merged() {
            ("merged_shards".to_string(), m.shards.len().to_string())
        } else {
            ("shard".to_string(), meta.shard.to_string())
        },
    ];
    if let Some(l) = &m.live {
        let elapsed = format!("{:.3}", l.run.elapsed.as_secs_f64());
        properties.push((format!("{TIMING_MARKER} elapsed_seconds"), elapsed));
    }
    let failures = cases.iter().filter(|c| !c.1.is_empty()).count();
    let errors = cases
        .iter()
        .filter(|c| c.1.is_empty() && !c.2.is_empty())
        .count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\"",
        cases.len()
    );
    let _ = writeln!(s, "<testsuites name=\"tpbconform gate\" {counts}>");
    let _ = writeln!(s, "  <testsuite name=\"tpbconform.gate\" {counts}>");
    let _ = writeln!(s, "    <properties>");
    for (name, value) in &properties {
        let (name, value) = (xml_escape(name), xml_escape(value));
        let _ = writeln!(s, "      <property name=\"{name}\" value=\"{value}\"/>");
    }
    let _ = writeln!(s, "    </properties>");
    for (name, divergences, errors, notes) in &cases {
        let name = xml_escape(name);
        let _ = writeln!(
            s,
            "    <testcase classname=\"tpbconform.gate\" name=\"{name}\">"
        );
        if !divergences.is_empty() {
            let _ = writeln!(
                s,
                "      <failure type=\"divergence\" message=\"{} distinct divergence(s)\">{}</failure>",
                divergences.len(),
                xml_escape(&divergences.join("\n"))
            );
        }
        for (kind, e) in errors {
            let e = xml_escape(e);
            let _ = writeln!(s, "      <error type=\"{kind}\" message=\"{e}\"/>");
        }
        if !notes.is_empty() {
            let notes = xml_escape(&notes.join("\n"));
            let _ = writeln!(s, "      <system-out>{notes}</system-out>");
        }
        let _ = writeln!(s, "    </testcase>");
    }
    let _ = writeln!(s, "  </testsuite>\n</testsuites>");
    s
}
