//! The engines of one subgraph against their semaphores and events (SPEC §11), read again.
//!
//! Written from SPEC §11 and FACTS §2/§10 only; it shares no code with `tpb-core`. Its style
//! differs on purpose: the run rescans every engine from the first at each step (no wait
//! queues), semaphores live in a map, and the end is judged on a ledger of counted updates per
//! engine from which a wait-for graph is built and its cycles found as the orbits that return
//! to their start.
//!
//! Total: no input panics. Quadratic in the worst case: it is the second reading, not the fast
//! one.

use std::collections::{BTreeMap, BTreeSet};

/// What a wait-mode byte asks, transcribed from FACTS §2 (common.h L313-330) and SPEC §11
/// E3/E4: `(byte, header name, meaning)`.
pub const WAIT_RULES: &[(u8, &str, Ask)] = &[
    (0x00, "NONE", Ask::Nothing),
    (0x01, "WAIT_FOR_SEM_EQ_IMM", Ask::Count(Rel::Equal)),
    (0x02, "WAIT_FOR_SEM_LT_IMM", Ask::Count(Rel::Below)),
    (0x03, "WAIT_FOR_SEM_LE_IMM", Ask::Count(Rel::AtMost)),
    (0x04, "WAIT_FOR_SEM_GT_IMM", Ask::Count(Rel::Above)),
    (0x05, "WAIT_FOR_SEM_GE_IMM", Ask::Count(Rel::AtLeast)),
    (
        0x06,
        "WAIT_FOR_EVT_SET",
        Ask::Flag {
            up: true,
            then: None,
        },
    ),
    (
        0x07,
        "WAIT_FOR_EVT_SET_THEN_CLEAR",
        Ask::Flag {
            up: true,
            then: Some(false),
        },
    ),
    (
        0x0E,
        "WAIT_FOR_EVT_CLEAR",
        Ask::Flag {
            up: false,
            then: None,
        },
    ),
    (
        0x0F,
        "WAIT_FOR_EVT_CLEAR_THEN_SET",
        Ask::Flag {
            up: false,
            then: Some(true),
        },
    ),
    (0x81, "WAIT_FOR_SEM_EQ_REG", Ask::Register),
    (0x82, "WAIT_FOR_SEM_LT_REG", Ask::Register),
    (0x83, "WAIT_FOR_SEM_LE_REG", Ask::Register),
    (0x84, "WAIT_FOR_SEM_GT_REG", Ask::Register),
    (0x85, "WAIT_FOR_SEM_GE_REG", Ask::Register),
];

/// What an update-mode byte does, transcribed from FACTS §2 (common.h L347-370) and SPEC §11
/// E5: `(byte, header name, effect)`.
pub const UPDATE_RULES: &[(u8, &str, Effect)] = &[
    (0x00, "NONE", Effect::Nothing),
    (0x01, "EVT_SET_READ", Effect::Flag(true)),
    (0x02, "EVT_CLR_READ", Effect::Flag(false)),
    (0x03, "SEM_INC_READ", Effect::Plus(Amount::One)),
    (0x04, "SEM_DEC_READ", Effect::Minus(Amount::One)),
    (0x05, "SEM_ADD_IMM_READ", Effect::Plus(Amount::Immediate)),
    (0x07, "SEM_SUB_IMM_READ", Effect::Minus(Amount::Immediate)),
    (0x09, "SEM_WR_IMM_READ", Effect::Store),
    (0x11, "EVT_SET_COMPLETE", Effect::Flag(true)),
    (0x12, "EVT_CLR_COMPLETE", Effect::Flag(false)),
    (0x13, "SEM_INC_COMPLETE", Effect::Plus(Amount::One)),
    (0x14, "SEM_DEC_COMPLETE", Effect::Minus(Amount::One)),
    (
        0x15,
        "SEM_ADD_IMM_COMPLETE",
        Effect::Plus(Amount::Immediate),
    ),
    (
        0x17,
        "SEM_SUB_IMM_COMPLETE",
        Effect::Minus(Amount::Immediate),
    ),
    (0x19, "SEM_WR_IMM_COMPLETE", Effect::Store),
    (0x99, "SEM_WR_REG_COMPLETE", Effect::Register),
];

/// A semaphore comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    /// `==`
    Equal,
    /// `<`
    Below,
    /// `<=`
    AtMost,
    /// `>`
    Above,
    /// `>=`
    AtLeast,
}

/// What a wait asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// No wait.
    Nothing,
    /// The semaphore compared with the immediate.
    Count(Rel),
    /// The event is `up` (set) or not; then, if `then`, it is written so.
    Flag {
        /// Wait for set (`true`) or clear.
        up: bool,
        /// What the wait writes after it passes.
        then: Option<bool>,
    },
    /// Threshold in a register.
    Register,
}

/// How much a semaphore step moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Amount {
    /// 1.
    One,
    /// The `semaphore_value` immediate.
    Immediate,
}

/// What an update does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing.
    Nothing,
    /// Set (`true`) or clear the event.
    Flag(bool),
    /// Add to the semaphore.
    Plus(Amount),
    /// Take from the semaphore.
    Minus(Amount),
    /// Write the immediate.
    Store,
    /// Value in a register.
    Register,
}

/// A DMA descriptor's increment (FACTS §10 D1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Semaphore.
    pub semaphore: u8,
    /// Amount (`num_queues` or 1).
    pub amount: u32,
    /// `(engine, instruction)` that starts it; `None`: done before anything runs.
    pub after: Option<(usize, usize)>,
}

/// A place: `(engine, instruction)` or a DMA descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Instruction of an engine.
    At(usize, usize),
    /// DMA descriptor of the list.
    Desc(usize),
}

/// Which counter: a semaphore (`false`) or an event (`true`), and its index.
pub type Counter = (bool, u8);

/// One link of a cycle: `(waiter, counter, mode byte, immediate, final value, helper)`.
pub type Link = (Place, Counter, u8, u32, u64, Place);

/// What the oracle observed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// A cycle of waits.
    Cycle(Vec<Link>),
    /// `(waiter, counter, mode, immediate, final value, last writer)`.
    NeverSatisfied(Place, Counter, u8, u32, u64, Option<Place>),
    /// `(waiter, event, mode, last writer)`.
    NobodySets(Place, u8, u8, Option<Place>),
    /// `(place, semaphore, before, amount, last writer)`.
    BelowZero(Place, u8, u64, u64, Option<Place>),
    /// `(place, semaphore, before, amount, last writer)`.
    PastTop(Place, u8, u64, u64, Option<Place>),
    /// `(first writer, counter)`.
    NeverRead(Place, Counter),
    /// `(place, reason name, mode byte)`.
    GaveUp(Place, &'static str, u8),
}

/// How an engine ended: `"finished"`, or `"blocked"` / `"stopped"` at an instruction.
pub type Ending = (&'static str, usize);

/// The oracle's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdicts {
    /// Observations in SPEC §11 DE-10 order.
    pub observations: Vec<Observation>,
    /// Per engine.
    pub endings: Vec<Ending>,
    /// Final value of every semaphore, 0..256.
    pub semaphores: Vec<u64>,
    /// Every wait that passed, in the order they passed, with the last writer of its counter
    /// then (`None`: the initial value satisfied it).
    pub satisfied: Vec<(Place, Option<Place>)>,
}

/// Engines most (SPEC §11 DE-2).
pub const MOST_ENGINES: usize = 64;
const TOP: u64 = u32::MAX as u64;

fn ask_of(b: u8) -> Option<Ask> {
    WAIT_RULES.iter().find(|r| r.0 == b).map(|r| r.2)
}

fn effect_of(b: u8) -> Option<Effect> {
    UPDATE_RULES.iter().find(|r| r.0 == b).map(|r| r.2)
}

/// Why the oracle cannot follow a band, if it cannot (SPEC §11 DE-8, wait first).
fn gives_up(band: &[u8; 8]) -> Option<(&'static str, u8)> {
    match ask_of(band[0]) {
        None => return Some(("unknown_wait_mode", band[0])),
        Some(Ask::Register) => return Some(("register_wait", band[0])),
        _ => {}
    }
    match effect_of(band[2]) {
        None => Some(("unknown_update_mode", band[2])),
        Some(Effect::Register) => Some(("register_update", band[2])),
        _ => None,
    }
}

fn imm(band: &[u8; 8]) -> u32 {
    u32::from_le_bytes([band[4], band[5], band[6], band[7]])
}

struct World {
    sems: BTreeMap<u8, u64>,
    events_up: BTreeSet<u8>,
    writer: BTreeMap<Counter, Place>,
    flagged: BTreeSet<(bool, u8)>,
    observations: Vec<Observation>,
}

impl World {
    fn sem(&self, i: u8) -> u64 {
        self.sems.get(&i).copied().unwrap_or(0)
    }

    fn passes(&self, band: &[u8; 8]) -> bool {
        match ask_of(band[0]) {
            Some(Ask::Nothing) => true,
            Some(Ask::Count(rel)) => {
                let (v, t) = (self.sem(band[1]), u64::from(imm(band)));
                match rel {
                    Rel::Equal => v == t,
                    Rel::Below => v < t,
                    Rel::AtMost => v <= t,
                    Rel::Above => v > t,
                    Rel::AtLeast => v >= t,
                }
            }
            Some(Ask::Flag { up, .. }) => self.events_up.contains(&band[1]) == up,
            _ => false,
        }
    }

    fn flag(&mut self, e: u8, up: bool, by: Place) {
        if up {
            self.events_up.insert(e);
        } else {
            self.events_up.remove(&e);
        }
        self.writer.insert((true, e), by);
    }

    fn bump(&mut self, s: u8, amount: u64, up: bool, by: Place) {
        let v = self.sem(s);
        let new = if up {
            if v + amount > TOP {
                if self.flagged.insert((true, s)) {
                    let w = self.writer.get(&(false, s)).copied();
                    self.observations
                        .push(Observation::PastTop(by, s, v, amount, w));
                }
                TOP
            } else {
                v + amount
            }
        } else if amount > v {
            if self.flagged.insert((false, s)) {
                let w = self.writer.get(&(false, s)).copied();
                self.observations
                    .push(Observation::BelowZero(by, s, v, amount, w));
            }
            0
        } else {
            v - amount
        };
        self.sems.insert(s, new);
        self.writer.insert((false, s), by);
    }

    fn store(&mut self, s: u8, v: u64, by: Place) {
        self.sems.insert(s, v);
        self.writer.insert((false, s), by);
    }
}

/// Runs the engines (`engines[e]` = engine `e`'s events bands, bytes `[0x04..0x0C]` of each
/// instruction) with the DMA descriptors. `Err` names a refused input (SPEC §11 DE-2).
pub fn engine_sync(
    engines: &[Vec<[u8; 8]>],
    dmas: &[Descriptor],
) -> Result<Verdicts, &'static str> {
    if engines.len() > MOST_ENGINES {
        return Err("too_many_engines");
    }
    for d in dmas {
        if let Some((e, i)) = d.after {
            if engines.get(e).is_none_or(|s| i >= s.len()) {
                return Err("bad_trigger");
            }
        }
    }
    let mut w = World {
        sems: BTreeMap::new(),
        events_up: BTreeSet::new(),
        writer: BTreeMap::new(),
        flagged: BTreeSet::new(),
        observations: Vec::new(),
    };
    for (k, d) in dmas.iter().enumerate() {
        if d.after.is_none() {
            w.bump(d.semaphore, u64::from(d.amount), true, Place::Desc(k));
        }
    }
    let n = engines.len();
    let mut next = vec![0usize; n];
    let mut gave_up: Vec<Option<(&'static str, u8)>> = vec![None; n];
    let mut satisfied = Vec::new();
    // DE-3: each step, the first engine (by index) whose next instruction can pass runs it.
    loop {
        let mut ran = false;
        for e in 0..n {
            if gave_up[e].is_some() {
                continue;
            }
            let Some(band) = engines[e].get(next[e]) else {
                continue;
            };
            if let Some(why) = gives_up(band) {
                gave_up[e] = Some(why);
                continue;
            }
            if !w.passes(band) {
                continue;
            }
            let here = Place::At(e, next[e]);
            match ask_of(band[0]) {
                Some(Ask::Count(_)) => {
                    satisfied.push((here, w.writer.get(&(false, band[1])).copied()))
                }
                Some(Ask::Flag { .. }) => {
                    satisfied.push((here, w.writer.get(&(true, band[1])).copied()))
                }
                _ => {}
            }
            if let Some(Ask::Flag { then: Some(up), .. }) = ask_of(band[0]) {
                w.flag(band[1], up, here);
            }
            let v = imm(band);
            match effect_of(band[2]) {
                Some(Effect::Flag(up)) => w.flag(band[3], up, here),
                Some(Effect::Plus(a)) => w.bump(band[3], amount(a, v), true, here),
                Some(Effect::Minus(a)) => w.bump(band[3], amount(a, v), false, here),
                Some(Effect::Store) => w.store(band[3], u64::from(v), here),
                _ => {}
            }
            for (k, d) in dmas.iter().enumerate() {
                if d.after == Some((e, next[e])) {
                    w.bump(d.semaphore, u64::from(d.amount), true, Place::Desc(k));
                }
            }
            next[e] += 1;
            ran = true;
            break;
        }
        if !ran {
            break;
        }
    }
    let endings: Vec<Ending> = (0..n)
        .map(|e| {
            if gave_up[e].is_some() {
                ("stopped", next[e])
            } else if next[e] >= engines[e].len() {
                ("finished", 0)
            } else {
                ("blocked", next[e])
            }
        })
        .collect();
    for (e, g) in gave_up.iter().enumerate() {
        if let Some((why, byte)) = g {
            w.observations
                .push(Observation::GaveUp(Place::At(e, next[e]), why, *byte));
        }
    }
    if gave_up.iter().all(Option::is_none) {
        judge(engines, dmas, &next, &endings, &mut w);
    }
    never_read(engines, dmas, &mut w.observations);
    let semaphores = (0..=255u8).map(|s| w.sem(s)).collect();
    Ok(Verdicts {
        observations: w.observations,
        endings,
        semaphores,
        satisfied,
    })
}

fn amount(a: Amount, v: u32) -> u64 {
    match a {
        Amount::One => 1,
        Amount::Immediate => u64::from(v),
    }
}

/// One counted update left on an engine: where, which counter, what it does.
#[derive(Clone, Copy)]
struct Left {
    place: usize,
    counter: Counter,
    kind: LeftKind,
}

#[derive(Clone, Copy)]
enum LeftKind {
    Up(u64),
    Down(u64),
    Write(u64),
    Set,
    Clear,
}

/// The ledger: every update left on engine `e` (its current instruction on), counted.
fn ledger(engines: &[Vec<[u8; 8]>], dmas: &[Descriptor], e: usize, from: usize) -> Vec<Left> {
    let mut out = Vec::new();
    for (i, band) in engines[e].iter().enumerate().skip(from) {
        if let Some(Ask::Flag { then: Some(up), .. }) = ask_of(band[0]) {
            let kind = if up { LeftKind::Set } else { LeftKind::Clear };
            out.push(Left {
                place: i,
                counter: (true, band[1]),
                kind,
            });
        }
        let v = imm(band);
        let kind = match effect_of(band[2]) {
            Some(Effect::Flag(true)) => Some((true, LeftKind::Set)),
            Some(Effect::Flag(false)) => Some((true, LeftKind::Clear)),
            Some(Effect::Plus(a)) => Some((false, LeftKind::Up(amount(a, v)))),
            Some(Effect::Minus(a)) => Some((false, LeftKind::Down(amount(a, v)))),
            Some(Effect::Store) => Some((false, LeftKind::Write(u64::from(v)))),
            _ => None,
        };
        if let Some((is_event, kind)) = kind {
            out.push(Left {
                place: i,
                counter: (is_event, band[3]),
                kind,
            });
        }
        for d in dmas {
            if d.after == Some((e, i)) {
                out.push(Left {
                    place: i,
                    counter: (false, d.semaphore),
                    kind: LeftKind::Up(u64::from(d.amount)),
                });
            }
        }
    }
    out
}

/// SPEC §11 DE-6 / DE-7.
fn judge(
    engines: &[Vec<[u8; 8]>],
    dmas: &[Descriptor],
    next: &[usize],
    endings: &[Ending],
    w: &mut World,
) {
    let blocked: Vec<usize> = (0..engines.len())
        .filter(|&e| endings[e].0 == "blocked")
        .collect();
    let ledgers: BTreeMap<usize, Vec<Left>> = blocked
        .iter()
        .map(|&e| (e, ledger(engines, dmas, e, next[e])))
        .collect();
    // The wait-for graph: engine → (helper engine, link).
    let mut graph: BTreeMap<usize, (usize, Link)> = BTreeMap::new();
    for &e in &blocked {
        let band = engines[e][next[e]];
        let (counter, ask) = match ask_of(band[0]) {
            Some(a @ Ask::Count(_)) => ((false, band[1]), a),
            Some(a @ Ask::Flag { .. }) => ((true, band[1]), a),
            _ => continue,
        };
        let others: Vec<(usize, &Left)> = ledgers
            .iter()
            .filter(|(f, _)| **f != e)
            .flat_map(|(f, l)| l.iter().map(move |x| (*f, x)))
            .filter(|(_, x)| x.counter == counter)
            .collect();
        let now = if counter.0 {
            u64::from(w.events_up.contains(&counter.1))
        } else {
            w.sem(counter.1)
        };
        let ok = match ask {
            Ask::Count(rel) => {
                let (mut up, mut down) = (0u64, 0u64);
                let (mut hi, mut lo) = (now, now);
                for (_, x) in &others {
                    match x.kind {
                        LeftKind::Up(a) => up = up.saturating_add(a),
                        LeftKind::Down(a) => down = down.saturating_add(a),
                        LeftKind::Write(v) => {
                            hi = hi.max(v);
                            lo = lo.min(v);
                        }
                        _ => {}
                    }
                }
                let (hi, lo, t) = (
                    hi.saturating_add(up),
                    lo.saturating_sub(down),
                    u64::from(imm(&band)),
                );
                match rel {
                    Rel::Equal => (lo..=hi).contains(&t),
                    Rel::Below => lo < t,
                    Rel::AtMost => lo <= t,
                    Rel::Above => hi > t,
                    Rel::AtLeast => hi >= t,
                }
            }
            Ask::Flag { up, .. } => others.iter().any(|(_, x)| {
                matches!(
                    (up, x.kind),
                    (true, LeftKind::Set) | (false, LeftKind::Clear)
                )
            }),
            _ => true,
        };
        let last = w.writer.get(&counter).copied();
        if !ok {
            let someone_sets = engines.iter().enumerate().any(|(f, s)| {
                f != e
                    && s.iter().any(|b| {
                        matches!(effect_of(b[2]), Some(Effect::Flag(true))) && b[3] == counter.1
                            || matches!(
                                ask_of(b[0]),
                                Some(Ask::Flag {
                                    then: Some(true),
                                    ..
                                })
                            ) && b[1] == counter.1
                    })
            });
            if matches!(ask, Ask::Flag { up: true, .. }) && !someone_sets {
                w.observations.push(Observation::NobodySets(
                    Place::At(e, next[e]),
                    counter.1,
                    band[0],
                    last,
                ));
            } else {
                w.observations.push(Observation::NeverSatisfied(
                    Place::At(e, next[e]),
                    counter,
                    band[0],
                    imm(&band),
                    now,
                    last,
                ));
            }
            continue;
        }
        // The helper: the lowest other engine with an update of the counter, at its first one.
        if let Some(f) = others.iter().map(|(f, _)| *f).min() {
            let first = others
                .iter()
                .filter(|(g, _)| *g == f)
                .map(|(_, x)| x.place)
                .min()
                .unwrap_or(0);
            graph.insert(
                e,
                (
                    f,
                    (
                        Place::At(e, next[e]),
                        counter,
                        band[0],
                        imm(&band),
                        now,
                        Place::At(f, first),
                    ),
                ),
            );
        }
    }
    // Cycles: the engines whose orbit returns to them; one cycle per orbit, from its lowest.
    let mut cycles: BTreeMap<usize, Vec<Link>> = BTreeMap::new();
    for &start in graph.keys() {
        let mut orbit = vec![start];
        let mut at = start;
        let closes = loop {
            match graph.get(&at) {
                Some((f, _)) if *f == start => break true,
                Some((f, _)) if orbit.len() <= graph.len() => {
                    orbit.push(*f);
                    at = *f;
                }
                _ => break false,
            }
        };
        if closes {
            let low = orbit.iter().copied().min().unwrap_or(start);
            if low == start {
                cycles.insert(start, orbit.iter().map(|x| graph[x].1).collect());
            }
        }
    }
    for (_, c) in cycles {
        w.observations.push(Observation::Cycle(c));
    }
}

/// SPEC §11 DE-9.
fn never_read(engines: &[Vec<[u8; 8]>], dmas: &[Descriptor], out: &mut Vec<Observation>) {
    let mut read: BTreeSet<Counter> = BTreeSet::new();
    let mut first: BTreeMap<Counter, Place> = BTreeMap::new();
    for (e, s) in engines.iter().enumerate() {
        for (i, b) in s.iter().enumerate() {
            match ask_of(b[0]) {
                Some(Ask::Count(_)) | Some(Ask::Register) => {
                    read.insert((false, b[1]));
                }
                Some(Ask::Flag { .. }) => {
                    read.insert((true, b[1]));
                }
                None => {
                    read.insert((false, b[1]));
                    read.insert((true, b[1]));
                }
                Some(Ask::Nothing) => {}
            }
            let written = match effect_of(b[2]) {
                Some(Effect::Flag(_)) => Some((true, b[3])),
                Some(Effect::Plus(_) | Effect::Minus(_) | Effect::Store | Effect::Register) => {
                    Some((false, b[3]))
                }
                _ => None,
            };
            if let Some(c) = written {
                first.entry(c).or_insert(Place::At(e, i));
            }
        }
    }
    for (k, d) in dmas.iter().enumerate() {
        first.entry((false, d.semaphore)).or_insert(Place::Desc(k));
    }
    for (c, p) in first {
        if !read.contains(&c) {
            out.push(Observation::NeverRead(p, c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The transcription against the FACTS §2 text as SPEC §6.5 quotes it: every member named
    /// there has a row with its byte, and every row's meaning is what its name says.
    #[test]
    fn the_rules_are_the_facts_text() {
        let spec = include_str!("../../SPEC.md");
        let section = spec
            .split("### 6.5")
            .nth(1)
            .and_then(|s| s.split("Compiler wire tables").next())
            .unwrap_or("");
        let text = section.replace('\n', " ");
        for (b, name, ask) in WAIT_RULES {
            let hex = format!("0x{b:02X}");
            // SPEC §6.5 abbreviates later members of a family to their tail (`_LT_IMM 0x02`).
            let tail = name
                .trim_start_matches("WAIT_FOR_SEM")
                .trim_start_matches("WAIT_FOR_EVT");
            assert!(
                text.contains(&format!("{name} {hex}")) || text.contains(&format!("{tail} {hex}")),
                "{name} {hex} not in SPEC §6.5"
            );
            let want = match *name {
                "NONE" => Ask::Nothing,
                n if n.ends_with("_REG") => Ask::Register,
                n if n.contains("_EQ_") => Ask::Count(Rel::Equal),
                n if n.contains("_LT_") => Ask::Count(Rel::Below),
                n if n.contains("_LE_") => Ask::Count(Rel::AtMost),
                n if n.contains("_GT_") => Ask::Count(Rel::Above),
                n if n.contains("_GE_") => Ask::Count(Rel::AtLeast),
                n if n.ends_with("SET_THEN_CLEAR") => Ask::Flag {
                    up: true,
                    then: Some(false),
                },
                n if n.ends_with("CLEAR_THEN_SET") => Ask::Flag {
                    up: false,
                    then: Some(true),
                },
                n if n.ends_with("EVT_SET") => Ask::Flag {
                    up: true,
                    then: None,
                },
                n if n.ends_with("EVT_CLEAR") => Ask::Flag {
                    up: false,
                    then: None,
                },
                _ => panic!("{name}"),
            };
            assert_eq!(*ask, want, "{name}");
        }
        assert_eq!(WAIT_RULES.len(), 15);
        for (b, name, effect) in UPDATE_RULES {
            let hex = format!("0x{b:02X}");
            let read = name.replace("_COMPLETE", "_READ");
            assert!(
                text.contains(&format!("{name} {hex}"))
                    || (name.ends_with("_COMPLETE")
                        && text.contains(&format!("{read} 0x{:02X}", b - 0x10))),
                "{name} {hex} not in SPEC §6.5"
            );
            let want = match name.trim_end_matches("_READ").trim_end_matches("_COMPLETE") {
                "NONE" => Effect::Nothing,
                "EVT_SET" => Effect::Flag(true),
                "EVT_CLR" => Effect::Flag(false),
                "SEM_INC" => Effect::Plus(Amount::One),
                "SEM_DEC" => Effect::Minus(Amount::One),
                "SEM_ADD_IMM" => Effect::Plus(Amount::Immediate),
                "SEM_SUB_IMM" => Effect::Minus(Amount::Immediate),
                "SEM_WR_IMM" => Effect::Store,
                "SEM_WR_REG" => Effect::Register,
                other => panic!("{other}"),
            };
            assert_eq!(*effect, want, "{name}");
        }
        assert_eq!(UPDATE_RULES.len(), 16);
    }

    fn band(w: u8, wi: u8, u: u8, ui: u8, v: u32) -> [u8; 8] {
        let b = v.to_le_bytes();
        [w, wi, u, ui, b[0], b[1], b[2], b[3]]
    }

    #[test]
    fn a_crossed_pair_is_a_cycle_and_a_dma_satisfies_a_wait() {
        let e0 = vec![band(5, 0, 0, 0, 1), band(0, 0, 0x13, 1, 0)];
        let e1 = vec![band(5, 1, 0, 0, 1), band(0, 0, 0x13, 0, 0)];
        let v = engine_sync(&[e0, e1], &[]).expect("ok");
        assert_eq!(
            v.observations,
            [Observation::Cycle(vec![
                (Place::At(0, 0), (false, 0), 5, 1, 0, Place::At(1, 1)),
                (Place::At(1, 0), (false, 1), 5, 1, 0, Place::At(0, 1)),
            ])]
        );
        let dma = Descriptor {
            semaphore: 9,
            amount: 16,
            after: None,
        };
        let v = engine_sync(&[vec![band(5, 9, 0, 0, 16)]], &[dma]).expect("ok");
        assert_eq!(v.observations, []);
        assert_eq!(v.endings, [("finished", 0)]);
    }
}
