//! Stamping an `alloc_semaphores` result into the events band `[0x04..0x0B]` of a bundle
//! (SPEC §8, DS-13, DS-14; S000 §sync R2/R4/R5): the band bytes, and the custom-op header and
//! consumer stamps built on them.

use super::{InstrId, SyncError, SyncInfo, SyncPlan, Update, Wait};

/// The events band, bundle bytes `[0x04..0x0B]` (F§2 \[H\]; S000 §Layout NOTE), as the compiler
/// stamps it (DS-13, DS-14):
///
/// byte\[4\] `wait_mode` (0x05 WAIT_FOR_SEM_GE_IMM, or 0x00 NONE without a wait), byte\[5\]
/// `wait_idx`, byte\[6\] `update_mode` (0x13 SEM_INC_COMPLETE, or 0x00 NONE without an update),
/// byte\[7\] `update_idx`, bytes 8..0x0B `semaphore_value` u32 LE = the wait threshold (0 without
/// a wait; SEM_INC takes no immediate).
pub fn sync_band(wait: Option<&Wait>, update: Option<&Update>) -> [u8; 8] {
    let mut b = [0u8; 8];
    if let Some(w) = wait {
        b[0] = w.mode.wire();
        b[1] = w.sem;
        b[4..8].copy_from_slice(&w.value.to_le_bytes());
    }
    if let Some(u) = update {
        b[2] = u.mode.wire();
        b[3] = u.sem;
    }
    b
}

/// Write [`sync_band`] into `bundle[0x04..0x0C]`, leaving every other byte alone.
pub fn stamp_band(bundle: &mut [u8; 64], wait: Option<&Wait>, update: Option<&Update>) {
    bundle[4..12].copy_from_slice(&sync_band(wait, update));
}

/// The Wait `instr` holds on `producer`'s local Update (DS-9: the latest, if several).
pub fn wait_on(plan: &SyncPlan, instr: InstrId, producer: InstrId) -> Result<&Wait, SyncError> {
    plan.infos
        .get(usize::from(instr))
        .and_then(|si| si.waits.iter().rev().find(|w| w.from == producer))
        .ok_or(SyncError::MissingWait { instr, producer })
}

/// The single local Update of `instr` (`getLocalSemaphore(SI.OnUpdate)`).
pub fn local_update_of(plan: &SyncPlan, instr: InstrId) -> Result<&Update, SyncError> {
    plan.infos
        .get(usize::from(instr))
        .and_then(SyncInfo::local_update)
        .ok_or(SyncError::MissingUpdate { instr })
}

/// Stamp the sync band of a custom op's 0x85 header (S000 §sync R2/R4, NOTE "the handshake in
/// one line"): the host waits (byte[4..5]) on the input DMA's semaphore; the header's update
/// (byte[6..7]) is the completion semaphore that the result DMA's local Update bumps.
pub fn stamp_custom_op_header(
    header: &mut [u8; 64],
    plan: &SyncPlan,
    custom_op: InstrId,
    input_dma: InstrId,
    result_dma: InstrId,
) -> Result<(), SyncError> {
    let w = *wait_on(plan, custom_op, input_dma)?;
    let u = *local_update_of(plan, result_dma)?;
    stamp_band(header, Some(&w), Some(&u));
    Ok(())
}

/// Stamp the band of a consumer of the custom op (S000 §sync R5): it waits on the completion
/// semaphore the result DMA updates; its own update, if it has a single local one, goes in
/// byte[6..7].
pub fn stamp_consumer(
    bundle: &mut [u8; 64],
    plan: &SyncPlan,
    consumer: InstrId,
    result_dma: InstrId,
) -> Result<(), SyncError> {
    let w = *wait_on(plan, consumer, result_dma)?;
    let u = local_update_of(plan, consumer).ok().copied();
    stamp_band(bundle, Some(&w), u.as_ref());
    Ok(())
}
