//! The SyncInfo band [0x04..0x0B] shared by every opcode except 0xDA (SPEC §1; F§2).

use super::fields::{int, FieldList, Source};
use super::EncodeError;
use crate::bundle::Bundle;
use crate::layout::{OFF_SYNC_VALUES, OFF_UPDATE_ID, OFF_UPDATE_MODE, OFF_WAIT_ID, OFF_WAIT_MODE};
use crate::lut::{wait_mode_to_wire, LutError};
use crate::validate::{update_mode_ok, wait_mode_ok};

/// Wire wait-mode byte at +0x04 (S000 §Layout NOTE; F§2; D-1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct WaitMode(pub u8);

impl WaitMode {
    /// No wait (all-zero band). D-1.
    pub const NONE: WaitMode = WaitMode(0x00);
    /// SEM_GE_IMM (BIR mode 1). F§2.
    pub const SEM_GE_IMM: WaitMode = WaitMode(0x05);
    /// SEM_GE_REG (BIR mode 2; 0x80 = register compare). F§2.
    pub const SEM_GE_REG: WaitMode = WaitMode(0x85);

    /// `true` iff the byte is accepted by `has_valid_neuron_events` (D-1).
    pub fn is_valid(self) -> bool {
        wait_mode_ok(self.0)
    }

    /// From a BIR wait mode via the sync encoder's LUT (mode 0 rejected, F§2).
    pub fn from_bir(mode: u32) -> Result<WaitMode, LutError> {
        wait_mode_to_wire(mode).map(WaitMode)
    }
}

/// Wire update-mode byte at +0x06, written raw (F§2; D-1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct UpdateMode(pub u8);

impl UpdateMode {
    /// Set / replace. F§2.
    pub const SET: UpdateMode = UpdateMode(0x00);
    /// Increment. F§2.
    pub const INCREMENT: UpdateMode = UpdateMode(0x01);

    /// `true` iff the byte is accepted by `has_valid_neuron_events` (D-1).
    pub fn is_valid(self) -> bool {
        update_mode_ok(self.0)
    }
}

/// The per-instruction sync band [0x04..0x0B] (F§2; S003 "SyncInfo band").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Sync {
    /// +0x04 wait mode.
    pub wait_mode: WaitMode,
    /// +0x05 wait semaphore index.
    pub wait_id: u8,
    /// +0x06 update mode.
    pub update_mode: UpdateMode,
    /// +0x07 update semaphore index.
    pub update_id: u8,
    /// +0x08..+0x0B values / branch-hint PC, opaque (S003; F§2).
    pub values: u32,
}

/// Canonical names of the sync fields (SPEC §5.2).
pub const SYNC_FIELDS: [&str; 5] = [
    "sync.wait_mode",
    "sync.wait_id",
    "sync.update_mode",
    "sync.update_id",
    "sync.values",
];

impl Sync {
    /// Checks the two mode bytes (D-1), wait first.
    pub fn check(&self) -> Result<(), EncodeError> {
        if !self.wait_mode.is_valid() {
            return Err(EncodeError::WaitMode {
                value: self.wait_mode.0,
            });
        }
        if !self.update_mode.is_valid() {
            return Err(EncodeError::UpdateMode {
                value: self.update_mode.0,
            });
        }
        Ok(())
    }

    pub(crate) fn write(&self, b: &mut Bundle) {
        b.put(OFF_WAIT_MODE, &[self.wait_mode.0]);
        b.put(OFF_WAIT_ID, &[self.wait_id]);
        b.put(OFF_UPDATE_MODE, &[self.update_mode.0]);
        b.put(OFF_UPDATE_ID, &[self.update_id]);
        b.put(OFF_SYNC_VALUES, &self.values.to_le_bytes());
    }

    /// Reads the band without checking it.
    pub fn read(b: &Bundle) -> Sync {
        Sync {
            wait_mode: WaitMode(b.byte(OFF_WAIT_MODE)),
            wait_id: b.byte(OFF_WAIT_ID),
            update_mode: UpdateMode(b.byte(OFF_UPDATE_MODE)),
            update_id: b.byte(OFF_UPDATE_ID),
            values: u32::from_le_bytes(b.bytes(OFF_SYNC_VALUES)),
        }
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        out.push(("sync.wait_mode", int(self.wait_mode.0)));
        out.push(("sync.wait_id", int(self.wait_id)));
        out.push(("sync.update_mode", int(self.update_mode.0)));
        out.push(("sync.update_id", int(self.update_id)));
        out.push(("sync.values", int(self.values)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(src: &Source<'_, S>) -> Result<Sync, EncodeError> {
        let wait_mode = WaitMode(src.u8("sync.wait_mode")?);
        if !wait_mode.is_valid() {
            return Err(EncodeError::WaitMode { value: wait_mode.0 });
        }
        let wait_id = src.u8("sync.wait_id")?;
        let update_mode = UpdateMode(src.u8("sync.update_mode")?);
        if !update_mode.is_valid() {
            return Err(EncodeError::UpdateMode {
                value: update_mode.0,
            });
        }
        Ok(Sync {
            wait_mode,
            wait_id,
            update_mode,
            update_id: src.u8("sync.update_id")?,
            values: src.u32("sync.values")?,
        })
    }
}
