//! One pass over a NEFF's members (or an unpacked NEFF folder): every member's role, each
//! subgraph's engines, and each engine's instruction stream handed to a [`StreamSink`].
//!
//! The tar's order is arbitrary, so a stream may come before the def.json that names it. The
//! rule (SPEC §12.4):
//! - JSON members of a subgraph folder are read whole (capped) and kept as text, parsed only
//!   when def.json (or the engine JSON awaited) arrives, and never kept parsed;
//! - a member whose subgraph is decided when it starts (def.json and the engine JSONs it
//!   names already read) is streamed to the sink as it is decompressed, or skipped;
//! - a member of an undecided subgraph is held in memory, up to `Limits::max_pending` bytes
//!   in all, and handed over (or dropped) once its subgraph is decided;
//! - a stream that could not be held is read in a second pass over the payload, and the
//!   report says so (`passes == 2`). Nothing is guessed: a `.bin` name alone is no stream.

use crate::layout::{decide, Decision, DmaIncrement, Engine, EnginePlan, How};
use crate::payload::{file_kind, Integrity, Limits, Neff};
use crate::NeffError;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The JSON parser the caller trusts (the harness refuses duplicate keys); `Err`: its message.
pub type ParseJson = fn(&str) -> Result<Value, String>;

/// What a member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `sgNN/def.json`.
    DefJson,
    /// An engine JSON named by def.json.
    EngineJson(Engine),
    /// An engine's instruction stream.
    Stream(Engine),
    /// Anything else.
    Other,
}

impl Role {
    /// In words.
    pub fn name(&self) -> String {
        match self {
            Role::DefJson => "def.json".into(),
            Role::EngineJson(e) => format!("engine JSON ({})", e.name()),
            Role::Stream(e) => format!("instruction stream ({})", e.name()),
            Role::Other => "other".into(),
        }
    }
}

/// One member, its role and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberRow {
    /// The name (leading `./` stripped).
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// The role.
    pub role: Role,
    /// How the role was decided.
    pub why: String,
}

/// One engine's stream, as handed to the sink.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRef {
    /// The subgraph folder (`sg00`).
    pub subgraph: String,
    /// The engine.
    pub engine: Engine,
    /// The member (`sg00/PE.bin`).
    pub member: String,
    /// Its size.
    pub size: u64,
    /// The file (unpacked folders; `None` in an archive).
    pub file: Option<PathBuf>,
}

/// One engine of a subgraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineInfo {
    /// The engine.
    pub engine: Engine,
    /// Its stream's member, if it has one.
    pub member: Option<String>,
    /// How it was found.
    pub how: How,
    /// Its DMA descriptors' semaphore increments (engine JSON `dma`).
    pub dma: Vec<DmaIncrement>,
}

/// One subgraph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subgraph {
    /// The folder (`sg00`).
    pub name: String,
    /// Its def.json member.
    pub def_json: Option<String>,
    /// Its engines (those with a stream or named by def.json), in [`Engine::ALL`] order.
    pub engines: Vec<EngineInfo>,
}

/// What a scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Every regular member, in archive (or sorted folder) order.
    pub members: Vec<MemberRow>,
    /// The subgraphs, by folder name.
    pub subgraphs: Vec<Subgraph>,
    /// Every stream, in subgraph and engine order.
    pub streams: Vec<StreamRef>,
    /// The payload's integrity (archives).
    pub integrity: Option<Integrity>,
    /// Decompression passes (2: a stream came before its def.json and did not fit).
    pub passes: u8,
    /// The sink asked to stop; the scan ended there (nothing after it checked).
    pub stopped: bool,
}

/// Receives each engine stream's bytes.
pub trait StreamSink {
    /// Reads what it wants of `data` (the stream `s`); `Ok(true)` stops the scan. A read error
    /// of `data` is a [`NeffError`] ([`error_of`]).
    fn stream(&mut self, s: &StreamRef, data: &mut dyn Read) -> Result<bool, NeffError>;
}

/// The [`NeffError`] a read of a stream's data failed with.
pub fn error_of(e: &std::io::Error) -> NeffError {
    NeffError::from_io(e).unwrap_or_else(|| NeffError::Io {
        path: "stream".into(),
        error: e.to_string(),
    })
}

/// The subgraph folder of a member (`sg` and digits, any case), lower case.
fn subgraph_of(name: &str) -> Option<&str> {
    let (top, rest) = name.split_once('/')?;
    let digits = top.get(2..)?;
    (!rest.is_empty()
        && top[..2].eq_ignore_ascii_case("sg")
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit()))
    .then_some(top)
}

fn is_json(name: &str) -> bool {
    name.len() > 5 && name[name.len() - 5..].eq_ignore_ascii_case(".json")
}

struct Sg {
    folder: String,
    /// Its def.json: the member's name and text (parsed when the subgraph is tried, never kept
    /// parsed: a parsed tree costs up to some 40 times its text).
    def: Option<(String, Vec<u8>)>,
    /// The member the last try waited for (lower case): the next try is when it arrives.
    waiting: Option<String>,
    plan: Option<Vec<EnginePlan>>,
    /// Rows held or deferred while undecided: (row, bytes; `None`: did not fit).
    pending: Vec<(usize, Option<Vec<u8>>)>,
}

#[derive(Default)]
struct State {
    limits: Limits,
    parse: Option<ParseJson>,
    sgs: BTreeMap<String, Sg>,
    /// The other JSON members of subgraph folders by lower-case path: name and text (parsed
    /// when def.json names one).
    jsons: HashMap<String, (String, Vec<u8>)>,
    json_total: u64,
    rows: Vec<MemberRow>,
    by_lower: HashMap<String, Vec<usize>>,
    folders: HashSet<String>,
    pending_total: u64,
    /// Lower-case stream member → its subgraph key and engine (decided subgraphs).
    stream_of: HashMap<String, (String, Engine)>,
    /// Rows handed to the sink.
    streamed: HashSet<usize>,
    files: HashMap<usize, PathBuf>,
    stopped: bool,
    /// `--engine NAME=MEMBER`: lower-case member, its subgraph key, the engine.
    overrides: Vec<(Engine, String)>,
}

impl State {
    fn new(limits: &Limits, parse: ParseJson, overrides: &[(Engine, String)]) -> Self {
        let mut st = State {
            limits: *limits,
            parse: Some(parse),
            ..State::default()
        };
        for (e, m) in overrides {
            let m = m.trim_start_matches("./").to_ascii_lowercase();
            if let Some(folder) = subgraph_of(&m).map(str::to_string) {
                st.sg(&folder);
            }
            st.overrides.push((*e, m));
        }
        st
    }

    fn add_row(&mut self, name: &str, size: u64) -> usize {
        let i = self.rows.len();
        self.rows.push(MemberRow {
            name: name.to_string(),
            size,
            role: Role::Other,
            why: String::new(),
        });
        self.by_lower
            .entry(name.to_ascii_lowercase())
            .or_default()
            .push(i);
        i
    }

    fn sg(&mut self, folder: &str) -> &mut Sg {
        self.sgs
            .entry(folder.to_ascii_lowercase())
            .or_insert_with(|| Sg {
                folder: folder.to_string(),
                def: None,
                waiting: None,
                plan: None,
                pending: Vec::new(),
            })
    }

    /// A JSON member of a subgraph folder, read whole and kept as text. `Ok(true)`: its
    /// subgraph is to be tried now (it is the def.json or the member the last try waited for).
    fn add_json(&mut self, name: &str, bytes: Vec<u8>) -> Result<bool, NeffError> {
        self.json_total += bytes.len() as u64;
        if self.json_total > self.limits.max_json_total {
            return Err(NeffError::TooBig {
                member: name.into(),
                what: "the JSON members kept, in all",
                cap: self.limits.max_json_total,
            });
        }
        let folder = subgraph_of(name).unwrap_or_default().to_string();
        let lower = name.to_ascii_lowercase();
        let sg = self.sg(&folder);
        let now = sg.waiting.as_deref() == Some(lower.as_str());
        if lower == format!("{}/def.json", folder.to_ascii_lowercase()) {
            sg.def = Some((name.to_string(), bytes));
            return Ok(true);
        }
        self.jsons.insert(lower, (name.to_string(), bytes));
        Ok(now)
    }

    /// A JSON member's text parsed (`Err`: why not).
    fn parsed(&self, bytes: &[u8]) -> Result<Value, String> {
        let parse = self.parse.expect("a parser");
        std::str::from_utf8(bytes)
            .map_err(|e| format!("not UTF-8: {e}"))
            .and_then(parse)
    }

    /// Tries to decide subgraph `key`; `Ok(true)` when it is (now or already).
    fn try_decide(&mut self, key: &str, last: bool) -> Result<bool, NeffError> {
        let sg = &self.sgs[key];
        if sg.plan.is_some() {
            return Ok(true);
        }
        let def = match &sg.def {
            Some((name, text)) => Some((
                name.as_str(),
                self.parsed(text).map_err(|reason| NeffError::Json {
                    member: name.clone(),
                    reason,
                })?,
            )),
            None => None,
        };
        let lookup = |p: &str| {
            self.jsons
                .get(p)
                .map(|(name, text)| (name.clone(), self.parsed(text)))
        };
        let d = decide(
            &sg.folder,
            def.as_ref().map(|(n, v)| (*n, v)),
            &lookup,
            last,
        )?;
        let mut plan = match d {
            Decision::Ready(plan) => plan,
            Decision::Waiting(p) => {
                self.sgs.get_mut(key).expect("sg").waiting = Some(p);
                return Ok(false);
            }
        };
        // `--engine NAME=MEMBER` replaces what def.json says of that engine, and that member
        // is no other engine's.
        for (engine, member) in &self.overrides {
            if subgraph_of(member) == Some(key) {
                plan.retain(|p| p.engine != *engine);
                for p in &mut plan {
                    p.names.retain(|n| n != member);
                }
                plan.push(EnginePlan {
                    engine: *engine,
                    names: vec![member.clone()],
                    how: How::Override,
                    dma: Vec::new(),
                });
            }
        }
        plan.sort_by_key(|p| p.engine);
        for p in &plan {
            for n in &p.names {
                let was = self
                    .stream_of
                    .insert(n.clone(), (key.to_string(), p.engine));
                // One member named as two engines' stream: linted as one of them only, the
                // other engine's stream silently missing (and its sync analysis wrong).
                if let Some((_, other)) = was.filter(|(_, e)| *e != p.engine) {
                    return Err(NeffError::Json {
                        member: self.sgs[key]
                            .def
                            .as_ref()
                            .map_or("def.json".into(), |(n, _)| n.clone()),
                        reason: format!(
                            "{n} is named as the stream of two engines, {} and {} (a stream is \
                             one engine's)",
                            other.name(),
                            p.engine.name()
                        ),
                    });
                }
            }
        }
        self.sgs.get_mut(key).expect("sg").plan = Some(plan);
        Ok(true)
    }

    /// The stream a row is, if its subgraph is decided and names it.
    fn stream_ref(&self, row: usize) -> Option<StreamRef> {
        let r = &self.rows[row];
        let (key, engine) = self.stream_of.get(&r.name.to_ascii_lowercase())?;
        Some(StreamRef {
            subgraph: self.sgs[key].folder.clone(),
            engine: *engine,
            member: r.name.clone(),
            size: r.size,
            file: self.files.get(&row).cloned(),
        })
    }

    /// Hands a decided subgraph's held members to the sink (streams) or drops them.
    fn flush(&mut self, key: &str, sink: &mut dyn StreamSink) -> Result<(), NeffError> {
        let pending = std::mem::take(&mut self.sgs.get_mut(key).expect("sg").pending);
        for (row, bytes) in pending {
            if let Some(b) = &bytes {
                self.pending_total -= b.len() as u64;
            }
            if self.stopped {
                continue;
            }
            if let (Some(s), Some(b)) = (self.stream_ref(row), bytes) {
                self.streamed.insert(row);
                self.stopped = sink.stream(&s, &mut &b[..])?;
            }
        }
        Ok(())
    }

    /// After the last member: decides the rest, hands over what is held, and resolves every
    /// engine's member. Returns the rows of streams not yet handed over (for a second pass).
    fn finish(&mut self, sink: &mut dyn StreamSink) -> Result<Vec<usize>, NeffError> {
        let keys: Vec<String> = self.sgs.keys().cloned().collect();
        for k in &keys {
            self.try_decide(k, true)?;
            self.flush(k, sink)?;
        }
        let mut rest = Vec::new();
        for k in &keys {
            let sg = &self.sgs[k];
            let def_name = sg.def.as_ref().map(|(n, _)| n.clone());
            let def_shown = def_name.clone().unwrap_or_else(|| "def.json".into());
            if let Some(d) = &def_name {
                let i = self.by_lower[&d.to_ascii_lowercase()][0];
                self.rows[i].role = Role::DefJson;
                self.rows[i].why = "the subgraph's starting file (FACTS §10)".into();
            }
            for p in sg.plan.clone().unwrap_or_default() {
                if let How::EngineJson { key, json } = &p.how {
                    let i = self.by_lower[&json.to_ascii_lowercase()][0];
                    self.rows[i].role = Role::EngineJson(p.engine);
                    self.rows[i].why = format!("named by {def_shown} key \"{key}\"");
                }
                let mut hits: Vec<usize> = Vec::new();
                for n in &p.names {
                    match self.by_lower.get(n) {
                        Some(rows) => hits.extend(rows),
                        None if !matches!(p.how, How::Fallback { .. }) => {
                            let (by, key) = match &p.how {
                                How::InstrKey { key } => (def_shown.clone(), key.clone()),
                                How::EngineJson { json, .. } => (json.clone(), "instr".into()),
                                How::Override => ("--engine".into(), p.engine.name().into()),
                                _ => (def_shown.clone(), String::new()),
                            };
                            return Err(NeffError::Missing {
                                by,
                                key,
                                named: n.clone(),
                                reason: if self.folders.contains(n) {
                                    "a folder, not a regular member"
                                } else {
                                    "no such member"
                                },
                            });
                        }
                        None => {}
                    }
                }
                if hits.len() > 1 {
                    return Err(NeffError::Ambiguous {
                        named: p.names.join(" or "),
                        by: def_shown.clone(),
                        candidates: hits.iter().map(|&i| self.rows[i].name.clone()).collect(),
                    });
                }
                if let Some(&i) = hits.first() {
                    self.rows[i].role = Role::Stream(p.engine);
                    self.rows[i].why = p.how.text(&def_shown);
                    if !self.streamed.contains(&i) {
                        rest.push(i);
                    }
                }
            }
        }
        for r in self.rows.iter_mut().filter(|r| r.why.is_empty()) {
            r.why = match subgraph_of(&r.name) {
                None => "outside the subgraph folders (sgNN/)".into(),
                Some(_) if r.name.to_ascii_lowercase().ends_with(".bin") => {
                    "a .bin no def.json key names as a stream (constants, tables: FACTS §10)".into()
                }
                Some(_) if is_json(&r.name) => "a JSON def.json does not name".into(),
                Some(_) => "not named by def.json".into(),
            };
        }
        rest.sort();
        Ok(rest)
    }

    fn report(self, integrity: Option<Integrity>, passes: u8) -> Report {
        let mut subgraphs = Vec::new();
        let mut streams = Vec::new();
        for sg in self.sgs.values() {
            let mut engines = Vec::new();
            for p in sg.plan.clone().unwrap_or_default() {
                let row = p
                    .names
                    .iter()
                    .find_map(|n| self.by_lower.get(n).map(|r| r[0]));
                if row.is_none() && matches!(p.how, How::Fallback { .. }) {
                    continue;
                }
                if let Some(r) = row {
                    streams.push(StreamRef {
                        subgraph: sg.folder.clone(),
                        engine: p.engine,
                        member: self.rows[r].name.clone(),
                        size: self.rows[r].size,
                        file: self.files.get(&r).cloned(),
                    });
                }
                engines.push(EngineInfo {
                    engine: p.engine,
                    member: row.map(|r| self.rows[r].name.clone()),
                    how: p.how,
                    dma: p.dma,
                });
            }
            subgraphs.push(Subgraph {
                name: sg.folder.clone(),
                def_json: sg.def.as_ref().map(|(n, _)| n.clone()),
                engines,
            });
        }
        Report {
            members: self.rows,
            subgraphs,
            streams,
            integrity,
            passes,
            stopped: self.stopped,
        }
    }
}

/// Reads a member's data through the tar reader.
struct MemberData<'a, R: Read>(&'a mut crate::tar::TarReader<R>);

impl<R: Read> Read for MemberData<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read_data(buf).map_err(NeffError::into_io)
    }
}

fn read_whole<R: Read>(
    t: &mut crate::tar::TarReader<R>,
    name: &str,
    size: u64,
    cap: u64,
) -> Result<Vec<u8>, NeffError> {
    if size > cap {
        return Err(NeffError::TooBig {
            member: name.into(),
            what: "a JSON member",
            cap,
        });
    }
    let mut v = vec![0u8; size as usize];
    let mut got = 0;
    while got < v.len() {
        got += t.read_data(&mut v[got..])?;
    }
    Ok(v)
}

/// What the header and the payload's first bytes said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The header.
    pub header: crate::Header,
    /// gzip or plain tar.
    pub compression: crate::Compression,
    /// Bytes after the payload (ignored).
    pub trailing: u64,
}

/// Scans the NEFF at `path`: every member's role, and each engine stream handed to `sink`.
pub fn scan_file(
    path: &Path,
    limits: &Limits,
    parse: ParseJson,
    overrides: &[(Engine, String)],
    sink: &mut dyn StreamSink,
) -> Result<(Opened, Report), NeffError> {
    let mut neff = Neff::open(path, limits)?;
    let facts = Opened {
        header: neff.header.clone(),
        compression: neff.compression,
        trailing: neff.trailing,
    };
    let mut st = State::new(limits, parse, overrides);
    while let Some(e) = neff.tar.next_any()? {
        if e.kind == crate::tar::Kind::Folder {
            st.folders.insert(e.name.to_ascii_lowercase());
            continue;
        }
        let row = st.add_row(&e.name, e.size);
        let Some(folder) = subgraph_of(&e.name).map(str::to_string) else {
            continue;
        };
        let key = folder.to_ascii_lowercase();
        st.sg(&folder);
        if is_json(&e.name) {
            let bytes = read_whole(&mut neff.tar, &e.name, e.size, limits.max_json)?;
            if st.add_json(&e.name, bytes)? && st.try_decide(&key, false)? {
                st.flush(&key, sink)?;
            }
        } else if st.sgs[&key].plan.is_some() {
            if let Some(s) = st.stream_ref(row) {
                st.streamed.insert(row);
                st.stopped = sink.stream(&s, &mut MemberData(&mut neff.tar))?;
            }
        } else if st.pending_total.saturating_add(e.size) <= limits.max_pending {
            let b = read_whole(&mut neff.tar, &e.name, e.size, u64::MAX)?;
            st.pending_total += e.size;
            st.sg(&folder).pending.push((row, Some(b)));
        } else {
            st.sg(&folder).pending.push((row, None));
        }
        if st.stopped {
            return Ok((facts, st.report(None, 1)));
        }
    }
    // The hash is checked before anything held is handed over.
    let integrity = neff.finish()?;
    let rest = st.finish(sink)?;
    let mut passes = 1;
    if !rest.is_empty() && !st.stopped {
        passes = 2;
        let want: HashSet<String> = rest.iter().map(|&r| st.rows[r].name.clone()).collect();
        let mut again = Neff::open(path, limits)?;
        while let Some(e) = again.tar.next_entry()? {
            if !want.contains(&e.name) {
                continue;
            }
            let row = st.by_lower[&e.name.to_ascii_lowercase()][0];
            let s = st.stream_ref(row).expect("a stream");
            if sink.stream(&s, &mut MemberData(&mut again.tar))? {
                st.stopped = true;
                break;
            }
        }
    }
    Ok((facts, st.report(Some(integrity), passes)))
}

/// Scans an unpacked NEFF folder: every file's role and each engine stream's file (read
/// nothing but the JSONs). Symlinks and special files are refused by name.
pub fn scan_folder(
    root: &Path,
    limits: &Limits,
    parse: ParseJson,
    overrides: &[(Engine, String)],
) -> Result<Report, NeffError> {
    fn walk(
        root: &Path,
        dir: &Path,
        depth: usize,
        out: &mut Vec<(String, PathBuf, u64)>,
        folders: &mut Vec<String>,
        cap: usize,
    ) -> Result<(), NeffError> {
        let io = |p: &Path, e: std::io::Error| NeffError::Io {
            path: p.display().to_string(),
            error: e.to_string(),
        };
        if depth > 64 {
            return Err(NeffError::TooBig {
                member: dir.display().to_string(),
                what: "the folder depth",
                cap: 64,
            });
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .map(|e| e.map(|e| e.path()).map_err(|e| io(dir, e)))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for p in entries {
            let meta = std::fs::symlink_metadata(&p).map_err(|e| io(&p, e))?;
            let ft = meta.file_type();
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            if ft.is_dir() {
                folders.push(rel.to_ascii_lowercase());
                walk(root, &p, depth + 1, out, folders, cap)?;
            } else if ft.is_file() {
                if out.len() >= cap {
                    return Err(NeffError::TooBig {
                        member: rel,
                        what: "the member count",
                        cap: cap as u64,
                    });
                }
                out.push((rel, p.clone(), meta.len()));
            } else {
                return Err(NeffError::NotRegular {
                    path: p.display().to_string(),
                    kind: file_kind(&ft),
                });
            }
        }
        Ok(())
    }
    let meta = std::fs::symlink_metadata(root).map_err(|e| NeffError::Io {
        path: root.display().to_string(),
        error: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(NeffError::NotRegular {
            path: root.display().to_string(),
            kind: file_kind(&meta.file_type()),
        });
    }
    let mut files = Vec::new();
    let mut folders = Vec::new();
    walk(root, root, 0, &mut files, &mut folders, limits.max_members)?;
    let mut st = State::new(limits, parse, overrides);
    st.folders = folders.into_iter().collect();
    for (rel, path, size) in files {
        let row = st.add_row(&rel, size);
        st.files.insert(row, path.clone());
        if let Some(folder) = subgraph_of(&rel).map(str::to_string) {
            st.sg(&folder);
            if is_json(&rel) {
                if size > limits.max_json {
                    return Err(NeffError::TooBig {
                        member: rel,
                        what: "a JSON member",
                        cap: limits.max_json,
                    });
                }
                let f = crate::payload::regular_file(&path)?;
                let mut bytes = Vec::new();
                f.take(limits.max_json + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| NeffError::Io {
                        path: path.display().to_string(),
                        error: e.to_string(),
                    })?;
                st.add_json(&rel, bytes)?;
            }
        }
    }
    // Nothing is streamed here: the caller reads each stream's file.
    struct Nothing;
    impl StreamSink for Nothing {
        fn stream(&mut self, _: &StreamRef, _: &mut dyn Read) -> Result<bool, NeffError> {
            Ok(false)
        }
    }
    st.finish(&mut Nothing)?;
    Ok(st.report(None, 1))
}
