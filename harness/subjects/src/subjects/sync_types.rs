//! The vocabulary of the SPEC §8 semaphore operations of [`super::Subject`]
//! (`sync_plan`, `sync_simulate`, `sync_band`). A program is in the model's
//! types (`tpb_core::sync::Program`); plans are in the simulator's
//! (`tpb_oracle::sim::PlanEntry`), so neither side converts a plan twice.

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
    /// The custom op (0x85 header carrier, on the host).
    pub custom_op: u16,
    pub result_dma: u16,
    pub consumers: Vec<u16>,
}

/// The bands a planner stamped for one flow (SPEC §8 DS-13 / DS-14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowStamps {
    /// The custom-op header (0x85), or why it could not be stamped.
    pub header: Result<[u8; 64], String>,
    /// Each consumer's bundle, in flow order, or why it could not be stamped.
    pub consumers: Vec<Result<[u8; 64], String>>,
}

/// A program rejected by the allocation (SPEC §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRejected {
    /// The SPEC §8 error class.
    pub class: &'static str,
    pub message: String,
}

/// A program accepted by the allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncPlanned {
    /// The semaphore id of each allocation request.
    pub ids: Vec<u8>,
    pub finals: Finals,
    /// The plan, one entry per instruction (a planner; a checker answers `None`).
    pub plan: Option<Vec<SyncEntry>>,
    /// The stamped bands of the flows asked about (a planner; else empty).
    pub stamps: Vec<FlowStamps>,
    /// The subject's handle on this vetted program, for `sync_simulate`.
    pub ticket: u64,
}

/// A clean simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncRun {
    /// Judge steps taken.
    pub steps: usize,
    /// The final semaphore values.
    pub finals: Finals,
}

/// Why a simulation failed: what the simulator observed going wrong, or a program it never
/// vetted (its reason).
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
    /// Wait semaphore index.
    pub wait_idx: u8,
    pub update_mode: u8,
    /// Update semaphore index.
    pub update_idx: u8,
    /// The wait and update it stands for, or the offset of a band byte the
    /// pass must stamp and did not.
    pub sync: Result<(Option<SyncWait>, Option<SyncUpdate>), usize>,
}
