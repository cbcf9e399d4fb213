//! The lane picture of one subgraph's engines (SPEC §11): one SVG, a lane per engine (and one
//! for the DMA increments), a mark per instruction, a grey arrow from each wait to the update
//! that satisfied it, a deadlock's cycle in red; below it every finding in words. A pure
//! function of the program and one reading of it ([`EngineSyncOutcome`]).

use super::format::xml_escape;
use crate::subjects::{
    last_update, stop_mode, End, EngineFinding, EngineProgram, EngineSyncOutcome, SyncSite,
};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Most instructions drawn per lane.
pub const MAX_MARKS: usize = 2000;

const LEFT: f64 = 150.0;
const LANE: f64 = 64.0;
const TOP: f64 = 40.0;
const MARK: f64 = 14.0;

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:16px;color:#222}
svg{max-width:100%;height:auto;border:1px solid #ddd;background:#fcfcfc}
.lane-label{font:13px monospace;fill:#333}.lane-line{stroke:#ddd}
.mark{fill:#fff;stroke:#888;stroke-width:1}.mark.wait{fill:#cfe3ff}.mark.update{fill:#d4f5d4}
.mark.both{fill:#f1e4ff}.mark.blocked{stroke:#e00;stroke-width:3}
.mark.unsatisfiable{fill:#ffa64d}.mark.stopped{fill:#bbb}.mark.dma{fill:#fff3b0}
.link{fill:none;stroke:#999;stroke-width:1.2;marker-end:url(#arrow)}
.cycle{fill:none;stroke:#e00;stroke-width:3;marker-end:url(#arrow-red)}
.cycle-label{font:12px monospace;fill:#e00}.idx{font:9px monospace;fill:#666}
ol.findings li{font-family:monospace;margin:2px 0;overflow-wrap:anywhere}.deadlock{color:#e00}
.legend span{display:inline-block;margin-right:14px}
.sw{display:inline-block;width:12px;height:12px;border:1px solid #888;vertical-align:middle;margin-right:4px}";

fn engine_name(names: &[String], e: usize) -> String {
    names
        .get(e)
        .cloned()
        .unwrap_or_else(|| format!("engine {e}"))
}

fn site_text(s: &SyncSite, names: &[String]) -> String {
    match *s {
        SyncSite::Instr { engine, index } => {
            format!("{} #{index}", engine_name(names, usize::from(engine)))
        }
        SyncSite::Dma { index } => format!("dma {index}"),
    }
}

/// One finding in words, both sides named (`names[e]`: engine `e`'s label).
pub fn finding_text(f: &EngineFinding, names: &[String]) -> String {
    use EngineFinding as F;
    let at = |s: SyncSite| site_text(&s, names);
    let a = f.at().map(at).unwrap_or_default();
    let last = last_update(f).map_or(String::new(), |s| format!(", last update {}", at(s)));
    match f {
        F::Deadlock { cycle } => {
            let mut s = String::from("deadlock:");
            for e in cycle {
                let _ = write!(
                    s,
                    " {} waits {} (mode {:#04x}, threshold {}, value {}) on {};",
                    at(e.waiter),
                    e.resource,
                    e.mode,
                    e.threshold,
                    e.value,
                    at(e.helper),
                );
            }
            s
        }
        F::UnsatisfiableWait {
            resource: res,
            mode,
            threshold,
            value,
            ..
        } => format!(
            "unsatisfiable_wait: {a} waits {res} (mode {mode:#04x}, threshold {threshold}), value {value} and no remaining update reaches it{last}"
        ),
        F::UnsetEvent { event, mode, .. } => format!(
            "unset_event: {a} waits for E[{event}] (mode {mode:#04x}), which no other engine sets{last}"
        ),
        F::SemaphoreUnderflow {
            sem, value, delta, ..
        }
        | F::SemaphoreOverflow {
            sem, value, delta, ..
        } => format!("{}: {a} takes S[{sem}] from {value} by {delta}{last}", f.kind()),
        F::UnconsumedUpdate { resource: res, .. } => {
            format!("unconsumed_update (warning): {a} updates {res}, which no wait reads")
        }
        F::AnalysisStopped { reason, .. } => format!(
            "analysis_stopped: {a} ({}, mode byte {:#04x}): the model does not follow this engine further",
            reason.name(),
            stop_mode(reason)
        ),
        other => format!("{}: {other:?}", other.kind()),
    }
}

/// One subgraph's section: `title`, the program `p`, its reading `o`, engine labels `names`.
pub fn section(title: &str, p: &EngineProgram, o: &EngineSyncOutcome, names: &[String]) -> String {
    let lanes = p.engines.len();
    let dma_lane = usize::from(!p.dma.is_empty());
    let longest = p
        .engines
        .iter()
        .map(|e| e.len().min(MAX_MARKS))
        .max()
        .unwrap_or(0)
        .max(1);
    let dx = (1100.0 / longest as f64).clamp(4.0, 60.0);
    let width = LEFT + dx * longest as f64 + 60.0;
    let height = TOP + LANE * (lanes + dma_lane) as f64 + 20.0;
    // A small picture is drawn larger (up to 900 px wide); the page scales it down to fit.
    let scale = (900.0 / width).clamp(1.0, 2.0);
    // Mark centres by site.
    let lane_y = |lane: usize| TOP + LANE * (lane + dma_lane) as f64;
    let x_of = |i: u32| LEFT + dx * f64::from(i) + dx / 2.0;
    let mut at: BTreeMap<SyncSite, (f64, f64)> = BTreeMap::new();
    for (e, steps) in p.engines.iter().enumerate() {
        for i in 0..steps.len().min(MAX_MARKS) as u32 {
            at.insert(instr(e, i), (x_of(i), lane_y(e)));
        }
    }
    for (k, d) in p.dma.iter().enumerate() {
        let x = d.trigger.map_or(LEFT - dx, |(_, i)| x_of(i)) + (k as f64) * 3.0;
        at.insert(SyncSite::Dma { index: k as u32 }, (x, TOP));
    }
    // Classes of the marks from the findings and the ends.
    let mut class: BTreeMap<SyncSite, &str> = BTreeMap::new();
    for (e, end) in o.ends.iter().enumerate() {
        match *end {
            End::Blocked { index } => class.insert(instr(e, index), "blocked"),
            End::Stopped { index } => class.insert(instr(e, index), "stopped"),
            _ => None,
        };
    }
    for f in &o.findings {
        if matches!(
            f,
            EngineFinding::UnsatisfiableWait { .. } | EngineFinding::UnsetEvent { .. }
        ) {
            if let Some(s) = f.at() {
                class.insert(s, "blocked unsatisfiable");
            }
        }
    }
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" role=\"img\">\
<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L10 5L0 10z\" fill=\"#999\"/></marker>\
<marker id=\"arrow-red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\"><path d=\"M0 0L10 5L0 10z\" fill=\"#e00\"/></marker></defs>",
        width * scale,
        height * scale
    );
    // A lane: its label and its line across the picture.
    let lane = |svg: &mut String, label: &str, y: f64| {
        let _ = write!(
            svg,
            "<text class=\"lane-label\" x=\"8\" y=\"{:.0}\">{label}</text><line class=\"lane-line\" x1=\"{LEFT}\" x2=\"{width:.0}\" y1=\"{y:.0}\" y2=\"{y:.0}\"/>",
            y + 4.0
        );
    };
    if dma_lane == 1 {
        lane(&mut svg, "DMA", TOP);
    }
    for (e, steps) in p.engines.iter().enumerate() {
        let y = lane_y(e);
        lane(&mut svg, &xml_escape(&engine_name(names, e)), y);
        if steps.len() > MAX_MARKS {
            let _ = write!(
                svg,
                "<text class=\"idx\" x=\"{:.0}\" y=\"{:.0}\">… {} more</text>",
                width - 58.0,
                y - 10.0,
                steps.len() - MAX_MARKS
            );
        }
    }
    // Arrows first (under the marks): each wait from the update that satisfied it, then each
    // deadlock's cycle from each helper's update to the wait it would satisfy.
    let links = o
        .links
        .iter()
        .filter_map(|l| Some(("link", l.by?, l.wait, None)));
    let cycles = o.findings.iter().flat_map(|f| match f {
        EngineFinding::Deadlock { cycle } => cycle.as_slice(),
        _ => &[],
    });
    let cycles = cycles.map(|e| ("cycle", e.helper, e.waiter, Some(e)));
    for (class, from, to, edge) in links.chain(cycles) {
        let (Some(&(x0, y0)), Some(&(x1, y1))) = (at.get(&from), at.get(&to)) else {
            continue;
        };
        let (from, to) = (site_text(&from, &[]), site_text(&to, &[]));
        let (from, to, d) = (xml_escape(&from), xml_escape(&to), curve(x0, y0, x1, y1));
        let _ = write!(
            svg,
            "<path class=\"{class}\" data-from=\"{from}\" data-to=\"{to}\" d=\"{d}\"/>"
        );
        if let Some(e) = edge {
            let _ = write!(
                svg,
                "<text class=\"cycle-label\" x=\"{:.0}\" y=\"{:.0}\">{} ≥ {}</text>",
                e.resource,
                e.threshold,
                x1 + 10.0,
                y1 + if y0 > y1 { 22.0 } else { -14.0 },
            );
        }
    }
    for (s, &(x, y)) in &at {
        let kind = match s {
            SyncSite::Dma { .. } => "dma",
            SyncSite::Instr { engine, index } => {
                let b = p.engines[usize::from(*engine)][*index as usize];
                match (b[0] != 0, b[2] != 0) {
                    (true, true) => "both",
                    (true, false) => "wait",
                    (false, true) => "update",
                    (false, false) => "plain",
                }
            }
        };
        let extra = class.get(s).copied().unwrap_or("");
        let h = MARK.min(dx - 1.0).max(3.0);
        let _ = write!(
            svg,
            "<rect class=\"mark {kind} {extra}\" data-site=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{h:.1}\" height=\"{MARK}\"><title>{}</title></rect>",
            xml_escape(&site_text(s, &[])),
            x - h / 2.0,
            y - MARK / 2.0,
            xml_escape(&mark_title(s, p))
        );
        if dx >= 18.0 {
            if let SyncSite::Instr { index, .. } = s {
                let _ = write!(
                    svg,
                    "<text class=\"idx\" x=\"{:.0}\" y=\"{:.0}\">{index}</text>",
                    x - 3.0,
                    y + MARK + 4.0
                );
            }
        }
    }
    svg.push_str("</svg>");
    let mut sec = String::new();
    let _ = write!(
        sec,
        "<section class=\"subgraph\"><h2>{t}</h2>{svg}<h3>Findings ({n})</h3><ol class=\"findings\">",
        t = xml_escape(title),
        n = o.findings.len()
    );
    for f in &o.findings {
        let _ = write!(
            sec,
            "<li class=\"{}\">{}</li>",
            f.kind(),
            xml_escape(&finding_text(f, names))
        );
    }
    sec.push_str("</ol></section>");
    sec
}

/// The page around sections made by [`section`] (none: a page that says `none_text`).
pub fn page(title: &str, sections: &[String], none_text: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style></head><body>\
<h1>{t}</h1><p class=\"legend\"><span><i class=\"sw\" style=\"background:#cfe3ff\"></i>wait</span>\
<span><i class=\"sw\" style=\"background:#d4f5d4\"></i>update</span><span><i class=\"sw\" style=\"background:#f1e4ff\"></i>wait and update</span>\
<span><i class=\"sw\" style=\"background:#fff3b0\"></i>DMA increment</span><span><i class=\"sw\" style=\"border:3px solid #e00\"></i>blocked</span>\
<span><i class=\"sw\" style=\"background:#ffa64d\"></i>nothing can satisfy it</span><span style=\"color:#e00\">━ deadlock cycle</span>\
<span style=\"color:#999\">━ satisfied by</span></p>",
        t = xml_escape(title)
    );
    for s in sections {
        page.push_str(s);
    }
    if sections.is_empty() {
        let _ = write!(page, "<p>{}</p>", xml_escape(none_text));
    }
    page.push_str("<p>SPEC §11: every finding is advisory (one reading of the events band; with EQ/LT/LE waits, decrements or writes, the findings of one schedule, DE-3).</p></body></html>\n");
    page
}

fn mark_title(s: &SyncSite, p: &EngineProgram) -> String {
    match *s {
        SyncSite::Instr { engine, index } => {
            let b = p.engines[usize::from(engine)][index as usize];
            let v = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            format!(
                "engine {engine} #{index}: wait {:#04x} idx {}, update {:#04x} idx {}, value {v}",
                b[0], b[1], b[2], b[3]
            )
        }
        SyncSite::Dma { index } => {
            let d = p.dma[index as usize];
            format!("dma {index}: S[{}] += {}", d.sem, d.by)
        }
    }
}

fn instr(engine: usize, index: u32) -> SyncSite {
    let engine = engine as u16;
    SyncSite::Instr { engine, index }
}

/// A curve from one mark to another (an arc above when both are on one lane).
fn curve(x0: f64, y0: f64, x1: f64, y1: f64) -> String {
    if (y0 - y1).abs() < 1.0 {
        let lift = 18.0 + (x1 - x0).abs() * 0.15;
        format!(
            "M{x0:.1} {:.1}C{x0:.1} {:.1} {x1:.1} {:.1} {x1:.1} {:.1}",
            y0 - 7.0,
            y0 - lift,
            y1 - lift,
            y1 - 7.0
        )
    } else {
        let dir = if y1 > y0 { 1.0 } else { -1.0 };
        let (ya, yb) = (y0 + dir * 7.0, y1 - dir * 7.0);
        let my = (ya + yb) / 2.0;
        format!("M{x0:.1} {ya:.1}C{x0:.1} {my:.1} {x1:.1} {my:.1} {x1:.1} {yb:.1}")
    }
}
