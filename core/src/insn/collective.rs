//! Collective encoders: 0xD9, 0xDA, 0xCB (SPEC §5; S003 §3, §4).

use super::check::check;
use super::custom_op::{emitted, skeleton};
use super::engine_local::dtype_ok;
use super::fields::{bytes, int, name, FieldList, Source};
use super::sync_band::{Sync, SYNC_FIELDS};
use super::{expect_opcode, DecodeError, EncodeError};
use crate::bundle::Bundle;
use crate::generation::Generation;
use crate::layout::{collective_compute, collective_compute_secondary};
use crate::lut::{cce_op_to_wire, AluOp, CollectiveKind};

// The trio sits at the same offsets in 0xD9 and 0xDA (S003 §3.2 "mirror the 0xD9 trio"; checked
// below at compile time).
const OFF_CCE_OP: usize = collective_compute::OFF_CCE_OP;
const OFF_DTYPE: usize = collective_compute::OFF_DTYPE;
const OFF_KIND: usize = collective_compute::OFF_KIND;
const OFF_AP: usize = collective_compute::OFF_AP;
const _: () = assert!(
    OFF_CCE_OP == collective_compute_secondary::OFF_CCE_OP
        && OFF_DTYPE == collective_compute_secondary::OFF_DTYPE
        && OFF_KIND == collective_compute_secondary::OFF_KIND
        && OFF_DTYPE == OFF_CCE_OP + 1
        && OFF_KIND == OFF_CCE_OP + 2
        && OFF_AP == collective_compute_secondary::OFF_AP
);

/// The {cce_op, dtype, kind} trio shared by 0xD9 and 0xDA (S003 §3.1, §3.2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Trio {
    cce_op: AluOp,
    dtype: u8,
    kind: CollectiveKind,
}

impl Trio {
    fn wire(&self, gen: Generation) -> Result<[u8; 3], EncodeError> {
        let op = cce_op_to_wire(self.cce_op.ordinal()).map_err(EncodeError::CceOp)?;
        dtype_ok("dtype", self.dtype, gen)?;
        let kind = self.kind.to_wire().map_err(EncodeError::Kind)?;
        Ok([op, self.dtype, kind])
    }

    /// Reads a trio already accepted by the layout check.
    fn read(b: &Bundle) -> Trio {
        Trio {
            cce_op: crate::lut::alu_op_from_wire(b.byte(OFF_CCE_OP))
                .and_then(AluOp::from_ordinal)
                .unwrap_or(AluOp::Bypass),
            dtype: b.byte(OFF_DTYPE),
            kind: CollectiveKind::from_wire(b.byte(OFF_KIND)).unwrap_or(CollectiveKind::AllReduce),
        }
    }

    fn push(&self, out: &mut FieldList) {
        out.push(("cce_op", name(self.cce_op.name())));
        out.push(("dtype", int(self.dtype)));
        out.push(("kind", name(self.kind.name())));
    }

    fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Trio, EncodeError> {
        let field = "cce_op";
        let cce_op =
            AluOp::from_name(src.name(field)?).ok_or(EncodeError::UnknownName { field })?;
        cce_op_to_wire(cce_op.ordinal()).map_err(EncodeError::CceOp)?;
        let dtype = src.u8("dtype")?;
        dtype_ok("dtype", dtype, gen)?;
        let field = "kind";
        let kind = CollectiveKind::from_name(src.name(field)?)
            .ok_or(EncodeError::UnknownName { field })?;
        kind.to_wire().map_err(EncodeError::Kind)?;
        Ok(Trio {
            cce_op,
            dtype,
            kind,
        })
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

impl CollectiveCompute {
    table_consts!(collective_compute);

    fn trio(&self) -> Trio {
        Trio {
            cce_op: self.cce_op,
            dtype: self.dtype,
            kind: self.kind,
        }
    }

    /// Encodes (S003 §3.1 annotated C).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        let trio = self.trio().wire(gen)?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(OFF_CCE_OP, &trio);
        b.put(OFF_AP, &self.ap);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, collective_compute::DEF, gen)?;
        let t = Trio::read(b);
        Ok(CollectiveCompute {
            sync: Sync::read(b),
            cce_op: t.cce_op,
            dtype: t.dtype,
            kind: t.kind,
            ap: b.bytes(OFF_AP),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        self.trio().push(out);
        out.push(("ap", bytes(&self.ap)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let sync = Sync::from_source(src)?;
        let t = Trio::from_source(src, gen)?;
        let ap = src.bytes("ap")?;
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(CollectiveCompute {
            sync,
            cce_op: t.cce_op,
            dtype: t.dtype,
            kind: t.kind,
            ap,
        })
    }
}

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

impl CollectiveComputeSecondary {
    table_consts!(collective_compute_secondary);

    fn trio(&self) -> Trio {
        Trio {
            cce_op: self.cce_op,
            dtype: self.dtype,
            kind: self.kind,
        }
    }

    /// Encodes: opcode stamped raw onto a zeroed record, byte[1] stays 0 (D-3).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let trio = self.trio().wire(gen)?;
        let mut b = Bundle::ZERO;
        b.put(
            collective_compute_secondary::OFF_OPCODE,
            &[Self::OPCODE, collective_compute_secondary::INST_WORD_LEN],
        );
        b.put(
            collective_compute_secondary::OFF_CHANNEL_ID,
            &self.channel_id.to_le_bytes(),
        );
        b.put(OFF_CCE_OP, &trio);
        b.put(OFF_AP, &self.ap);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, collective_compute_secondary::DEF, gen)?;
        let t = Trio::read(b);
        Ok(CollectiveComputeSecondary {
            channel_id: u16::from_le_bytes(b.bytes(collective_compute_secondary::OFF_CHANNEL_ID)),
            cce_op: t.cce_op,
            dtype: t.dtype,
            kind: t.kind,
            ap: b.bytes(OFF_AP),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        out.push(("channel_id", int(self.channel_id)));
        self.trio().push(out);
        out.push(("ap", bytes(&self.ap)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let channel_id = src.u16("channel_id")?;
        let t = Trio::from_source(src, gen)?;
        let ap = src.bytes("ap")?;
        src.reject_unknown(&[&Self::FIELDS])?;
        Ok(CollectiveComputeSecondary {
            channel_id,
            cce_op: t.cce_op,
            dtype: t.dtype,
            kind: t.kind,
            ap,
        })
    }
}

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
