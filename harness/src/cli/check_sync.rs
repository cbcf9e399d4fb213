//! `check`'s look across the engines of one subgraph (SPEC §11): core's model run on the
//! engines' steps and the DMA increments (DE-12), its findings printed with both sides'
//! locations. Every finding is advisory; warnings do not make `check` exit 1.

use super::shown;
use crate::report::lanes;
use crate::subjects::{
    last_update, registry, resource, DmaRow, EngineFinding, EngineProgram, EngineSyncOutcome,
    SyncSite,
};
use serde_json::{json, Value};
use std::io::Write;
use tpb_core::engines::StepReader;
use tpb_neff::StreamRef;

/// A subgraph's reading: its program, core's outcome, and per engine its labels and offsets.
pub struct SubgraphSync {
    pub subgraph: String,
    pub engines: Vec<StreamRef>,
    pub offsets: Vec<Vec<u64>>,
    pub program: EngineProgram,
    pub outcome: Result<EngineSyncOutcome, String>,
}

pub fn analyze(
    subgraph: &str,
    engines: Vec<(StreamRef, StepReader)>,
    dma: Vec<DmaRow>,
) -> SubgraphSync {
    let mut program = EngineProgram::default();
    let mut offsets = Vec::new();
    let mut labels = Vec::new();
    for (origin, reader) in engines {
        let x = reader.finish();
        program
            .engines
            .push(x.steps.iter().map(|s| s.to_band()).collect());
        offsets.push(x.offsets);
        labels.push(origin);
    }
    program.dma = dma;
    let outcome = registry::core().engine_sync(&program);
    let outcome = outcome.map_err(|f| f.to_string());
    let outcome = outcome.and_then(|o| o.map_err(|n| n.to_string()));
    SubgraphSync {
        subgraph: subgraph.to_string(),
        engines: labels,
        offsets,
        program,
        outcome,
    }
}

/// A subgraph the model was not run on, and why.
pub fn not_analysed(
    subgraph: &str,
    engines: impl Iterator<Item = StreamRef>,
    why: String,
) -> SubgraphSync {
    SubgraphSync {
        subgraph: subgraph.to_string(),
        engines: engines.collect(),
        offsets: Vec::new(),
        program: EngineProgram::default(),
        outcome: Err(why),
    }
}

impl SubgraphSync {
    /// The findings that are errors of the program (not warnings).
    pub fn errors(&self) -> usize {
        self.outcome
            .as_ref()
            .map_or(0, |o| o.findings.iter().filter(|f| !f.is_warning()).count())
    }

    /// One line for `--format summary`: the findings counted by kind.
    pub fn summary_line(&self, source: &str) -> String {
        let (source, subgraph) = (shown(source), shown(&self.subgraph));
        let o = match &self.outcome {
            Ok(o) => o,
            Err(why) => return format!("{source}:{subgraph}: sync: not analysed ({})", shown(why)),
        };
        let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
        for f in &o.findings {
            *kinds.entry(f.kind()).or_default() += 1;
        }
        let warnings = o.findings.iter().filter(|f| f.is_warning()).count();
        let by_kind: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} x{n}")).collect();
        let by_kind = (!by_kind.is_empty()).then(|| format!(": {}", by_kind.join(", ")));
        format!(
            "{source}:{subgraph}: sync (advisory): {} error(s), {warnings} warning(s){}",
            self.errors(),
            by_kind.unwrap_or_default()
        )
    }

    fn names(&self) -> Vec<String> {
        self.engines
            .iter()
            .map(|o| format!("{}/{}", self.subgraph, o.engine.name()))
            .collect()
    }

    fn site_json(&self, s: &SyncSite) -> Value {
        match *s {
            SyncSite::Instr { engine, index } => {
                let e = usize::from(engine);
                let o = self.engines.get(e);
                json!({
                    "subgraph": self.subgraph,
                    "engine": o.map_or("", |o| o.engine.name()),
                    "member": o.map_or("", |o| &o.member),
                    "index": index,
                    "offset": self.offsets.get(e).and_then(|o| o.get(index as usize)),
                })
            }
            SyncSite::Dma { index } => json!({"subgraph": self.subgraph, "dma": index}),
        }
    }

    fn record(&self, f: &EngineFinding) -> Value {
        let mut r = json!({
            "type": "sync",
            "finding": f.kind(),
            "advisory": true,
            "severity": if f.is_warning() { "warning" } else { "error" },
            "text": lanes::finding_text(f, &self.names()),
        });
        let at = f.at().map(|s| self.site_json(&s));
        if let (Some(obj), Some(Value::Object(at))) = (r.as_object_mut(), at) {
            obj.extend(at);
        }
        if let EngineFinding::Deadlock { cycle } = f {
            let cycle: Vec<Value> = cycle
                .iter()
                .map(|e| {
                    json!({
                        "waiter": self.site_json(&e.waiter),
                        "helper": self.site_json(&e.helper),
                        "resource": e.resource.to_string(),
                        "mode": e.mode,
                        "threshold": e.threshold,
                        "value": e.value,
                    })
                })
                .collect();
            r["cycle"] = Value::Array(cycle);
        } else {
            r["other"] = Value::Array(last_update(f).iter().map(|s| self.site_json(s)).collect());
            if let Some(res) = resource(f) {
                r["resource"] = json!(res.to_string());
            }
            if let EngineFinding::AnalysisStopped { reason, .. } = f {
                r["reason"] = json!(reason.name());
            }
        }
        r
    }

    /// One line per finding (`source: sync <kind>: …`), or one record each with `jsonl`.
    pub fn write(&self, w: &mut dyn Write, source: &str, jsonl: bool) -> std::io::Result<()> {
        let o = match &self.outcome {
            Ok(o) => o,
            Err(why) if jsonl => {
                let r = json!({"type": "sync", "subgraph": self.subgraph, "refused": why});
                return writeln!(w, "{r}");
            }
            Err(_) => return writeln!(w, "{}", self.summary_line(source)),
        };
        for f in &o.findings {
            if jsonl {
                writeln!(w, "{}", self.record(f))?;
            } else {
                // Names (the source, subgraph and engine labels) [`shown`].
                let names: Vec<String> = self.names().iter().map(|n| shown(n).into()).collect();
                writeln!(
                    w,
                    "{}:{}: sync {} (advisory): {}",
                    shown(source),
                    shown(&self.subgraph),
                    if f.is_warning() { "warning" } else { "error" },
                    lanes::finding_text(f, &names)
                )?;
            }
        }
        Ok(())
    }

    pub fn html(&self, source: &str) -> String {
        let title = format!("{source}: {}", self.subgraph);
        let o = match &self.outcome {
            Ok(o) => o,
            // No picture of a program the model did not read: say why (it drew empty lanes).
            Err(why) => {
                let esc = crate::report::format::xml_escape;
                return format!(
                    "<section class=\"subgraph\"><h2>{}</h2><p>sync: not analysed ({})</p></section>",
                    esc(&title),
                    esc(why)
                );
            }
        };
        lanes::section(&title, &self.program, o, &self.names())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subgraph the model was not run on (its streams past the cap, or refused by core) is a
    /// section saying why, not an empty lane picture.
    #[test]
    fn a_subgraph_not_analysed_says_why_in_its_picture() {
        let origin = StreamRef {
            subgraph: "sg00".into(),
            engine: tpb_neff::Engine::Pe,
            member: "sg00/PE.bin".into(),
            size: 0,
            file: None,
        };
        let s = not_analysed("sg00", [origin].into_iter(), "past <the> cap".into());
        let h = s.html("x.neff");
        assert!(
            h.contains("<h2>x.neff: sg00</h2><p>sync: not analysed (past &lt;the&gt; cap)</p>"),
            "{h}"
        );
        assert!(!h.contains("<svg"), "{h}");
    }

    /// A 64-byte instruction (opcode 0x01) with `band` at 0x04 (FACTS §2).
    fn insn(band: [u8; 8]) -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0] = 0x01;
        b[1] = 0x10;
        b[4..12].copy_from_slice(&band);
        b
    }

    fn band(w: u8, wi: u8, u: u8, ui: u8, v: u32) -> [u8; 8] {
        let x = v.to_le_bytes();
        [w, wi, u, ui, x[0], x[1], x[2], x[3]]
    }

    fn engine(name: &str, bands: &[[u8; 8]]) -> (StreamRef, StepReader) {
        let origin = StreamRef {
            subgraph: "sg00".into(),
            engine: tpb_neff::Engine::parse(name).expect("an engine"),
            member: format!("sg00/{name}.bin"),
            size: 0,
            file: None,
        };
        let mut e = StepReader::default();
        let bytes: Vec<u8> = bands.iter().flat_map(|b| insn(*b)).collect();
        // Fed in odd pieces, as check's blocks cut it.
        for piece in bytes.chunks(100) {
            e.push(piece);
        }
        (origin, e)
    }

    #[test]
    fn a_deadlock_names_both_engines_members_indices_and_semaphores() {
        let pe = engine("PE", &[band(5, 1, 0, 0, 1), band(0, 0, 0x13, 2, 0)]);
        let pool = engine("Pool", &[band(5, 2, 0, 0, 1), band(0, 0, 0x13, 1, 0)]);
        let s = analyze("sg00", vec![pe, pool], Vec::new());
        assert_eq!(s.errors(), 1);
        let mut out = Vec::new();
        s.write(&mut out, "x.neff", true).unwrap();
        let r: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(r["finding"], "deadlock");
        assert_eq!(r["engine"], "PE");
        assert_eq!(r["member"], "sg00/PE.bin");
        assert_eq!(r["cycle"][0]["helper"]["engine"], "Pool");
        assert_eq!(r["cycle"][0]["helper"]["index"], 1);
        assert_eq!(r["cycle"][0]["helper"]["offset"], 64);
        assert_eq!(r["cycle"][0]["resource"], "S[1]");
        assert_eq!(r["cycle"][1]["waiter"]["engine"], "Pool");
        assert_eq!(r["cycle"][1]["resource"], "S[2]");
        let mut text = Vec::new();
        s.write(&mut text, "x.neff", false).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(
            text.starts_with("x.neff:sg00: sync error (advisory): deadlock: sg00/PE #0 waits S[1]"),
            "{text}"
        );
    }

    /// A finding's text line and the summary line show the source and subgraph escaped
    /// ([`shown`]): one line each; the JSONL record carries the names themselves.
    #[test]
    fn sync_lines_show_names_with_control_characters_escaped() {
        let pe = engine("PE", &[band(5, 1, 0, 0, 1), band(0, 0, 0x13, 2, 0)]);
        let pool = engine("Pool", &[band(5, 2, 0, 0, 1), band(0, 0, 0x13, 1, 0)]);
        let s = analyze("sg\n00\u{1b}[2J", vec![pe, pool], Vec::new());
        let mut text = Vec::new();
        s.write(&mut text, "x\n.neff", false).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert_eq!(text.lines().count(), s.errors(), "{text}");
        assert!(
            text.starts_with(
                r"x\n.neff:sg\n00\u{1b}[2J: sync error (advisory): deadlock: sg\n00\u{1b}[2J/PE #0"
            ),
            "{text}"
        );
        let line = s.summary_line("x\n.neff");
        assert!(
            line.starts_with(r"x\n.neff:sg\n00\u{1b}[2J: sync (advisory): 1 error(s)"),
            "{line}"
        );
        let mut out = Vec::new();
        s.write(&mut out, "x\n.neff", true).unwrap();
        let r: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(r["subgraph"], "sg\n00\u{1b}[2J");
    }

    #[test]
    fn a_wait_only_a_dma_satisfies_is_not_reported_and_one_nothing_satisfies_is() {
        let pe = || engine("PE", &[band(5, 9, 0, 0, 16)]);
        let dma = DmaRow {
            sem: 9,
            by: 16,
            trigger: None,
        };
        assert_eq!(analyze("sg00", vec![pe()], vec![dma]).errors(), 0);
        let s = analyze("sg00", vec![pe()], Vec::new());
        let mut out = Vec::new();
        s.write(&mut out, "x.neff", true).unwrap();
        let r: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            (
                r["finding"].as_str(),
                r["engine"].as_str(),
                r["index"].as_u64()
            ),
            (Some("unsatisfiable_wait"), Some("PE"), Some(0))
        );
        // An undeclared queue set counts one (DE-12, `sync_subgraphs`): 16 is not reached.
        let one = DmaRow { by: 1, ..dma };
        assert_eq!(analyze("sg00", vec![pe()], vec![one]).errors(), 1);
    }
}
