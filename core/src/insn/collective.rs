//! Collective encoders: 0xD9, 0xDA, 0xCB (SPEC §5; S003 §3, §4).

use super::codec::Wire;
use super::engine_local::dtype_ok;
use super::fields::{name, FieldValue, Source};
use super::sync_band::Sync;
use super::EncodeError;
use crate::bundle::Bundle;
use crate::generation::Generation;
use crate::layout::{collective_compute, collective_compute_secondary};
use crate::lut::{cce_op_to_wire, AluOp, CollectiveKind};

// The trio sits at the same offsets in 0xD9 and 0xDA (S003 §3.2 "mirror the 0xD9 trio").
const _: () = assert!(
    collective_compute::OFF_CCE_OP == collective_compute_secondary::OFF_CCE_OP
        && collective_compute::OFF_DTYPE == collective_compute_secondary::OFF_DTYPE
        && collective_compute::OFF_KIND == collective_compute_secondary::OFF_KIND
        && collective_compute::OFF_AP == collective_compute_secondary::OFF_AP
);

/// A `cce_op` must be one of the shipped CCE ops (bypass, add: S003 §1.1; D-13).
fn cce_encodable(_field: &'static str, op: AluOp, _gen: Generation) -> Result<(), EncodeError> {
    cce_op_to_wire(op.ordinal())
        .map(|_| ())
        .map_err(EncodeError::CceOp)
}

/// A `kind` must have a wire byte (kinds 2..=10, S003 §2).
fn kind_encodable(
    _field: &'static str,
    kind: CollectiveKind,
    _gen: Generation,
) -> Result<(), EncodeError> {
    kind.to_wire().map(|_| ()).map_err(EncodeError::Kind)
}

/// The `cce_op` byte of 0xD9 / 0xDA: an AluOp through the CCE subset of SPEC §6.2
/// ([`cce_encodable`] refuses the others before a write).
impl Wire for AluOp {
    fn read(b: &Bundle, off: usize) -> Self {
        crate::lut::alu_op_from_wire(b.byte(off))
            .and_then(AluOp::from_ordinal)
            .unwrap_or(AluOp::Bypass)
    }
    fn write(self, b: &mut Bundle, off: usize) {
        b.put(off, &[cce_op_to_wire(self.ordinal()).unwrap_or(0)]);
    }
    fn value(self) -> FieldValue {
        name(self.name())
    }
    fn take<S: AsRef<str>>(src: &Source<'_, S>, field: &'static str) -> Result<Self, EncodeError> {
        AluOp::from_name(src.name(field)?).ok_or(EncodeError::UnknownName { field })
    }
}

/// The `kind` byte (SPEC §6.1; [`kind_encodable`] refuses a kind without a wire byte before a
/// write).
impl Wire for CollectiveKind {
    fn read(b: &Bundle, off: usize) -> Self {
        CollectiveKind::from_wire(b.byte(off)).unwrap_or(CollectiveKind::AllReduce)
    }
    fn write(self, b: &mut Bundle, off: usize) {
        b.put(off, &[self.to_wire().unwrap_or(0)]);
    }
    fn value(self) -> FieldValue {
        name(self.name())
    }
    fn take<S: AsRef<str>>(src: &Source<'_, S>, field: &'static str) -> Result<Self, EncodeError> {
        CollectiveKind::from_name(src.name(field)?).ok_or(EncodeError::UnknownName { field })
    }
}

/// 0xD9 CollectiveCompute primary record (S003 §3.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CollectiveCompute {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C reduce-on-copy op; encodable: bypass, add (S003 §1.1).
    pub cce_op: AluOp,
    /// +0x0D dtype wire tag (SPEC §6.4).
    pub dtype: u8,
    /// +0x0E collective kind; encodable: kinds 2..=10 (S003 §2).
    pub kind: CollectiveKind,
    /// +0x10..+0x3F ADDR8 TENSOR2D access pattern, opaque (D-5).
    pub ap: [u8; 48],
}

// S003 §3.1 annotated C.
record_codec!(decoded_by_table CollectiveCompute, collective_compute, {
    cce_op @ OFF_CCE_OP => cce_encodable,
    dtype @ OFF_DTYPE => dtype_ok,
    kind @ OFF_KIND => kind_encodable,
    ap @ OFF_AP,
});

/// 0xDA CollectiveComputeSecondary: raw-stamped, no sync band (S003 §3.2; D-3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CollectiveComputeSecondary {
    /// +0x04 u16 permute channel (0 on non-permute arms) (S003 §3.4).
    pub channel_id: u16,
    /// +0x0C as 0xD9 (S003 §3.2 "mirror the 0xD9 trio").
    pub cce_op: AluOp,
    /// +0x0D as 0xD9.
    pub dtype: u8,
    /// +0x0E as 0xD9.
    pub kind: CollectiveKind,
    /// +0x10..+0x3F second operand ADDR8 AP (S003 §3.2).
    pub ap: [u8; 48],
}

// The opcode stamped raw onto a zeroed record, byte[1] stays 0 (D-3).
record_codec!(decoded_by_table CollectiveComputeSecondary, collective_compute_secondary, unsynced, {
    channel_id @ OFF_CHANNEL_ID,
    cce_op @ OFF_CCE_OP => cce_encodable,
    dtype @ OFF_DTYPE => dtype_ok,
    kind @ OFF_KIND => kind_encodable,
    ap @ OFF_AP,
});

/// 0xCB CollectiveSend / CollectiveRecv (one layout; direction is module metadata, D-12).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct CollectiveSendRecv {
    /// Sync band.
    pub sync: Sync,
    /// +0x10 u64 ap_base of arg0 (S003 §4.1).
    pub tensor_id: u64,
    /// +0x30 u64 (S003 §4.1, I+0xD0).
    pub tensor_base: u64,
    /// +0x38 u64 (S003 §4.1).
    pub num_elements_per_partition: u64,
}

record_codec!(decoded_by_table CollectiveSendRecv, collective_send_recv, {
    tensor_id @ OFF_TENSOR_ID,
    tensor_base @ OFF_TENSOR_BASE,
    num_elements_per_partition @ OFF_NUM_ELEMENTS_PER_PARTITION,
});
