//! Reports: one renderer per file of one [`ReportModel`] (`harness/ARCHITECTURE.md` "Reports").
//! [`files`] is a pure function of the model; every line that depends on the clock carries
//! [`format::TIMING_MARKER`], so without those lines two reports of one seed are byte-identical
//! (`run.json`'s `integrity` excepted).

/// Records a report file holds (`run.json`, `divergences.jsonl`): written and read with serde,
/// refused with a field they do not name.
macro_rules! wire {
    ($($(#[$a:meta])* pub struct $name:ident $body:tt)*) => {$(
        #[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        $(#[$a])*
        pub struct $name $body
    )*};
}

/// `return Err(error)` when `bad` holds; with a place and a message, [`shard::MergeError::at`].
macro_rules! refuse {
    ($bad:expr, $error:expr) => {
        if $bad {
            return Err($error);
        }
    };
    ($bad:expr, $at:expr, $($message:tt)+) => {
        refuse!(
            $bad,
            $crate::report::shard::MergeError::at($at, format_args!($($message)+))
        )
    };
}

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
