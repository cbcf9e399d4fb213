//! The report as a document, stated once from a [`ReportModel`](super::ReportModel):
//! `summary.md` and `index.html` are two formatters of the same [`Document`].

mod blocks;
mod divergences;
mod sections;

pub use blocks::{rate, Block, Document, Dumps, Line, Section, Span};
pub use sections::document;
