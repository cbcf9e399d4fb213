//! The finite semaphore pool and the running-value map of the `alloc_semaphores` model
//! (S000 §"Semaphore id allocation", S000 §sync "incrementSemaphore"; SPEC §8).

use super::{AllocFrom, SemId, SyncError, MAX_NUM_SEMAPHORES};
use std::collections::BTreeMap;

/// The finite semaphore pool (S000 §"Semaphore id allocation", `allocateSemaphore` 0x1121480).
///
/// DS-11: the bottom counter starts at 0 and the top at `NumSemaphores − 1`; an allocation first
/// checks `bottom < top < NumSemaphores` (`:256`) and then hands out `bottom++` or `top--`. So
/// at most `NumSemaphores − 1` ids are handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SemaphorePool {
    bottom: u16,
    top: u16,
    num: u16,
}

impl SemaphorePool {
    /// A pool of `num` ids; `num > 256` is `LimitExceeded` (ids are one byte, F§2).
    pub fn new(num: u16) -> Result<Self, SyncError> {
        if num > MAX_NUM_SEMAPHORES {
            return Err(SyncError::LimitExceeded {
                what: "num_semaphores",
                found: usize::from(num),
                limit: usize::from(MAX_NUM_SEMAPHORES),
            });
        }
        Ok(SemaphorePool {
            bottom: 0,
            top: num.saturating_sub(1),
            num,
        })
    }

    /// `allocateSemaphore(fromTop)`: a fresh id, or `PoolExhausted` (alloc_semaphores.cpp:256).
    pub fn allocate(&mut self, from: AllocFrom) -> Result<SemId, SyncError> {
        if !(self.bottom < self.top && self.top < self.num) {
            return Err(SyncError::PoolExhausted {
                bottom: self.bottom,
                top: self.top,
                num: self.num,
            });
        }
        let id = match from {
            AllocFrom::Bottom => {
                let id = self.bottom;
                self.bottom += 1;
                id
            }
            AllocFrom::Top => {
                let id = self.top;
                self.top -= 1;
                id
            }
        };
        // top < num ≤ 256, so every id fits a byte.
        SemId::try_from(id).map_err(|_| SyncError::PoolExhausted {
            bottom: self.bottom,
            top: self.top,
            num: self.num,
        })
    }
}

/// The semaphore a value lives in: the local file, or a remote core's (DS-12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SemKey {
    /// `None` = local; `Some(c)` = core `c`'s semaphore (a remote Update's `targetCore`).
    pub core: Option<u8>,
    /// The id.
    pub sem: SemId,
}

/// The running-value map `semId → expected value` at `AllocSemaphores+0x168` (S000 §sync
/// "incrementSemaphore — the running-value map").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SemaphoreValues {
    values: BTreeMap<SemKey, u32>,
}

impl SemaphoreValues {
    /// `incrementSemaphore(I, semId, delta)`: the new running value, or `Overflow` (:207).
    pub fn increment(&mut self, key: SemKey, delta: u32) -> Result<u32, SyncError> {
        let value = self.values.get(&key).copied().unwrap_or(0);
        let new = value.checked_add(delta).ok_or(SyncError::Overflow {
            sem: key.sem,
            value,
            delta,
        })?;
        self.values.insert(key, new);
        Ok(new)
    }

    /// The running value (0 if never incremented).
    pub fn get(&self, key: SemKey) -> u32 {
        self.values.get(&key).copied().unwrap_or(0)
    }

    /// Every incremented semaphore with its value, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (SemKey, u32)> + '_ {
        self.values.iter().map(|(k, v)| (*k, *v))
    }
}
