//! Valid by construction: typed `tpb_core` instructions of the record opcodes a generation
//! emits (SPEC §0, §5), encoded with core's encoder.

use super::config::{opcode, Config};
use crate::generation::Generation;
use crate::layout::{Domain, UPDATE_MEMBERS, WAIT_MEMBERS};
use arbitrary::{Result, Unstructured};
use tpb_core::insn::{
    CollectiveCompute, CollectiveComputeSecondary, CollectiveSendRecv, CoreBarrier, CustomOpHeader,
    CustomOpPayload, GetCurProcessingRankId, GetGlobalRankId, GetSequenceBounds, Gpsimdsb2sb,
    Instruction, Sync, TensorCompletion, UpdateMode, WaitMode,
};
use tpb_core::lut::{AluOp, CollectiveKind};

/// Debug bytes and an events band with member modes (SPEC §1; FACTS §2 \[H\]).
pub fn sync(u: &mut Unstructured<'_>) -> Result<Sync> {
    Ok(Sync {
        debug_cmd: u.arbitrary()?,
        debug_hint: u.arbitrary()?,
        wait_mode: WaitMode(*u.choose(&WAIT_MEMBERS)?),
        wait_idx: u.arbitrary()?,
        update_mode: UpdateMode(*u.choose(&UPDATE_MEMBERS)?),
        update_idx: u.arbitrary()?,
        semaphore_value: u.arbitrary()?,
    })
}

/// A member of a table, a quarter of the time its first or last.
fn member<T: Copy>(u: &mut Unstructured<'_>, table: &[T]) -> Result<T> {
    if u.int_in_range(0..=3u8)? == 3 {
        if let (Some(&a), Some(&b)) = (table.first(), table.last()) {
            return Ok(if u.arbitrary()? { b } else { a });
        }
    }
    u.choose(table).copied()
}

/// A dtype tag of `arch`'s column (SPEC §6.4).
fn dtype_tag(u: &mut Unstructured<'_>, arch: Generation) -> Result<u8> {
    member(u, Domain::Dtype.values_for(arch).unwrap_or(&[0x01]))
}

fn cce_op(u: &mut Unstructured<'_>) -> Result<AluOp> {
    u.choose(&[AluOp::Bypass, AluOp::Add]).copied()
}

fn kind(u: &mut Unstructured<'_>) -> Result<CollectiveKind> {
    member(u, &CollectiveKind::ALL[2..])
}

pub(super) fn nonzero_u8(u: &mut Unstructured<'_>) -> Result<u8> {
    u.int_in_range(1..=0xFF)
}

/// A nonzero u32, half the time one nonzero byte (to probe byte-precise masks).
pub(super) fn nonzero_u32(u: &mut Unstructured<'_>) -> Result<u32> {
    if u.ratio(1, 2)? {
        let pos = u.int_in_range(0..=3u32)?;
        Ok(u32::from(nonzero_u8(u)?) << (8 * pos))
    } else {
        Ok(u.int_in_range(1..=u32::MAX)?)
    }
}

/// The scratch descriptor: all zero, or nonzero 0x10, 0x18, 0x1C with any 0x14 (D-4).
pub(super) fn scratch(u: &mut Unstructured<'_>) -> Result<(u8, u32, u32, u8)> {
    if u.ratio(2, 3)? {
        return Ok((0, 0, 0, 0));
    }
    Ok((
        nonzero_u8(u)?,
        u.arbitrary()?,
        nonzero_u32(u)?,
        nonzero_u8(u)?,
    ))
}

/// A valid instruction of record opcode `opcode` under `arch`; one without an arm here is
/// [`GenError::NoGenerator`], never another opcode's instruction.
pub fn instruction_of(
    u: &mut Unstructured<'_>,
    opcode: u8,
    arch: Generation,
) -> std::result::Result<Instruction, GenError> {
    let dtype_tag = |u: &mut Unstructured<'_>| dtype_tag(u, arch);
    // `T { field, field: draw }`: fields drawn in the order written (the order is the case):
    // `sync` by [`sync`], a given draw, else `u.arbitrary()`.
    macro_rules! rec {
        ($t:ident { $($f:ident $(: $e:expr)?),* }) => {
            Instruction::from($t { $($f: rec!(@ $f $($e)?)),* })
        };
        (@ $f:ident $e:expr) => { $e };
        (@ sync) => { sync(u)? };
        (@ $f:ident) => { u.arbitrary()? };
    }
    Ok(match opcode {
        CustomOpHeader::OPCODE => {
            let sync = sync(u)?;
            let num_arguments: u8 = u.arbitrary()?;
            let num_payloads = if u.ratio(3, 4)? {
                u16::from(num_arguments) + 2
            } else {
                u.arbitrary()?
            };
            let (b10, d14, d18, b1c) = scratch(u)?;
            CustomOpHeader {
                sync,
                num_payloads,
                function_id: u.arbitrary()?,
                num_arguments,
                has_scratch_space: b10,
                scratch_space_addr: d14,
                scratch_space_size: d18,
                scratch_space_num_partitions: b1c,
            }
            .into()
        }
        CustomOpPayload::OPCODE => {
            rec! { CustomOpPayload { sync, arg_type: *u.choose(&[1, 2])?, ap } }
        }
        CollectiveCompute::OPCODE => rec! {
            CollectiveCompute { sync, cce_op: cce_op(u)?, dtype: dtype_tag(u)?, kind: kind(u)?, ap }
        },
        CollectiveComputeSecondary::OPCODE => rec! {
            CollectiveComputeSecondary {
                channel_id, cce_op: cce_op(u)?, dtype: dtype_tag(u)?, kind: kind(u)?, ap
            }
        },
        CollectiveSendRecv::OPCODE => rec! {
            CollectiveSendRecv { sync, tensor_id, tensor_base, num_elements_per_partition }
        },
        Gpsimdsb2sb::OPCODE => rec! {
            Gpsimdsb2sb {
                sync, src_dtype: dtype_tag(u)?, dst_dtype: dtype_tag(u)?, src_ap, peer_partition, dst_ap
            }
        },
        GetSequenceBounds::OPCODE => rec! {
            GetSequenceBounds { sync, dtype: dtype_tag(u)?, flag_0e, flag_0f, in_ap, out_ap }
        },
        CoreBarrier::OPCODE => rec! { CoreBarrier { sync, barrier_id, barrier_index, sema_ap } },
        GetGlobalRankId::OPCODE => rec! { GetGlobalRankId { sync, valid, reg_id } },
        GetCurProcessingRankId::OPCODE => rec! {
            GetCurProcessingRankId { sync, group_id, channel_id, iteration_id, reg_id, stream_id }
        },
        TensorCompletion::OPCODE => rec! { TensorCompletion { sync, handle, ap_byte } },
        opcode => return Err(GenError::NoGenerator { opcode }),
    })
}

pub fn valid_instruction(
    u: &mut Unstructured<'_>,
    cfg: &Config,
) -> std::result::Result<Instruction, GenError> {
    let op = opcode(u, cfg)?;
    instruction_of(u, op, cfg.arch)
}

/// A valid-by-construction instruction core's encoder refused: a finding (SPEC §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodeRefused {
    pub instruction: Instruction,
    pub error: String,
}

impl std::fmt::Display for EncodeRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "core refused to encode a valid-by-construction instruction: {:?}: {}",
            self.instruction, self.error
        )
    }
}

/// Generation failed: out of data (never), core's encoder refused, or a record of
/// isa/records.tsv has no arm in `instruction_of`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenError {
    Arbitrary(arbitrary::Error),
    Encode(Box<EncodeRefused>),
    NoGenerator { opcode: u8 },
}

impl From<arbitrary::Error> for GenError {
    fn from(e: arbitrary::Error) -> Self {
        GenError::Arbitrary(e)
    }
}

impl std::fmt::Display for GenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenError::Arbitrary(e) => write!(f, "generator: {e}"),
            GenError::Encode(e) => e.fmt(f),
            GenError::NoGenerator { opcode } => {
                write!(
                    f,
                    "generator: no valid-instruction generator for opcode {opcode:#04x}"
                )
            }
        }
    }
}

impl std::error::Error for GenError {}

pub fn encode(i: &Instruction, arch: Generation) -> std::result::Result<[u8; 64], GenError> {
    i.encode(arch).map(|b| b.0).map_err(|e| {
        GenError::Encode(Box::new(EncodeRefused {
            instruction: *i,
            error: format!("{e:?}"),
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::OPCODES;

    #[test]
    fn every_record_opcode_has_its_own_generator_and_no_other_does() {
        let data = [0x5Au8; 4096];
        for arch in Generation::ALL {
            let gen = arch;
            for op in OPCODES.into_iter().filter(|&op| gen.emits(op)) {
                let mut u = Unstructured::new(&data);
                let i = instruction_of(&mut u, op, arch).expect("a generator");
                assert_eq!(i.opcode(), op);
                assert_eq!(encode(&i, arch).map(|b| b[0]), Ok(op));
            }
        }
        for op in [0x00u8, 0x01, 0x87, 0xFF] {
            let mut u = Unstructured::new(&data);
            assert_eq!(
                instruction_of(&mut u, op, Generation::V2),
                Err(GenError::NoGenerator { opcode: op })
            );
        }
    }
}
