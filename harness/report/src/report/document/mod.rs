//! The report as a document: its sections, tables and lists, stated once
//! from a [`ReportModel`](super::ReportModel). `summary.md` ([`super::summary_md`]) and
//! `index.html` ([`super::index_html`]) are two formatters of the same
//! [`Document`], so both hold every section and every table and neither
//! writes one of its own.

mod blocks;
mod divergences;
mod sections;

pub use blocks::{rate, Block, Document, Dumps, Line, Section, Span};
pub use sections::document;
