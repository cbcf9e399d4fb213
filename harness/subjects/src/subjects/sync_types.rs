//! The vocabulary of the SPEC §8 semaphore operations: a program in the model's types, plans
//! in the simulator's, so neither side converts a plan twice.

use std::collections::BTreeMap;

pub use tpb_core::sync::Program as SyncProgram;
pub use tpb_oracle::sim::{
    PlanEntry as SyncEntry, PlanUpdate as SyncUpdate, PlanWait as SyncWait,
    Violation as SimViolation,
};

/// Final semaphore values: `(remote core, id) → value` (nonzero ones).
pub type Finals = BTreeMap<(Option<u8>, u8), u64>;

/// A custom-op flow of a program: the instructions whose bands are stamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncFlow {
    pub dma_in: u16,
    /// The 0x85 header carrier, on the host.
    pub custom_op: u16,
    pub result_dma: u16,
    pub consumers: Vec<u16>,
}

/// The bands a planner stamped for one flow (SPEC §8 DS-13 / DS-14), or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowStamps {
    pub header: Result<[u8; 64], String>,
    pub consumers: Vec<Result<[u8; 64], String>>,
}

/// A program rejected by the allocation: its SPEC §8 error class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRejected {
    pub class: &'static str,
    pub message: String,
}

/// A program accepted by the allocation; `plan` and `stamps` are a planner's (a checker's:
/// `None`, empty), `ticket` the subject's handle on it for `sync_simulate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncPlanned {
    /// The semaphore id of each allocation request.
    pub ids: Vec<u8>,
    pub finals: Finals,
    /// One entry per instruction.
    pub plan: Option<Vec<SyncEntry>>,
    pub stamps: Vec<FlowStamps>,
    pub ticket: u64,
}

/// A clean simulation: judge steps taken, final values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRun {
    pub steps: usize,
    pub finals: Finals,
}

/// What the simulator observed going wrong, or why it never vetted the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncViolation {
    Run(SimViolation),
    NotVetted(String),
}

impl SyncViolation {
    /// The violation's kind (signature keys).
    pub fn kind(&self) -> &'static str {
        match self {
            SyncViolation::Run(v) => match v {
                SimViolation::PlanLength { .. } => "PlanLength",
                SimViolation::PlanShape(_) => "PlanShape",
                SimViolation::EarlyStart { .. } => "EarlyStart",
                SimViolation::HappensBefore { .. } => "HappensBefore",
                SimViolation::Deadlock(_) => "Deadlock",
                SimViolation::FinalValue { .. } => "FinalValue",
            },
            SyncViolation::NotVetted(_) => "NotVetted",
        }
    }
}

impl std::fmt::Display for SyncViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyncViolation::Run(v) => write!(f, "{v:?}"),
            SyncViolation::NotVetted(r) => write!(f, "not a vetted program: {r}"),
        }
    }
}

/// One bundle's events band as a checker reads it (SPEC §6.5, §8 DS-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandReading {
    pub wait_mode: u8,
    pub wait_idx: u8,
    pub update_mode: u8,
    pub update_idx: u8,
    /// The wait and update it stands for, or the offset of a band byte the
    /// pass must stamp and did not.
    pub sync: Result<(Option<SyncWait>, Option<SyncUpdate>), usize>,
}
