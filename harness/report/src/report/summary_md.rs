//! `summary.md`: the report document ([`super::document`]) as Markdown. Every text in it is
//! [`shown`] (E5): a name from the user (a subject spec, a folder, a file) neither splits a line
//! or table row nor sends a terminal escape when CI prints the file; the only control
//! characters are the file's own line breaks.

use super::document::{document, Block, Line, Span};
use super::format::shown;
use super::model::ReportModel;
use std::fmt::Write as _;

/// A line of inline text; `in_table` escapes `|` in text and code.
fn line(l: &Line, in_table: bool) -> String {
    let span = |sp: &Span| {
        let s = shown(sp.text());
        let s = if in_table {
            s.replace('|', "\\|")
        } else {
            s.into()
        };
        match sp {
            Span::Code(_) => format!("`{s}`"),
            Span::Verdict(_) => format!("**{s}**"),
            _ => s,
        }
    };
    l.iter().map(span).collect()
}

/// `body` in a fence, each of its lines [`shown`].
fn fence(s: &mut String, lang: &str, body: &str) {
    let lines: Vec<_> = body.trim_end().split('\n').map(shown).collect();
    let _ = writeln!(
        s,
        "```{lang}\n{}\n```\n",
        lines.join("\n").replace("```", "'''")
    );
}

fn block(s: &mut String, b: &Block) {
    match b {
        Block::Para(l) => {
            let _ = writeln!(s, "{}\n", line(l, false));
        }
        Block::Bullets(items) => {
            for l in items {
                let _ = writeln!(s, "- {}", line(l, false));
            }
            s.push('\n');
        }
        Block::Table {
            head,
            numeric,
            rows,
        } => {
            let head: Vec<_> = head.iter().map(|h| shown(h)).collect();
            let _ = writeln!(s, "| {} |", head.join(" | "));
            let align: String = numeric
                .iter()
                .map(|r| if *r { "---:|" } else { "---|" })
                .collect();
            let _ = writeln!(s, "|{align}");
            for r in rows {
                let cells: Vec<String> = r.iter().map(|c| line(c, true)).collect();
                let _ = writeln!(s, "| {} |", cells.join(" | "));
            }
            s.push('\n');
        }
        Block::Pre(text) => fence(s, "text", text),
        Block::Annotated { text, .. } => fence(s, "", text),
        Block::Dumps(d) => {
            let diff = similar::TextDiff::from_lines(&d.left, &d.right)
                .unified_diff()
                .context_radius(64)
                .header(&shown(&d.left_name), &shown(&d.right_name))
                .to_string();
            let body = if diff.trim().is_empty() {
                d.when_equal.clone()
            } else {
                diff
            };
            fence(s, "diff", &body);
        }
        Block::ByteMap { sides, .. } => {
            for (name, blamed) in sides {
                let offs: Vec<String> = (0..64)
                    .filter(|&i| blamed[i])
                    .map(|i| format!("0x{i:02x}"))
                    .collect();
                let list = if offs.is_empty() {
                    "none".to_string()
                } else {
                    offs.join(", ")
                };
                let _ = writeln!(s, "- {} blames: {list}", shown(name));
            }
            s.push('\n');
        }
    }
}

pub fn render(m: &ReportModel) -> String {
    let doc = document(m);
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", shown(&doc.title));
    for l in &doc.head {
        let _ = writeln!(s, "- {}", line(l, false));
    }
    for sec in &doc.sections {
        let hashes = "#".repeat(usize::from(sec.level));
        if !s.ends_with("\n\n") {
            s.push('\n');
        }
        let _ = writeln!(s, "{hashes} {}\n", line(&sec.title, false));
        for b in &sec.blocks {
            block(&mut s, b);
        }
    }
    s
}
