//! The pieces of a report document and the builders the section code writes them with.

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Span {
    Text(String),
    Code(String),
    /// Emphasised (`**bold**` / `<strong>`), coloured by the verdict it names.
    Verdict(String),
    /// A per-row status: FAIL (true) or ok (false).
    Status(bool),
}

impl Span {
    /// Its text (a status: `FAIL` or `ok`), as every format writes it before marking it up.
    pub fn text(&self) -> &str {
        match self {
            Span::Text(s) | Span::Code(s) | Span::Verdict(s) => s,
            Span::Status(bad) => ["ok", "FAIL"][usize::from(*bad)],
        }
    }
}

pub type Line = Vec<Span>;

pub(super) fn text(s: impl Into<String>) -> Span {
    Span::Text(s.into())
}

pub(super) fn code(s: impl Into<String>) -> Span {
    Span::Code(s.into())
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    Para(Line),
    Bullets(Vec<Line>),
    /// `numeric`: right-aligned columns.
    Table {
        head: Vec<String>,
        numeric: Vec<bool>,
        rows: Vec<Vec<Line>>,
    },
    /// Preformatted text (Markdown: a `text` fence).
    Pre(String),
    /// An annotated input ([`crate::explain`]) and its lines (0-based) marked `<== FAILED`.
    Annotated {
        text: String,
        failed_lines: Vec<usize>,
    },
    /// Markdown: a unified diff; HTML: side by side.
    Dumps(Dumps),
    /// Which bytes each side blames ([`crate::report::byte_map::blamed_bytes`]).
    ByteMap {
        bytes: [u8; 64],
        sides: Vec<(String, [bool; 64])>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dumps {
    pub left_name: String,
    pub right_name: String,
    pub left: String,
    pub right: String,
    pub when_equal: String,
}

/// A section (`level` 2) or subsection (`level` 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Unique in the document.
    pub id: String,
    pub level: u8,
    pub title: Line,
    pub blocks: Vec<Block>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    pub title: String,
    /// The bullet lines under the title.
    pub head: Vec<Line>,
    pub sections: Vec<Section>,
}

pub(super) fn section(id: &str, title: &str, blocks: Vec<Block>) -> Section {
    Section {
        id: id.to_string(),
        level: 2,
        title: vec![text(title)],
        blocks,
    }
}

/// A table of column heads `head` (`|`-separated), numeric from column `numeric_from` on.
pub(super) fn table(head: &str, numeric_from: usize, rows: Vec<Vec<Line>>) -> Block {
    let head: Vec<String> = head.split('|').map(str::to_string).collect();
    let numeric = (0..head.len()).map(|i| i >= numeric_from).collect();
    Block::Table {
        head,
        numeric,
        rows,
    }
}

pub(super) fn para(s: impl Into<String>) -> Block {
    Block::Para(t(s))
}

pub(super) fn n(x: u64) -> Line {
    vec![text(x.to_string())]
}

pub(super) fn t(s: impl Into<String>) -> Line {
    vec![text(s)]
}

pub(super) fn c(s: impl Into<String>) -> Line {
    vec![code(s)]
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
