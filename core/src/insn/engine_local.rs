//! Records one engine executes on its own (not collectives, not custom-op
//! groups): GPSIMD / barrier / rank-id / completion encoders: 0xBF, 0xBE,
//! 0xD8, 0xDC, 0xDB, 0xDE (SPEC §5; S003 §5–§9).

use super::sync_band::Sync;
use super::EncodeError;
use crate::generation::Generation;

/// A dtype field must be a tag of the generation's dtype column (SPEC §6.4).
pub(crate) fn dtype_ok(field: &'static str, value: u8, gen: Generation) -> Result<(), EncodeError> {
    if gen.emits_dtype_tag(value) {
        Ok(())
    } else {
        Err(EncodeError::Dtype { field, value })
    }
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

record_codec!(decoded_by_table Gpsimdsb2sb, gpsimdsb2sb, {
    src_dtype @ OFF_SRC_DTYPE => dtype_ok,
    dst_dtype @ OFF_DST_DTYPE => dtype_ok,
    src_ap @ OFF_SRC_AP,
    peer_partition @ OFF_PEER_PARTITION,
    dst_ap @ OFF_DST_AP,
});

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

record_codec!(decoded_by_table GetSequenceBounds, get_sequence_bounds, {
    dtype @ OFF_DTYPE => dtype_ok,
    flag_0e @ OFF_FLAG_0E,
    flag_0f @ OFF_FLAG_0F,
    in_ap @ OFF_IN_AP,
    out_ap @ OFF_OUT_AP,
});

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

record_codec!(decoded_by_table CoreBarrier, core_barrier, {
    barrier_id @ OFF_BARRIER_ID,
    barrier_index @ OFF_BARRIER_INDEX,
    sema_ap @ OFF_SEMA_AP,
});

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

record_codec!(decoded_by_table GetGlobalRankId, get_global_rank_id, {
    valid @ OFF_VALID,
    reg_id @ OFF_REG_ID,
});

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

record_codec!(decoded_by_table GetCurProcessingRankId, get_cur_processing_rank_id, {
    group_id @ OFF_GROUP_ID,
    channel_id @ OFF_CHANNEL_ID,
    iteration_id @ OFF_ITERATION_ID,
    reg_id @ OFF_REG_ID,
    stream_id @ OFF_STREAM_ID,
});

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

record_codec!(decoded_by_table TensorCompletion, tensor_completion, {
    handle @ OFF_HANDLE,
    ap_byte @ OFF_AP_BYTE,
});
