//! Reports: `summary.md`, `divergences.jsonl`, `junit.xml`, `index.html`,
//! `run.json` and one raw file per divergence (`divergences/NNN-<target>.bin`).
//!
//! - [`folder`]: the report folder, claimed before the run and filled
//!   atomically (staging folder, one rename).
//! - [`model`]: the one [`ReportModel`] every renderer reads, built from a
//!   gate run ([`ReportModel::of_gate`]) or from verified shard folders
//!   ([`merge`]); [`DivergenceRecord`] is a `divergences.jsonl` line (serde).
//! - [`document`]: the sections and tables, stated once; [`summary_md`] and
//!   [`index_html`] format them, [`junit_xml`] and [`run_json`] render the
//!   machine-readable views, [`divergences_jsonl`] the records.
//! - [`integrity`]: the digests `run.json` records over the other files.
//! - [`byte_map`]: which bytes each side of a divergence blames.
//!
//! # Contracts
//!
//! - **Determinism.** [`files`] is a pure function of the model. Every line
//!   whose content depends on the clock (timestamp, durations, throughput,
//!   thread count) contains the marker [`TIMING_MARKER`] and nothing else
//!   that matters, so stripping the lines that contain it leaves
//!   byte-identical reports for the same seed (`run.json`'s `integrity`
//!   excepted: it digests those lines).
//! - **One renderer per file**, the same for a gate run and a merged one.

pub mod byte_map;
pub mod divergences_jsonl;
pub mod document;
pub mod folder;
pub mod index_html;
pub mod integrity;
pub mod junit_xml;
pub mod merge;
pub mod model;
pub mod run_json;
pub mod summary_md;

pub use folder::{
    abort_staging, claim_dir, cleanup_stale, release_claim, utc_now, utc_stamp, write_dir,
    ClaimGuard, ReportDirError,
};
pub use model::{verdict, DivergenceRecord, ReportModel};

use crate::gate::GateRun;
use crate::triage::Triaged;

/// Marker of clock-dependent lines.
pub const TIMING_MARKER: &str = "[timing]";

/// The `junit.xml` testcase of the value-class reach: an error per
/// [`crate::gate::GateFailure::Unreached`] (the unhit classes).
pub const REACH_CASE: &str = "reach";

/// The `junit.xml` testcase (and record target) of the vector files.
pub const VECTORS_CASE: &str = "vectors";

/// Clock-dependent facts of a run.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    /// UTC timestamp `YYYY-MM-DDTHH:MM:SSZ`.
    pub timestamp: String,
}

/// XML-escapes text and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => o.push_str("&#xFFFD;"),
            c => o.push(c),
        }
    }
    o
}

/// Unified diff of two dumps (`left_name` → `right_name`).
pub fn unified(left: &str, right: &str, left_name: &str, right_name: &str) -> String {
    similar::TextDiff::from_lines(left, right)
        .unified_diff()
        .context_radius(64)
        .header(left_name, right_name)
        .to_string()
}

/// Every file of the report of `m`, as `(relative path, bytes)`; `run.json`
/// (last) carries the integrity record of the others.
pub fn files(m: &ReportModel) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![
        ("summary.md".to_string(), summary_md::render(m).into_bytes()),
        (
            divergences_jsonl::FILE.to_string(),
            divergences_jsonl::render(&m.divergences).into_bytes(),
        ),
        ("junit.xml".to_string(), junit_xml::render(m).into_bytes()),
        ("index.html".to_string(), index_html::render(m).into_bytes()),
    ];
    for d in &m.divergences {
        out.push((d.file.clone(), d.minimized_bytes().unwrap_or_default()));
    }
    let facts = run_json::render(m);
    let mut meta = m.meta.clone();
    meta.integrity = Some(integrity::seal(&facts, &out));
    out.push((run_json::FILE.to_string(), meta.to_json().into_bytes()));
    out
}

/// Every file of the report of a gate run ([`files`] of
/// [`ReportModel::of_gate`]).
pub fn render(run: &GateRun, triaged: &[Triaged], timing: &Timing) -> Vec<(String, Vec<u8>)> {
    files(&ReportModel::of_gate(run, triaged, timing))
}

/// `summary.md` of a gate run.
pub fn summary_md(run: &GateRun, triaged: &[Triaged], timing: &Timing) -> String {
    summary_md::render(&ReportModel::of_gate(run, triaged, timing))
}
