//! `index.html`: the report document as one self-contained page (inline CSS, no script) with a
//! table of contents. It never scrolls sideways: text and `pre` wrap, and a table too wide
//! scrolls inside its own box (`div.tw`) rather than break a name mid-word (issue 32 item 5).

use super::document::{document, Block, Line, Section, Span};
use super::format::{xml_escape, TIMING_MARKER};
use super::model::ReportModel;
use std::fmt::Write as _;

const STYLE: &str = "\
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:84em;padding:0 1.5em;\
line-height:1.4;color:#222}
h1,h2,h3{overflow-wrap:anywhere}
pre,code,td.num,.bm td{font-family:ui-monospace,monospace;font-size:0.88em}
code{overflow-wrap:anywhere;background:#f4f4f4;padding:0 2px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f8f8f8;padding:0.5em;\
border:1px solid #e3e3e3}
.tw{overflow-x:auto;max-width:100%;margin:0.4em 0}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;overflow-wrap:normal;\
word-break:normal;text-align:left}
td code,th code,td.name,td.num{overflow-wrap:normal;word-break:normal;white-space:nowrap}
th{background:#f0f0f0}
td.num,th.num{text-align:right}
.PASS,.ok{color:#070}.FAIL{color:#b00;font-weight:bold}.INCOMPLETE{color:#a60}
.hot{background:#fdd;display:inline-block;width:100%}
.sbs td{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:0.85em}
.sbs tr.chg td{background:#ffe9b3}
.timing{color:#777}
nav#toc{border:1px solid #ddd;background:#fafafa;padding:0.3em 1em}
nav#toc ul{margin:0.2em 0;padding-left:1.2em}
nav#toc li.l3{font-size:0.92em}
.bytemaps{display:flex;flex-wrap:wrap;gap:1.2em}
.bytemap{flex:1 1 30em;min-width:0}
.bm{table-layout:fixed;width:100%}
.bm td,.bm th{padding:1px 2px;text-align:center;font-size:0.8em}
.bm th{font-weight:normal;color:#666}
.bm td.blamed{background:#e33;color:#fff;font-weight:bold}
.legend .blamed{background:#e33;color:#fff;padding:0 4px}
";

/// Table cells up to this many characters are kept on one line.
const NOWRAP_CHARS: usize = 60;

fn spans(l: &Line) -> String {
    let span = |sp: &Span| {
        let s = xml_escape(sp.text());
        match sp {
            Span::Text(_) => s,
            Span::Code(_) => format!("<code>{s}</code>"),
            Span::Verdict(_) => format!("<strong class=\"{s}\">{s}</strong>"),
            Span::Status(_) => format!("<span class=\"{s}\">{s}</span>"),
        }
    };
    l.iter().map(span).collect()
}

fn plain(l: &Line) -> String {
    l.iter().map(Span::text).collect()
}

/// `<tag>` of a line; lines with clock-dependent content keep the marker and are greyed.
fn tagged(s: &mut String, tag: &str, l: &Line) {
    let cls = if plain(l).contains(TIMING_MARKER) {
        " class=\"timing\""
    } else {
        ""
    };
    let _ = writeln!(s, "<{tag}{cls}>{}</{tag}>", spans(l));
}

fn side_by_side(s: &mut String, left: &str, right: &str, names: (&str, &str)) {
    let diff = similar::TextDiff::from_lines(left, right);
    let l: Vec<&str> = left.lines().collect();
    let r: Vec<&str> = right.lines().collect();
    let _ = writeln!(
        s,
        "<div class=\"tw\"><table class=\"sbs\"><tr><th>{}</th><th>{}</th></tr>",
        xml_escape(names.0),
        xml_escape(names.1)
    );
    let mut row = |a: Option<&str>, b: Option<&str>, cls: &str| {
        let _ = writeln!(
            s,
            "<tr class=\"{cls}\"><td>{}</td><td>{}</td></tr>",
            xml_escape(a.unwrap_or("")),
            xml_escape(b.unwrap_or(""))
        );
    };
    for op in diff.ops() {
        // An equal run pairs its lines one to one; a change pads the shorter side.
        let (tag, or, nr) = op.as_tag_tuple();
        let cls = if tag == similar::DiffTag::Equal {
            "eq"
        } else {
            "chg"
        };
        let a: Vec<Option<&str>> = or.map(|i| l.get(i).copied()).collect();
        let b: Vec<Option<&str>> = nr.map(|j| r.get(j).copied()).collect();
        for k in 0..a.len().max(b.len()) {
            row(
                a.get(k).copied().flatten(),
                b.get(k).copied().flatten(),
                cls,
            );
        }
    }
    s.push_str("</table></div>\n");
}

fn byte_map(s: &mut String, bytes: &[u8; 64], sides: &[(String, [bool; 64])]) {
    s.push_str("<div class=\"bytemaps\">\n");
    let columns: String = (0..16).map(|c| format!("<th>{c:X}</th>")).collect();
    for (name, blamed) in sides {
        let (name, count) = (xml_escape(name), blamed.iter().filter(|b| **b).count());
        let _ = writeln!(
            s,
            "<div class=\"bytemap\" data-side=\"{name}\"><p><strong>{name}</strong> blames \
             {count} byte(s)</p>\n<table class=\"bm\"><tr><th></th>{columns}</tr>"
        );
        // Four rows of 16 bytes, each headed by its first byte's offset.
        for (i, (byte, hot)) in bytes.iter().zip(blamed).enumerate() {
            if i % 16 == 0 {
                let _ = write!(s, "<tr><th>0x{i:02X}</th>");
            }
            let cls = if *hot { "byte blamed" } else { "byte" };
            let _ = write!(
                s,
                "<td class=\"{cls}\" title=\"byte 0x{i:02X}\">{byte:02x}</td>"
            );
            if i % 16 == 15 {
                s.push_str("</tr>\n");
            }
        }
        s.push_str("</table></div>\n");
    }
    s.push_str(
        "</div>\n<p class=\"legend\"><span class=\"blamed\">red</span>: the bytes that \
                side's verdict is about.</p>\n",
    );
}

fn pre(s: &mut String, text: &str) {
    let _ = writeln!(s, "<pre>{}</pre>", xml_escape(text));
}

fn block(s: &mut String, b: &Block) {
    match b {
        Block::Para(l) => tagged(s, "p", l),
        Block::Bullets(items) => {
            s.push_str("<ul>\n");
            for l in items {
                tagged(s, "li", l);
            }
            s.push_str("</ul>\n");
        }
        Block::Table {
            head,
            numeric,
            rows,
        } => {
            s.push_str("<div class=\"tw\"><table><tr>");
            for (h, num) in head.iter().zip(numeric) {
                let cls = if *num { " class=\"num\"" } else { "" };
                let _ = write!(s, "<th{cls}>{}</th>", xml_escape(h));
            }
            s.push_str("</tr>\n");
            for r in rows {
                s.push_str("<tr>");
                for (c, num) in r.iter().zip(numeric) {
                    // A short cell (a name: target, predicate, what a subject says it is)
                    // never wraps, so no hyphen or underscore splits it; a long one (a
                    // list) wraps at its spaces.
                    let short = plain(c).chars().count() <= NOWRAP_CHARS;
                    let cls = match (*num, short) {
                        (true, _) => " class=\"num\"",
                        (false, true) => " class=\"name\"",
                        (false, false) => "",
                    };
                    let _ = write!(s, "<td{cls}>{}</td>", spans(c));
                }
                s.push_str("</tr>\n");
            }
            s.push_str("</table></div>\n");
        }
        Block::Pre(text) => pre(s, text.trim_end()),
        Block::Annotated { text, failed_lines } => {
            s.push_str("<pre class=\"annotated\">");
            for (i, line) in text.trim_end().lines().enumerate() {
                let (open, close) = if failed_lines.contains(&i) {
                    ("<span class=\"hot\">", "</span>")
                } else {
                    ("", "")
                };
                let _ = writeln!(s, "{open}{}{close}", xml_escape(line));
            }
            s.push_str("</pre>\n");
        }
        Block::Dumps(d) if d.left == d.right => pre(s, &d.when_equal),
        Block::Dumps(d) => side_by_side(s, &d.left, &d.right, (&d.left_name, &d.right_name)),
        Block::ByteMap { bytes, sides } => byte_map(s, bytes, sides),
    }
}

/// The table of contents: one entry per section, its subsections nested.
fn toc(s: &mut String, sections: &[Section]) {
    s.push_str("<nav id=\"toc\"><h2>Contents</h2>\n<ul>\n");
    let sub = |i: usize| sections.get(i).is_some_and(|n| n.level > 2);
    for (i, sec) in sections.iter().enumerate() {
        let (id, title) = (xml_escape(&sec.id), xml_escape(&plain(&sec.title)));
        let link = format!("<a href=\"#{id}\">{title}</a>");
        // A run of subsections is one list, closed with the entry that holds it.
        let _ = match (sub(i), i > 0 && sub(i - 1)) {
            (false, _) => write!(s, "<li>{link}"),
            (true, false) => write!(s, "<ul>\n<li class=\"l3\">{link}</li>\n"),
            (true, true) => writeln!(s, "<li class=\"l3\">{link}</li>"),
        };
        s.push_str(match (sub(i), sub(i + 1)) {
            (true, false) => "</ul>\n</li>\n",
            (false, false) => "</li>\n",
            _ => "",
        });
    }
    s.push_str("</ul></nav>\n");
}

pub fn render(m: &ReportModel) -> String {
    let doc = document(m);
    let mut s = String::new();
    let title = xml_escape(&doc.title);
    let _ = writeln!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}</style></head><body>\n\
         <h1>{title}</h1>\n<ul class=\"head\">"
    );
    for l in &doc.head {
        tagged(&mut s, "li", l);
    }
    s.push_str("</ul>\n");
    toc(&mut s, &doc.sections);
    for sec in &doc.sections {
        let _ = writeln!(
            s,
            "<section id=\"{}\" class=\"l{}\"><h{lv}>{}</h{lv}>",
            xml_escape(&sec.id),
            sec.level,
            spans(&sec.title),
            lv = sec.level
        );
        for b in &sec.blocks {
            block(&mut s, b);
        }
        s.push_str("</section>\n");
    }
    s.push_str("</body></html>\n");
    s
}
