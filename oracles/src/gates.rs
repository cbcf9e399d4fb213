//! IR-level gates (SPEC §7), each a small table of names checked by membership.

use crate::errors::{GateRejection, Operand};

/// Memory-space codes (D-11).
const MEMORY_SPACES: &[(&str, u8)] = &[("SBUF", 0), ("HBM", 1), ("PSUM", 2), ("Other", 3)];
/// Spaces checkCustomOp admits (seed 000 §C4: SBUF|HBM).
const CUSTOM_OP_SPACES: &[&str] = &["SBUF", "HBM"];
/// Arch codes (D-11).
const ARCHES: &[(&str, u8)] = &[("Tonga", 0), ("Sunda", 1), ("Cayman", 2), ("Mariana", 3)];
/// Arches checkCustomOp admits (seed 000 §C4: Sunda, Tonga).
const CUSTOM_OP_ARCHES: &[&str] = &["Sunda", "Tonga"];
/// IR instruction kinds named by the seeds.
const IR_KINDS: &[(&str, u32)] = &[("CustomOp", 0x30)];
/// Custom-op subkinds that can own an SB scratchpad (`subkind - 2 <= 1`).
const SB_SCRATCH_SUBKINDS: &[u32] = &[2, 3];
/// Collective dimensions (seed 003 §3.5).
const CC_DIMS: &[(&str, u32)] = &[("Partition", 0), ("Free", 1)];
/// StorageBase kinds named by the seeds.
const STORAGE_KINDS: &[(&str, u32)] = &[("RegisterAccess", 11)];
/// Cores per LNC the SB2SB encoder accepts (seed 003 §5).
const SB2SB_LNC: &[(&str, u32)] = &[("LNC2", 2)];
/// MaxBytesPerPartition (seed 003 §5 NOTE).
const MAX_BYTES_PER_PARTITION: u64 = 0x400;

fn named<T: PartialEq + Copy>(table: &[(&'static str, T)], code: T) -> Option<&'static str> {
    table.iter().find(|row| row.1 == code).map(|row| row.0)
}

fn code_of<T: Copy>(table: &[(&'static str, T)], name: &str) -> Option<T> {
    table.iter().find(|row| row.0 == name).map(|row| row.1)
}

fn space_ok(code: u8) -> bool {
    named(MEMORY_SPACES, code).is_some_and(|n| CUSTOM_OP_SPACES.contains(&n))
}

/// checkCustomOp (seed 000 §C4): ≤1 output; args then outputs in SBUF/HBM; arch Sunda/Tonga.
pub fn gate_custom_op(arg_spaces: &[u8], out_spaces: &[u8], arch: u8) -> Result<(), GateRejection> {
    if out_spaces.len() > 1 {
        return Err(GateRejection::TooManyOutputs {
            n_outputs: out_spaces.len(),
        });
    }
    let operands = arg_spaces
        .iter()
        .enumerate()
        .map(|(i, &c)| (Operand::Arg, i, c))
        .chain(
            out_spaces
                .iter()
                .enumerate()
                .map(|(i, &c)| (Operand::Output, i, c)),
        );
    for (operand, index, code) in operands {
        if !space_ok(code) {
            return Err(GateRejection::BadMemorySpace {
                operand,
                index,
                code,
            });
        }
    }
    if !named(ARCHES, arch).is_some_and(|n| CUSTOM_OP_ARCHES.contains(&n)) {
        return Err(GateRejection::BadArch { code: arch });
    }
    Ok(())
}

/// bir::isCCHavingSBScratchPad (seed 000 §"SB-scratchpad bookkeeping").
pub fn gate_sb_scratchpad(
    kind: u32,
    subkind: u32,
    sb_arg_global: bool,
    n_args: u64,
    n_outputs: u64,
    n_scratch: u64,
) -> Result<(), GateRejection> {
    if Some(kind) != code_of(IR_KINDS, "CustomOp") {
        return Err(GateRejection::NotCustomOp { kind });
    }
    if !SB_SCRATCH_SUBKINDS.contains(&subkind) {
        return Err(GateRejection::BadSubkind { subkind });
    }
    if !sb_arg_global {
        return Err(GateRejection::NotSbArgGlobal);
    }
    let expected = u128::from(n_args) + 2 + u128::from(n_outputs);
    if expected != u128::from(n_scratch) {
        return Err(GateRejection::ScratchCountMismatch {
            expected,
            n_scratch,
        });
    }
    Ok(())
}

/// cc_dim ∈ {Partition, Free} (seed 003 §3.5).
pub fn gate_cc_dim(dim: u32) -> Result<(), GateRejection> {
    named(CC_DIMS, dim)
        .map(|_| ())
        .ok_or(GateRejection::BadCcDim { dim })
}

/// GetGlobalRankId output must be a RegisterAccess (seed 003 §8.1).
pub fn gate_rank_id_output(storage_kind: u32) -> Result<(), GateRejection> {
    if Some(storage_kind) == code_of(STORAGE_KINDS, "RegisterAccess") {
        Ok(())
    } else {
        Err(GateRejection::NotRegisterAccess { storage_kind })
    }
}

/// GPSIMDSB2SB requires LNC2 (seed 003 §5).
pub fn gate_lnc(cores_per_lnc: u32) -> Result<(), GateRejection> {
    named(SB2SB_LNC, cores_per_lnc)
        .map(|_| ())
        .ok_or(GateRejection::NotLnc2 { cores_per_lnc })
}

/// SB2SB (0xBF) route iff bytes_per_partition ≤ MaxBytesPerPartition (1024), else DMA.
pub fn route_is_sb2sb(bytes_per_partition: u64) -> bool {
    bytes_per_partition <= MAX_BYTES_PER_PARTITION
}
