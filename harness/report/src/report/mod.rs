//! Reports: `summary.md`, `divergences.jsonl`, `junit.xml`, `index.html`,
//! `run.json` and one raw file per divergence (`divergences/NNN-<target>.bin`).
//!
//! - [`folder`]: the report folder, claimed before the run and filled
//!   atomically (staging folder, one rename).
//! - [`model`]: the one [`ReportModel`] every renderer reads, built from a
//!   gate run ([`ReportModel::of_gate`]) or from verified shard folders
//!   ([`merge`]); [`model::DivergenceRecord`] is a `divergences.jsonl` line (serde).
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
//!   thread count) contains the marker [`format::TIMING_MARKER`] and nothing else
//!   that matters, so stripping the lines that contain it leaves
//!   byte-identical reports for the same seed (`run.json`'s `integrity`
//!   excepted: it digests those lines).
//! - **One renderer per file**, the same for a gate run and a merged one.

pub mod byte_map;
pub mod divergences_jsonl;
pub mod document;
pub mod folder;
pub mod format;
pub mod index_html;
pub mod integrity;
pub mod junit_xml;
pub mod lanes;
pub mod merge;
pub mod merge_error;
pub mod model;
pub mod run_json;
pub mod shard;
pub mod summary_md;

pub use folder::{abort_staging, claim_dir, utc_now, write_dir, ClaimGuard, ReportDirError};
pub use model::{verdict, ReportModel};

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
    let facts = run_json::render(&m.meta);
    let mut meta = m.meta.clone();
    meta.integrity = Some(integrity::seal(&facts, &out));
    out.push((run_json::FILE.to_string(), meta.to_json().into_bytes()));
    out
}
