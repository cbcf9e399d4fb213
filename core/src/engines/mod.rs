//! The engines of one subgraph, run against their semaphores and events: a model that finds
//! deadlocks and waits nothing can satisfy (SPEC §11; decisions **DE-n** there).
//!
//! Each engine runs its own stream in order (FACTS §10 D4–D6: engines are ordered only
//! through semaphores). Each instruction carries one events band (FACTS §2 \[H\]): a wait on
//! `semaphore[wait_idx]` / `event[wait_idx]` and one update of `update_idx`, with the u32
//! `semaphore_value` the wait threshold and the update immediate. DMA descriptors increment a
//! semaphore when they complete (FACTS §10 D1, by `num_queues` for a multi-queue set): the
//! caller states them as [`DmaIncrement`]s. Initial values are 0 (DE-1).
//!
//! [`analyze`] steps a simulation (DE-3: the lowest-indexed engine that can run its next
//! instruction runs it) with the engines blocked on a resource queued per resource, so the time
//! is linear in the total number of instructions (times at most [`MAX_ENGINES`] waiters woken
//! per update). When no engine can run, each blocked wait is judged against every update that
//! remains (DE-6) and the wait-for graph of the rest gives the deadlock cycles (DE-7).
//!
//! Total: no input panics; memory is the input's plus a fixed table per resource.

mod model;
mod steps;

pub use model::analyze;
pub use steps::{steps_of_stream, Extracted, StepReader};

use crate::events;
use std::fmt;

/// Semaphores per core (FACTS §2 \[S\] \[H\]): the 8-bit index covers them exactly.
pub const NUM_SEMAPHORES: usize = 256;
/// Events per core (FACTS §2 \[S\] \[H\]).
pub const NUM_EVENTS: usize = 256;
/// Most engines of one subgraph the model runs (DE-2: one bit each in the ready set).
pub const MAX_ENGINES: usize = 64;

/// One instruction's events band, bytes `[0x04..0x0C]` (FACTS §2 \[H\]), the only part of an
/// instruction the model reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Step {
    /// +0x04 `wait_mode`.
    pub wait_mode: u8,
    /// +0x05 `wait_idx`.
    pub wait_idx: u8,
    /// +0x06 `update_mode`.
    pub update_mode: u8,
    /// +0x07 `update_idx`.
    pub update_idx: u8,
    /// +0x08 `semaphore_value`: the wait threshold and the update immediate.
    pub value: u32,
}

impl Step {
    /// The step of an events band as 8 bytes (bundle bytes `[0x04..0x0C]`).
    pub fn from_band(b: [u8; 8]) -> Step {
        Step {
            wait_mode: b[0],
            wait_idx: b[1],
            update_mode: b[2],
            update_idx: b[3],
            value: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    /// The 8 band bytes of this step.
    pub fn to_band(self) -> [u8; 8] {
        let v = self.value.to_le_bytes();
        [
            self.wait_mode,
            self.wait_idx,
            self.update_mode,
            self.update_idx,
            v[0],
            v[1],
            v[2],
            v[3],
        ]
    }
}

/// A DMA descriptor's semaphore increment (FACTS §10 D1: `semaphore` is incremented when the
/// descriptor completes, by `num_queues` for a multi-queue set).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DmaIncrement {
    /// The semaphore index.
    pub sem: u8,
    /// The increment (`num_queues`, or 1).
    pub by: u32,
    /// The instruction whose execution starts the descriptor, `(engine, index)`; `None`: it
    /// completes before any engine runs (DE-5).
    pub trigger: Option<(u16, u32)>,
}

/// Where something happens: an instruction of an engine, or a DMA descriptor of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Loc {
    /// Instruction `index` (128-byte records count once) of engine `engine`.
    Instr {
        /// Engine index in the subgraph.
        engine: u16,
        /// Instruction index in its stream.
        index: u32,
    },
    /// DMA increment `index` of the caller's list.
    Dma {
        /// Index into the DMA list.
        index: u32,
    },
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loc::Instr { engine, index } => write!(f, "engine {engine} #{index}"),
            Loc::Dma { index } => write!(f, "dma {index}"),
        }
    }
}

/// A semaphore or an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    /// `semaphore[i]`.
    Semaphore(u8),
    /// `event[i]`.
    Event(u8),
}

impl Resource {
    /// Dense index: semaphores 0..256, events 256..512.
    pub fn slot(self) -> usize {
        match self {
            Resource::Semaphore(i) => usize::from(i),
            Resource::Event(i) => NUM_SEMAPHORES + usize::from(i),
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resource::Semaphore(i) => write!(f, "S[{i}]"),
            Resource::Event(i) => write!(f, "E[{i}]"),
        }
    }
}

/// One edge of a deadlock's cycle: `waiter` waits on `resource` (its `mode` and `threshold`,
/// the resource's `value` when everything stopped), and `helper` is the first remaining
/// update of that resource on the next engine of the cycle (DE-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WaitEdge {
    /// The blocked instruction.
    pub waiter: Loc,
    /// What it waits on.
    pub resource: Resource,
    /// Its wait-mode byte.
    pub mode: u8,
    /// Its `semaphore_value` (the threshold of a semaphore wait).
    pub threshold: u32,
    /// The resource's value at the end (an event: 0 clear, 1 set).
    pub value: u32,
    /// The first remaining update of the resource on the next engine, itself blocked.
    pub helper: Loc,
}

named_error! {
    /// The reason's snake_case name.
    fn name;
    /// Why the model stops following an engine (DE-8: never a guess).
    #[non_exhaustive]
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum StopReason {
        /// A `WAIT_FOR_SEM_*_REG` wait: its threshold is in a register.
        RegisterWait {
            /// The wait-mode byte.
            mode: u8,
        } => "register_wait",
        /// A `*_REG_*` update: its value is in a register.
        RegisterUpdate {
            /// The update-mode byte.
            mode: u8,
        } => "register_update",
        /// A wait-mode byte that is no known member (FACTS §2).
        UnknownWaitMode {
            /// The byte.
            mode: u8,
        } => "unknown_wait_mode",
        /// An update-mode byte that is no known member (FACTS §2).
        UnknownUpdateMode {
            /// The byte.
            mode: u8,
        } => "unknown_update_mode",
    }
}

named_error! {
    /// The finding's kind, its snake_case name.
    fn kind;
    /// What the model found (SPEC §11). Every finding is advisory: the model is one reading of
    /// the band; `unconsumed_update` is a warning.
    #[non_exhaustive]
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum Finding {
        /// Every unfinished engine is blocked and these waits form a cycle (DE-7).
        Deadlock {
            /// The cycle, starting at its lowest engine.
            cycle: Vec<WaitEdge>,
        } => "deadlock",
        /// No remaining update of another engine or DMA can satisfy this wait (DE-6).
        UnsatisfiableWait {
            /// The blocked instruction.
            at: Loc,
            /// What it waits on.
            resource: Resource,
            /// Its wait-mode byte.
            mode: u8,
            /// Its threshold (`semaphore_value`).
            threshold: u32,
            /// The resource's final value (an event: 0 or 1).
            value: u32,
            /// The last update of the resource, if any.
            last_update: Option<Loc>,
        } => "unsatisfiable_wait",
        /// A wait for an event that no other engine's instruction ever sets (DE-6).
        UnsetEvent {
            /// The blocked instruction.
            at: Loc,
            /// The event.
            event: u8,
            /// Its wait-mode byte.
            mode: u8,
            /// The last update of the event (a clear), if any.
            last_update: Option<Loc>,
        } => "unset_event",
        /// A decrement or subtraction below 0; the value stays 0 (DE-4).
        SemaphoreUnderflow {
            /// The update.
            at: Loc,
            /// The semaphore.
            sem: u8,
            /// Its value before.
            value: u32,
            /// The amount taken.
            delta: u32,
            /// The update before it, if any.
            last_update: Option<Loc>,
        } => "semaphore_underflow",
        /// An increment or addition beyond `u32::MAX`; the value stays `u32::MAX` (DE-4).
        SemaphoreOverflow {
            /// The update.
            at: Loc,
            /// The semaphore.
            sem: u8,
            /// Its value before.
            value: u32,
            /// The amount added.
            delta: u32,
            /// The update before it, if any.
            last_update: Option<Loc>,
        } => "semaphore_overflow",
        /// Warning: a resource updated that no wait of the subgraph reads (DE-9).
        UnconsumedUpdate {
            /// Its first update.
            at: Loc,
            /// The resource.
            resource: Resource,
        } => "unconsumed_update",
        /// The model stopped following an engine here (DE-8).
        AnalysisStopped {
            /// The instruction.
            at: Loc,
            /// Why.
            reason: StopReason,
        } => "analysis_stopped",
    }
}

impl Finding {
    /// The primary location: the waiting, updating or stopping instruction (a deadlock: its
    /// cycle's first waiter).
    pub fn at(&self) -> Option<Loc> {
        match self {
            Finding::Deadlock { cycle } => cycle.first().map(|e| e.waiter),
            Finding::UnsatisfiableWait { at, .. }
            | Finding::UnsetEvent { at, .. }
            | Finding::SemaphoreUnderflow { at, .. }
            | Finding::SemaphoreOverflow { at, .. }
            | Finding::UnconsumedUpdate { at, .. }
            | Finding::AnalysisStopped { at, .. } => Some(*at),
        }
    }

    /// `true` for the warning `unconsumed_update` and the note `analysis_stopped`.
    pub fn is_warning(&self) -> bool {
        matches!(
            self,
            Finding::UnconsumedUpdate { .. } | Finding::AnalysisStopped { .. }
        )
    }
}

/// Where an engine's run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// Every instruction ran.
    Finished,
    /// Blocked at this instruction's wait.
    Blocked {
        /// The instruction.
        index: u32,
    },
    /// The model stopped following it at this instruction (an `analysis_stopped` finding).
    Stopped {
        /// The instruction.
        index: u32,
    },
}

/// A wait that passed, joined to the update that satisfied it (the last update of its
/// resource before it passed; `None`: the initial value did).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Link {
    /// The waiting instruction.
    pub wait: Loc,
    /// The update that satisfied it.
    pub by: Option<Loc>,
}

/// Options of [`analyze`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Record a [`Link`] for every wait that passed (memory grows with the waits).
    pub links: bool,
}

/// What [`analyze`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The findings, in the order of SPEC §11 (DE-10).
    pub findings: Vec<Finding>,
    /// Per engine, where its run ended.
    pub ends: Vec<End>,
    /// Final semaphore values.
    pub semaphores: Vec<u32>,
    /// The passed waits with what satisfied them, in execution order (with [`Options::links`]).
    pub links: Vec<Link>,
    /// Instructions executed.
    pub executed: u64,
}

named_error! {
    /// The error's snake_case name.
    fn name;
    /// An input the model refuses.
    #[non_exhaustive]
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum EngineSyncError {
        /// More engines than [`MAX_ENGINES`].
        TooManyEngines {
            /// Engines given.
            found: usize,
            /// The limit.
            limit: usize,
        } => "too_many_engines",
        /// A DMA increment's trigger names no instruction.
        BadTrigger {
            /// Index into the DMA list.
            dma: usize,
            /// The engine named.
            engine: u16,
            /// The instruction named.
            index: u32,
        } => "bad_trigger",
    }
}

impl fmt::Display for EngineSyncError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {self:?}", self.name())
    }
}

impl std::error::Error for EngineSyncError {}

/// A semaphore comparison of a wait (FACTS §2 `WAIT_FOR_SEM_{EQ,LT,LE,GT,GE}_IMM`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    #[inline(always)]
    pub(crate) fn holds(self, v: u32, t: u32) -> bool {
        match self {
            Cmp::Eq => v == t,
            Cmp::Lt => v < t,
            Cmp::Le => v <= t,
            Cmp::Gt => v > t,
            Cmp::Ge => v >= t,
        }
    }
}

/// What a wait-mode byte means to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WaitKind {
    None,
    Sem(Cmp),
    /// Wait until the event is `set` (then, with `flip`, write `!set`: SET_THEN_CLEAR,
    /// CLEAR_THEN_SET).
    Evt {
        set: bool,
        flip: bool,
    },
    Stop(StopReason),
}

/// What an update-mode byte means to the model (`_READ` and `_COMPLETE` alike, DE-3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UpdateKind {
    None,
    EvtSet,
    EvtClr,
    Inc,
    Dec,
    Add,
    Sub,
    Write,
    Stop(StopReason),
}

/// [`wait_kind`] and [`update_kind`] of every byte, built once (the model's hot path).
pub(crate) fn kind_tables() -> &'static ([WaitKind; 256], [UpdateKind; 256]) {
    static TABLES: std::sync::OnceLock<([WaitKind; 256], [UpdateKind; 256])> =
        std::sync::OnceLock::new();
    TABLES.get_or_init(|| {
        let mut w = [WaitKind::None; 256];
        let mut u = [UpdateKind::None; 256];
        for b in 0..=255u8 {
            w[usize::from(b)] = wait_kind_by_name(b);
            u[usize::from(b)] = update_kind_by_name(b);
        }
        (w, u)
    })
}

/// The meaning of a wait-mode byte (FACTS §2).
#[inline(always)]
pub(crate) fn wait_kind(b: u8) -> WaitKind {
    kind_tables().0[usize::from(b)]
}

/// The meaning of an update-mode byte (FACTS §2).
#[inline(always)]
pub(crate) fn update_kind(b: u8) -> UpdateKind {
    kind_tables().1[usize::from(b)]
}

/// The meaning of a wait-mode byte, read from its header name in [`events::WAIT_MODES`]
/// (FACTS §2: `WAIT_FOR_SEM_<cmp>_IMM`, `_REG` = threshold in a register).
fn wait_kind_by_name(b: u8) -> WaitKind {
    let Some(name) = events::wait_mode_name(b) else {
        return WaitKind::Stop(StopReason::UnknownWaitMode { mode: b });
    };
    if name == "NONE" {
        return WaitKind::None;
    }
    if name.ends_with("_REG") {
        return WaitKind::Stop(StopReason::RegisterWait { mode: b });
    }
    let cmp = |c: &str| match c {
        "EQ" => Some(Cmp::Eq),
        "LT" => Some(Cmp::Lt),
        "LE" => Some(Cmp::Le),
        "GT" => Some(Cmp::Gt),
        "GE" => Some(Cmp::Ge),
        _ => None,
    };
    let evt = |set, flip| Some(WaitKind::Evt { set, flip });
    let kind = match name.strip_prefix("WAIT_FOR_") {
        Some("EVT_SET") => evt(true, false),
        Some("EVT_SET_THEN_CLEAR") => evt(true, true),
        Some("EVT_CLEAR") => evt(false, false),
        Some("EVT_CLEAR_THEN_SET") => evt(false, true),
        Some(s) => s
            .strip_prefix("SEM_")
            .and_then(|s| s.strip_suffix("_IMM"))
            .and_then(cmp)
            .map(WaitKind::Sem),
        None => None,
    };
    kind.unwrap_or(WaitKind::Stop(StopReason::UnknownWaitMode { mode: b }))
}

/// The meaning of an update-mode byte, read from its header name in [`events::UPDATE_MODES`]
/// (FACTS §2: `<op>_READ` / `<op>_COMPLETE`; `_REG` = value in a register).
fn update_kind_by_name(b: u8) -> UpdateKind {
    let Some(name) = events::update_mode_name(b) else {
        return UpdateKind::Stop(StopReason::UnknownUpdateMode { mode: b });
    };
    if name == "NONE" {
        return UpdateKind::None;
    }
    let op = name
        .strip_suffix("_READ")
        .or_else(|| name.strip_suffix("_COMPLETE"));
    match op {
        Some(op) if op.ends_with("_REG") => {
            UpdateKind::Stop(StopReason::RegisterUpdate { mode: b })
        }
        Some("EVT_SET") => UpdateKind::EvtSet,
        Some("EVT_CLR") => UpdateKind::EvtClr,
        Some("SEM_INC") => UpdateKind::Inc,
        Some("SEM_DEC") => UpdateKind::Dec,
        Some("SEM_ADD_IMM") => UpdateKind::Add,
        Some("SEM_SUB_IMM") => UpdateKind::Sub,
        Some("SEM_WR_IMM") => UpdateKind::Write,
        _ => UpdateKind::Stop(StopReason::UnknownUpdateMode { mode: b }),
    }
}

#[cfg(test)]
mod tests;
