//! Records one engine executes on its own (not collectives, not custom-op
//! groups): GPSIMD / barrier / rank-id / completion encoders: 0xBF, 0xBE,
//! 0xD8, 0xDC, 0xDB, 0xDE (SPEC §5; S003 §5–§9).

use super::check::check;
use super::custom_op::{emitted, skeleton};
use super::fields::{bytes, int, FieldList, Source};
use super::sync_band::{Sync, SYNC_FIELDS};
use super::{expect_opcode, DecodeError, EncodeError};
use crate::bundle::Bundle;
use crate::generation::Generation;
use crate::layout::{
    core_barrier, get_cur_processing_rank_id, get_global_rank_id, get_sequence_bounds, gpsimdsb2sb,
    tensor_completion,
};

/// A dtype field must be a tag of the generation's dtype column (SPEC §6.4).
pub(crate) fn dtype_ok(field: &'static str, value: u8, gen: Generation) -> Result<(), EncodeError> {
    if gen.emits_dtype_tag(value) {
        Ok(())
    } else {
        Err(EncodeError::Dtype { field, value })
    }
}

fn src_dtype<S: AsRef<str>>(
    src: &Source<'_, S>,
    field: &'static str,
    gen: Generation,
) -> Result<u8, EncodeError> {
    let v = src.u8(field)?;
    dtype_ok(field, v, gen)?;
    Ok(v)
}

// ---------------------------------------------------------------------------
// 0xBF Gpsimdsb2sb. S003 §5 annotated C (every store re-disassembled).
// ---------------------------------------------------------------------------

/// 0xBF GPSIMDSB2SB cross-core SBUF↔SBUF mover (S003 §5).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Gpsimdsb2sb {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C dtype tag of the source.
    pub src_dtype: u8,
    /// +0x0D dtype tag of the destination.
    pub dst_dtype: u8,
    /// +0x10 TENSOR3D local read AP (D-5: 16 bytes).
    pub src_ap: [u8; 16],
    /// +0x21 peer SB partition.
    pub peer_partition: u8,
    /// +0x30 TENSOR3D peer write AP.
    pub dst_ap: [u8; 16],
}

impl Gpsimdsb2sb {
    table_consts!(gpsimdsb2sb);

    /// Encodes (S003 §5).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        dtype_ok("src_dtype", self.src_dtype, gen)?;
        dtype_ok("dst_dtype", self.dst_dtype, gen)?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(gpsimdsb2sb::OFF_SRC_DTYPE, &[self.src_dtype]);
        b.put(gpsimdsb2sb::OFF_DST_DTYPE, &[self.dst_dtype]);
        b.put(gpsimdsb2sb::OFF_SRC_AP, &self.src_ap);
        b.put(
            gpsimdsb2sb::OFF_CROSS_CORE_ENABLE,
            &[gpsimdsb2sb::CROSS_CORE_ENABLE],
        );
        b.put(gpsimdsb2sb::OFF_PEER_PARTITION, &[self.peer_partition]);
        b.put(gpsimdsb2sb::OFF_DST_AP, &self.dst_ap);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, gpsimdsb2sb::DEF, gen)?;
        Ok(Gpsimdsb2sb {
            sync: Sync::read(b),
            src_dtype: b.byte(gpsimdsb2sb::OFF_SRC_DTYPE),
            dst_dtype: b.byte(gpsimdsb2sb::OFF_DST_DTYPE),
            src_ap: b.bytes(gpsimdsb2sb::OFF_SRC_AP),
            peer_partition: b.byte(gpsimdsb2sb::OFF_PEER_PARTITION),
            dst_ap: b.bytes(gpsimdsb2sb::OFF_DST_AP),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("src_dtype", int(self.src_dtype)));
        out.push(("dst_dtype", int(self.dst_dtype)));
        out.push(("src_ap", bytes(&self.src_ap)));
        out.push(("peer_partition", int(self.peer_partition)));
        out.push(("dst_ap", bytes(&self.dst_ap)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let v = Gpsimdsb2sb {
            sync: Sync::from_source(src)?,
            src_dtype: src_dtype(src, "src_dtype", gen)?,
            dst_dtype: src_dtype(src, "dst_dtype", gen)?,
            src_ap: src.bytes("src_ap")?,
            peer_partition: src.u8("peer_partition")?,
            dst_ap: src.bytes("dst_ap")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(v)
    }
}

// ---------------------------------------------------------------------------
// 0xBE GetSequenceBounds. S003 §6; D-6 (+0x0C dtype, +0x0E/+0x0F opaque flags).
// ---------------------------------------------------------------------------

/// 0xBE GetSequenceBounds (S003 §6).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct GetSequenceBounds {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C input dtype tag (D-6).
    pub dtype: u8,
    /// +0x0E opaque flag (D-6).
    pub flag_0e: u8,
    /// +0x0F opaque flag (D-6).
    pub flag_0f: u8,
    /// +0x10 TENSOR3D segment ids.
    pub in_ap: [u8; 16],
    /// +0x20 TENSOR3D bounds.
    pub out_ap: [u8; 16],
}

impl GetSequenceBounds {
    table_consts!(get_sequence_bounds);

    /// Encodes (S003 §6).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        dtype_ok("dtype", self.dtype, gen)?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(get_sequence_bounds::OFF_DTYPE, &[self.dtype]);
        b.put(
            get_sequence_bounds::OFF_FLAG_0E,
            &[self.flag_0e, self.flag_0f],
        );
        b.put(get_sequence_bounds::OFF_IN_AP, &self.in_ap);
        b.put(get_sequence_bounds::OFF_OUT_AP, &self.out_ap);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, get_sequence_bounds::DEF, gen)?;
        Ok(GetSequenceBounds {
            sync: Sync::read(b),
            dtype: b.byte(get_sequence_bounds::OFF_DTYPE),
            flag_0e: b.byte(get_sequence_bounds::OFF_FLAG_0E),
            flag_0f: b.byte(get_sequence_bounds::OFF_FLAG_0F),
            in_ap: b.bytes(get_sequence_bounds::OFF_IN_AP),
            out_ap: b.bytes(get_sequence_bounds::OFF_OUT_AP),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("dtype", int(self.dtype)));
        out.push(("flag_0e", int(self.flag_0e)));
        out.push(("flag_0f", int(self.flag_0f)));
        out.push(("in_ap", bytes(&self.in_ap)));
        out.push(("out_ap", bytes(&self.out_ap)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let v = GetSequenceBounds {
            sync: Sync::from_source(src)?,
            dtype: src_dtype(src, "dtype", gen)?,
            flag_0e: src.u8("flag_0e")?,
            flag_0f: src.u8("flag_0f")?,
            in_ap: src.bytes("in_ap")?,
            out_ap: src.bytes("out_ap")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(v)
    }
}

// ---------------------------------------------------------------------------
// 0xD8 CoreBarrier. S003 §7 (mov %eax,0xc/0x10(%r12); TENSOR4D @+0x20).
// ---------------------------------------------------------------------------

/// 0xD8 CoreBarrier (S003 §7).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CoreBarrier {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C HW barrier-register id.
    pub barrier_id: u32,
    /// +0x10 module-wide barrier instance index.
    pub barrier_index: u32,
    /// +0x20 TENSOR4D semaphore AP (D-5: 32 bytes).
    pub sema_ap: [u8; 32],
}

impl CoreBarrier {
    table_consts!(core_barrier);

    /// Encodes (S003 §7).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(core_barrier::OFF_BARRIER_ID, &self.barrier_id.to_le_bytes());
        b.put(
            core_barrier::OFF_BARRIER_INDEX,
            &self.barrier_index.to_le_bytes(),
        );
        b.put(core_barrier::OFF_SEMA_AP, &self.sema_ap);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, core_barrier::DEF, gen)?;
        Ok(CoreBarrier {
            sync: Sync::read(b),
            barrier_id: u32::from_le_bytes(b.bytes(core_barrier::OFF_BARRIER_ID)),
            barrier_index: u32::from_le_bytes(b.bytes(core_barrier::OFF_BARRIER_INDEX)),
            sema_ap: b.bytes(core_barrier::OFF_SEMA_AP),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("barrier_id", int(self.barrier_id)));
        out.push(("barrier_index", int(self.barrier_index)));
        out.push(("sema_ap", bytes(&self.sema_ap)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let v = CoreBarrier {
            sync: Sync::from_source(src)?,
            barrier_id: src.u32("barrier_id")?,
            barrier_index: src.u32("barrier_index")?,
            sema_ap: src.bytes("sema_ap")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(v)
    }
}

// ---------------------------------------------------------------------------
// 0xDC GetGlobalRankId. S003 §8.1 {valid@+0xC, regId@+0x17}; D-7.
// ---------------------------------------------------------------------------

/// 0xDC GetGlobalRankId (S003 §8.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct GetGlobalRankId {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C valid flag, 0/1 (D-7).
    pub valid: bool,
    /// +0x17 destination register id.
    pub reg_id: u8,
}

impl GetGlobalRankId {
    table_consts!(get_global_rank_id);

    /// Encodes (S003 §8.1).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(get_global_rank_id::OFF_VALID, &[u8::from(self.valid)]);
        b.put(get_global_rank_id::OFF_REG_ID, &[self.reg_id]);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, get_global_rank_id::DEF, gen)?;
        Ok(GetGlobalRankId {
            sync: Sync::read(b),
            valid: b.byte(get_global_rank_id::OFF_VALID) == 1,
            reg_id: b.byte(get_global_rank_id::OFF_REG_ID),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("valid", int(u8::from(self.valid))));
        out.push(("reg_id", int(self.reg_id)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let sync = Sync::from_source(src)?;
        let valid = match src.int("valid", u64::MAX)? {
            0 => false,
            1 => true,
            value => return Err(EncodeError::Valid { value }),
        };
        let v = GetGlobalRankId {
            sync,
            valid,
            reg_id: src.u8("reg_id")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(v)
    }
}

// ---------------------------------------------------------------------------
// 0xDB GetCurProcessingRankID. S003 §8.2 (lea 0xc/0xe/0x10/0x14(%r13); mov %bl,0x12).
// ---------------------------------------------------------------------------

/// 0xDB GetCurProcessingRankID (S003 §8.2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct GetCurProcessingRankId {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C u16.
    pub group_id: u16,
    /// +0x0E u16.
    pub channel_id: u16,
    /// +0x10 u16.
    pub iteration_id: u16,
    /// +0x12 u8 output register.
    pub reg_id: u8,
    /// +0x14 u16.
    pub stream_id: u16,
}

impl GetCurProcessingRankId {
    table_consts!(get_cur_processing_rank_id);

    /// Encodes (S003 §8.2).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(
            get_cur_processing_rank_id::OFF_GROUP_ID,
            &self.group_id.to_le_bytes(),
        );
        b.put(
            get_cur_processing_rank_id::OFF_CHANNEL_ID,
            &self.channel_id.to_le_bytes(),
        );
        b.put(
            get_cur_processing_rank_id::OFF_ITERATION_ID,
            &self.iteration_id.to_le_bytes(),
        );
        b.put(get_cur_processing_rank_id::OFF_REG_ID, &[self.reg_id]);
        b.put(
            get_cur_processing_rank_id::OFF_STREAM_ID,
            &self.stream_id.to_le_bytes(),
        );
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, get_cur_processing_rank_id::DEF, gen)?;
        Ok(GetCurProcessingRankId {
            sync: Sync::read(b),
            group_id: u16::from_le_bytes(b.bytes(get_cur_processing_rank_id::OFF_GROUP_ID)),
            channel_id: u16::from_le_bytes(b.bytes(get_cur_processing_rank_id::OFF_CHANNEL_ID)),
            iteration_id: u16::from_le_bytes(b.bytes(get_cur_processing_rank_id::OFF_ITERATION_ID)),
            reg_id: b.byte(get_cur_processing_rank_id::OFF_REG_ID),
            stream_id: u16::from_le_bytes(b.bytes(get_cur_processing_rank_id::OFF_STREAM_ID)),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("group_id", int(self.group_id)));
        out.push(("channel_id", int(self.channel_id)));
        out.push(("iteration_id", int(self.iteration_id)));
        out.push(("reg_id", int(self.reg_id)));
        out.push(("stream_id", int(self.stream_id)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let v = GetCurProcessingRankId {
            sync: Sync::from_source(src)?,
            group_id: src.u16("group_id")?,
            channel_id: src.u16("channel_id")?,
            iteration_id: src.u16("iteration_id")?,
            reg_id: src.u8("reg_id")?,
            stream_id: src.u16("stream_id")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(v)
    }
}

// ---------------------------------------------------------------------------
// 0xDE TensorCompletion. S003 §9 {handle@+0xC (MemLoc+0x234), byte@+0x10}.
// ---------------------------------------------------------------------------

/// 0xDE TensorCompletion (S003 §9).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct TensorCompletion {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C u32 completion handle.
    pub handle: u32,
    /// +0x10 derived AP byte.
    pub ap_byte: u8,
}

impl TensorCompletion {
    table_consts!(tensor_completion);

    /// Encodes (S003 §9).
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        self.sync.check()?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(tensor_completion::OFF_HANDLE, &self.handle.to_le_bytes());
        b.put(tensor_completion::OFF_AP_BYTE, &[self.ap_byte]);
        Ok(b)
    }

    /// Decodes an encoder image (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<Self, DecodeError> {
        expect_opcode(b, Self::OPCODE, gen)?;
        check(b, tensor_completion::DEF, gen)?;
        Ok(TensorCompletion {
            sync: Sync::read(b),
            handle: u32::from_le_bytes(b.bytes(tensor_completion::OFF_HANDLE)),
            ap_byte: b.byte(tensor_completion::OFF_AP_BYTE),
        })
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("handle", int(self.handle)));
        out.push(("ap_byte", int(self.ap_byte)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(
        src: &Source<'_, S>,
        gen: Generation,
    ) -> Result<Self, EncodeError> {
        emitted(gen, Self::OPCODE)?;
        let v = TensorCompletion {
            sync: Sync::from_source(src)?,
            handle: src.u32("handle")?,
            ap_byte: src.u8("ap_byte")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(v)
    }
}
