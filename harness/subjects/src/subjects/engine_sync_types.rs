//! The vocabulary of [`super::Reference::engine_sync`] (SPEC §11).
//!
//! The `engine_sync` target's byte form ([`EngineProgram::from_bytes`], total: every byte string
//! is a program): byte 0 % 9 = engines; per engine one byte % 33 = its steps, then 8 bytes per
//! step (the band, bundle bytes `[0x04..0x0C]`); then one byte % 9 = DMA increments, 4 bytes
//! each: semaphore, amount, trigger engine (`% (engines + 1)`, `engines` = none), trigger
//! instruction (`% steps`; an engine without steps: none). A missing byte ends the program
//! there.

/// The byte form's most engines, steps per engine and DMA increments.
pub const FORM_ENGINES: usize = 8;
pub const FORM_STEPS: usize = 32;
pub const FORM_DMAS: usize = 8;

/// A DMA increment (FACTS §10 D1), a location, a finding and one reading of a subgraph.
pub use tpb_core::engines::{
    DmaIncrement as DmaRow, End, Finding as EngineFinding, Link, Loc as SyncSite,
    Report as EngineSyncOutcome, Resource, StopReason, WaitEdge,
};

/// A subgraph: per engine its bands, and the DMA increments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineProgram {
    /// `engines[e][i]` = the events band of engine `e`'s instruction `i`.
    pub engines: Vec<Vec<[u8; 8]>>,
    pub dma: Vec<DmaRow>,
}

impl EngineProgram {
    pub fn from_bytes(bytes: &[u8]) -> EngineProgram {
        let mut it = bytes.iter().copied();
        let mut p = EngineProgram::default();
        let Some(n) = it.next() else {
            return p;
        };
        'engines: for _ in 0..usize::from(n) % (FORM_ENGINES + 1) {
            let Some(k) = it.next() else {
                break;
            };
            let mut steps = Vec::new();
            for _ in 0..usize::from(k) % (FORM_STEPS + 1) {
                let mut band = [0u8; 8];
                for b in &mut band {
                    match it.next() {
                        Some(x) => *b = x,
                        None => {
                            p.engines.push(steps);
                            break 'engines;
                        }
                    }
                }
                steps.push(band);
            }
            p.engines.push(steps);
        }
        let Some(d) = it.next() else {
            return p;
        };
        for _ in 0..usize::from(d) % (FORM_DMAS + 1) {
            let (Some(sem), Some(by), Some(e), Some(i)) =
                (it.next(), it.next(), it.next(), it.next())
            else {
                break;
            };
            let e = usize::from(e) % (p.engines.len() + 1);
            let trigger = p
                .engines
                .get(e)
                .filter(|s| !s.is_empty())
                .map(|s| (e as u16, u32::from(i) % s.len() as u32));
            p.dma.push(DmaRow {
                sem,
                by: u32::from(by),
                trigger,
            });
        }
        p
    }

    /// The inverse of [`EngineProgram::from_bytes`] within the form's limits.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.engines.len() as u8];
        for steps in &self.engines {
            out.push(steps.len() as u8);
            for b in steps {
                out.extend_from_slice(b);
            }
        }
        out.push(self.dma.len() as u8);
        for d in &self.dma {
            let (e, i) = match d.trigger {
                Some((e, i)) => (e as u8, i as u8),
                None => (self.engines.len() as u8, 0),
            };
            out.extend_from_slice(&[d.sem, d.by as u8, e, i]);
        }
        out
    }

    pub fn instructions(&self) -> usize {
        self.engines.iter().map(Vec::len).sum()
    }
}

/// The update a finding last saw of its resource (a deadlock's: in its edges).
pub fn last_update(f: &EngineFinding) -> Option<SyncSite> {
    use EngineFinding as F;
    match f {
        F::UnsatisfiableWait { last_update, .. }
        | F::UnsetEvent { last_update, .. }
        | F::SemaphoreUnderflow { last_update, .. }
        | F::SemaphoreOverflow { last_update, .. } => *last_update,
        _ => None,
    }
}

/// The resource a finding is about (a deadlock's: in its edges).
pub fn resource(f: &EngineFinding) -> Option<Resource> {
    use EngineFinding as F;
    match *f {
        F::UnsatisfiableWait { resource, .. } | F::UnconsumedUpdate { resource, .. } => {
            Some(resource)
        }
        F::UnsetEvent { event, .. } => Some(Resource::Event(event)),
        F::SemaphoreUnderflow { sem, .. } | F::SemaphoreOverflow { sem, .. } => {
            Some(Resource::Semaphore(sem))
        }
        _ => None,
    }
}

/// The mode byte a stop is about.
pub fn stop_mode(r: &StopReason) -> u8 {
    match *r {
        StopReason::RegisterWait { mode }
        | StopReason::RegisterUpdate { mode }
        | StopReason::UnknownWaitMode { mode }
        | StopReason::UnknownUpdateMode { mode } => mode,
        _ => 0,
    }
}

/// The outcome (core's [`EngineSyncOutcome`] with `executed` 0: not part of the answer), or
/// the input error's name (SPEC §11 DE-2).
pub type EngineSyncAnswer = Result<EngineSyncOutcome, &'static str>;
