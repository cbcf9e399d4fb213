//! The header debug bytes [0x02..0x03] and the events band [0x04..0x0B] shared by every opcode
//! except 0xDA (SPEC §1; F§2 \[H\] `NEURON_ISA_TPB_HEADER` / `NEURON_ISA_TPB_EVENTS`).

use super::fields::{int, FieldList, Source};
use super::EncodeError;
use crate::bundle::Bundle;
use crate::events::{is_update_mode, is_wait_mode, update_mode_name, wait_mode_name};
use crate::layout::sync_skeleton::{
    OFF_DEBUG_CMD, OFF_DEBUG_HINT, OFF_SEMAPHORE_VALUE, OFF_UPDATE_IDX, OFF_UPDATE_MODE,
    OFF_WAIT_IDX, OFF_WAIT_MODE,
};

/// Wire `wait_mode` byte at +0x04, a `NEURON_ISA_TPB_WAIT_MODE` member (F§2 \[H\]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct WaitMode(pub u8);

impl WaitMode {
    /// NONE 0x00.
    pub const NONE: WaitMode = WaitMode(0x00);
    /// WAIT_FOR_SEM_GE_IMM 0x05: what the compiler stamps (F§2 wire table, BIR mode 1).
    pub const WAIT_FOR_SEM_GE_IMM: WaitMode = WaitMode(0x05);
    /// WAIT_FOR_SEM_GE_REG 0x85 (BIR mode 2).
    pub const WAIT_FOR_SEM_GE_REG: WaitMode = WaitMode(0x85);

    /// `true` iff the byte is a WAIT_MODE member (not INVALID).
    pub fn is_valid(self) -> bool {
        is_wait_mode(self.0)
    }

    /// The header name (`None` for a non-member).
    pub fn name(self) -> Option<&'static str> {
        wait_mode_name(self.0)
    }
}

/// Wire `update_mode` byte at +0x06, a `NEURON_ISA_TPB_UPDATE_MODE` member (F§2 \[H\]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct UpdateMode(pub u8);

impl UpdateMode {
    /// NONE 0x00.
    pub const NONE: UpdateMode = UpdateMode(0x00);
    /// SEM_INC_COMPLETE 0x13: what the compiler stamps on Updates and collective triggers.
    pub const SEM_INC_COMPLETE: UpdateMode = UpdateMode(0x13);

    /// `true` iff the byte is an UPDATE_MODE member (not INVALID).
    pub fn is_valid(self) -> bool {
        is_update_mode(self.0)
    }

    /// The header name (`None` for a non-member).
    pub fn name(self) -> Option<&'static str> {
        update_mode_name(self.0)
    }
}

/// Bytes [0x02..0x0B]: the header's debug bytes and the events band (F§2 \[H\]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Sync {
    /// +0x02 `debug_cmd` (NONE 0, NOTIFY 1, START 3, …); any value decodes (D-2).
    pub debug_cmd: u8,
    /// +0x03 `debug_hint`; any value decodes (D-2).
    pub debug_hint: u8,
    /// +0x04 `wait_mode`.
    pub wait_mode: WaitMode,
    /// +0x05 `wait_idx`, semaphore/event index.
    pub wait_idx: u8,
    /// +0x06 `update_mode`.
    pub update_mode: UpdateMode,
    /// +0x07 `update_idx`, semaphore/event index.
    pub update_idx: u8,
    /// +0x08..+0x0B `semaphore_value` u32: the wait threshold and the update immediate.
    pub semaphore_value: u32,
}

/// Canonical names of these fields (SPEC §5.2), in order.
pub const SYNC_FIELDS: [&str; 7] = [
    "debug_cmd",
    "debug_hint",
    "wait_mode",
    "wait_idx",
    "update_mode",
    "update_idx",
    "semaphore_value",
];

impl Sync {
    /// Checks the two mode bytes (F§2), wait first.
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
        b.put(OFF_DEBUG_CMD, &[self.debug_cmd, self.debug_hint]);
        b.put(OFF_WAIT_MODE, &[self.wait_mode.0]);
        b.put(OFF_WAIT_IDX, &[self.wait_idx]);
        b.put(OFF_UPDATE_MODE, &[self.update_mode.0]);
        b.put(OFF_UPDATE_IDX, &[self.update_idx]);
        b.put(OFF_SEMAPHORE_VALUE, &self.semaphore_value.to_le_bytes());
    }

    /// Reads the bytes without checking them.
    pub fn read(b: &Bundle) -> Sync {
        Sync {
            debug_cmd: b.byte(OFF_DEBUG_CMD),
            debug_hint: b.byte(OFF_DEBUG_HINT),
            wait_mode: WaitMode(b.byte(OFF_WAIT_MODE)),
            wait_idx: b.byte(OFF_WAIT_IDX),
            update_mode: UpdateMode(b.byte(OFF_UPDATE_MODE)),
            update_idx: b.byte(OFF_UPDATE_IDX),
            semaphore_value: u32::from_le_bytes(b.bytes(OFF_SEMAPHORE_VALUE)),
        }
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        out.push(("debug_cmd", int(self.debug_cmd)));
        out.push(("debug_hint", int(self.debug_hint)));
        out.push(("wait_mode", int(self.wait_mode.0)));
        out.push(("wait_idx", int(self.wait_idx)));
        out.push(("update_mode", int(self.update_mode.0)));
        out.push(("update_idx", int(self.update_idx)));
        out.push(("semaphore_value", int(self.semaphore_value)));
    }

    /// `debug_cmd`/`debug_hint` are optional (0 unless given); the rest are required.
    pub(crate) fn from_source<S: AsRef<str>>(src: &Source<'_, S>) -> Result<Sync, EncodeError> {
        let debug_cmd = src.opt_u8("debug_cmd")?;
        let debug_hint = src.opt_u8("debug_hint")?;
        let wait_mode = WaitMode(src.u8("wait_mode")?);
        if !wait_mode.is_valid() {
            return Err(EncodeError::WaitMode { value: wait_mode.0 });
        }
        let wait_idx = src.u8("wait_idx")?;
        let update_mode = UpdateMode(src.u8("update_mode")?);
        if !update_mode.is_valid() {
            return Err(EncodeError::UpdateMode {
                value: update_mode.0,
            });
        }
        Ok(Sync {
            debug_cmd,
            debug_hint,
            wait_mode,
            wait_idx,
            update_mode,
            update_idx: src.u8("update_idx")?,
            semaphore_value: src.u32("semaphore_value")?,
        })
    }
}
