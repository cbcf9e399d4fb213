//! Typed instructions: one struct per opcode family, the [`Instruction`] sum,
//! [`decode`] and the canonical field list (SPEC §5).

mod check;
mod collective;
mod custom_op;
mod engine;
mod error;
mod fields;
mod sync_band;

pub use collective::{CollectiveCompute, CollectiveComputeSecondary, CollectiveSendRecv};
pub use custom_op::{CustomOpGroup, CustomOpHeader, CustomOpPayload};
pub use engine::{
    CoreBarrier, GetCurProcessingRankId, GetGlobalRankId, GetSequenceBounds, Gpsimdsb2sb,
    TensorCompletion,
};
pub use error::{DecodeError, EncodeError};
pub use fields::{FieldList, FieldValue};
pub use sync_band::{Sync, UpdateMode, WaitMode, SYNC_FIELDS};

use crate::bundle::Bundle;
use crate::generation::Generation;
use fields::Source;

/// A struct decoder refuses a bundle of another opcode, and one the generation's compiler does
/// not emit (D-22).
pub(crate) fn expect_opcode(b: &Bundle, opcode: u8, gen: Generation) -> Result<(), DecodeError> {
    let op = b.opcode();
    if op != opcode {
        Err(DecodeError::Opcode { opcode: op })
    } else if !gen.emits(op) {
        Err(DecodeError::NotEmitted {
            opcode: op,
            generation: gen,
        })
    } else {
        Ok(())
    }
}

/// One decoded bundle of the eleven seed opcodes (S003 §"At a glance").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Instruction {
    /// 0x85.
    CustomOpHeader(CustomOpHeader),
    /// 0x86.
    CustomOpPayload(CustomOpPayload),
    /// 0xD9.
    CollectiveCompute(CollectiveCompute),
    /// 0xDA.
    CollectiveComputeSecondary(CollectiveComputeSecondary),
    /// 0xCB.
    CollectiveSendRecv(CollectiveSendRecv),
    /// 0xBF.
    Gpsimdsb2sb(Gpsimdsb2sb),
    /// 0xBE.
    GetSequenceBounds(GetSequenceBounds),
    /// 0xD8.
    CoreBarrier(CoreBarrier),
    /// 0xDC.
    GetGlobalRankId(GetGlobalRankId),
    /// 0xDB.
    GetCurProcessingRankId(GetCurProcessingRankId),
    /// 0xDE.
    TensorCompletion(TensorCompletion),
}

macro_rules! each_variant {
    ($self:expr, $v:ident => $e:expr) => {
        match $self {
            Instruction::CustomOpHeader($v) => $e,
            Instruction::CustomOpPayload($v) => $e,
            Instruction::CollectiveCompute($v) => $e,
            Instruction::CollectiveComputeSecondary($v) => $e,
            Instruction::CollectiveSendRecv($v) => $e,
            Instruction::Gpsimdsb2sb($v) => $e,
            Instruction::GetSequenceBounds($v) => $e,
            Instruction::CoreBarrier($v) => $e,
            Instruction::GetGlobalRankId($v) => $e,
            Instruction::GetCurProcessingRankId($v) => $e,
            Instruction::TensorCompletion($v) => $e,
        }
    };
}

impl Instruction {
    /// The opcode byte.
    pub fn opcode(&self) -> u8 {
        match self {
            Instruction::CustomOpHeader(_) => CustomOpHeader::OPCODE,
            Instruction::CustomOpPayload(_) => CustomOpPayload::OPCODE,
            Instruction::CollectiveCompute(_) => CollectiveCompute::OPCODE,
            Instruction::CollectiveComputeSecondary(_) => CollectiveComputeSecondary::OPCODE,
            Instruction::CollectiveSendRecv(_) => CollectiveSendRecv::OPCODE,
            Instruction::Gpsimdsb2sb(_) => Gpsimdsb2sb::OPCODE,
            Instruction::GetSequenceBounds(_) => GetSequenceBounds::OPCODE,
            Instruction::CoreBarrier(_) => CoreBarrier::OPCODE,
            Instruction::GetGlobalRankId(_) => GetGlobalRankId::OPCODE,
            Instruction::GetCurProcessingRankId(_) => GetCurProcessingRankId::OPCODE,
            Instruction::TensorCompletion(_) => TensorCompletion::OPCODE,
        }
    }

    /// The SPEC §5.2 mnemonic.
    pub fn mnemonic(&self) -> &'static str {
        crate::roster::mnemonic(self.opcode()).unwrap_or("")
    }

    /// Encodes to one bundle as generation `gen`'s compiler would (SPEC §5); an opcode that
    /// compiler cannot emit is [`EncodeError::NotEmitted`].
    pub fn encode(&self, gen: Generation) -> Result<Bundle, EncodeError> {
        each_variant!(self, v => v.encode(gen))
    }

    /// The canonical field list, SPEC §5.2 names and order.
    pub fn fields(&self) -> FieldList {
        let mut out = Vec::with_capacity(12);
        each_variant!(self, v => v.push_fields(&mut out));
        out
    }

    /// The canonical field names of an opcode (sync fields first except 0xDA).
    pub fn field_names(opcode: u8) -> Option<Vec<&'static str>> {
        let (sync, rest): (&[&str], &[&str]) = match opcode {
            0x85 => (&SYNC_FIELDS, &CustomOpHeader::FIELDS),
            0x86 => (&SYNC_FIELDS, &CustomOpPayload::FIELDS),
            0xD9 => (&SYNC_FIELDS, &CollectiveCompute::FIELDS),
            0xDA => (&[], &CollectiveComputeSecondary::FIELDS),
            0xCB => (&SYNC_FIELDS, &CollectiveSendRecv::FIELDS),
            0xBF => (&SYNC_FIELDS, &Gpsimdsb2sb::FIELDS),
            0xBE => (&SYNC_FIELDS, &GetSequenceBounds::FIELDS),
            0xD8 => (&SYNC_FIELDS, &CoreBarrier::FIELDS),
            0xDC => (&SYNC_FIELDS, &GetGlobalRankId::FIELDS),
            0xDB => (&SYNC_FIELDS, &GetCurProcessingRankId::FIELDS),
            0xDE => (&SYNC_FIELDS, &TensorCompletion::FIELDS),
            _ => return None,
        };
        Some(sync.iter().chain(rest).copied().collect())
    }

    /// Inverse of [`Instruction::fields`]: errors name the first bad field in list
    /// order (SPEC §5.2); then any input name outside the list is `UnknownField`.
    pub fn from_fields<S: AsRef<str>>(
        opcode: u8,
        fields: &[(S, FieldValue)],
        gen: Generation,
    ) -> Result<Instruction, EncodeError> {
        let src = Source::new(fields);
        Ok(match opcode {
            0x85 => Instruction::CustomOpHeader(CustomOpHeader::from_source(&src, gen)?),
            0x86 => Instruction::CustomOpPayload(CustomOpPayload::from_source(&src, gen)?),
            0xD9 => Instruction::CollectiveCompute(CollectiveCompute::from_source(&src, gen)?),
            0xDA => Instruction::CollectiveComputeSecondary(
                CollectiveComputeSecondary::from_source(&src, gen)?,
            ),
            0xCB => Instruction::CollectiveSendRecv(CollectiveSendRecv::from_source(&src, gen)?),
            0xBF => Instruction::Gpsimdsb2sb(Gpsimdsb2sb::from_source(&src, gen)?),
            0xBE => Instruction::GetSequenceBounds(GetSequenceBounds::from_source(&src, gen)?),
            0xD8 => Instruction::CoreBarrier(CoreBarrier::from_source(&src, gen)?),
            0xDC => Instruction::GetGlobalRankId(GetGlobalRankId::from_source(&src, gen)?),
            0xDB => {
                Instruction::GetCurProcessingRankId(GetCurProcessingRankId::from_source(&src, gen)?)
            }
            0xDE => Instruction::TensorCompletion(TensorCompletion::from_source(&src, gen)?),
            _ => return Err(EncodeError::Opcode { opcode }),
        })
    }
}

/// Decodes one bundle as generation `gen` (SPEC §5.1 failure order), dispatching on byte[0].
pub fn decode(b: &Bundle, gen: Generation) -> Result<Instruction, DecodeError> {
    Ok(match b.opcode() {
        CustomOpHeader::OPCODE => Instruction::CustomOpHeader(CustomOpHeader::decode(b, gen)?),
        CustomOpPayload::OPCODE => Instruction::CustomOpPayload(CustomOpPayload::decode(b, gen)?),
        CollectiveCompute::OPCODE => {
            Instruction::CollectiveCompute(CollectiveCompute::decode(b, gen)?)
        }
        CollectiveComputeSecondary::OPCODE => {
            Instruction::CollectiveComputeSecondary(CollectiveComputeSecondary::decode(b, gen)?)
        }
        CollectiveSendRecv::OPCODE => {
            Instruction::CollectiveSendRecv(CollectiveSendRecv::decode(b, gen)?)
        }
        Gpsimdsb2sb::OPCODE => Instruction::Gpsimdsb2sb(Gpsimdsb2sb::decode(b, gen)?),
        GetSequenceBounds::OPCODE => {
            Instruction::GetSequenceBounds(GetSequenceBounds::decode(b, gen)?)
        }
        CoreBarrier::OPCODE => Instruction::CoreBarrier(CoreBarrier::decode(b, gen)?),
        GetGlobalRankId::OPCODE => Instruction::GetGlobalRankId(GetGlobalRankId::decode(b, gen)?),
        GetCurProcessingRankId::OPCODE => {
            Instruction::GetCurProcessingRankId(GetCurProcessingRankId::decode(b, gen)?)
        }
        TensorCompletion::OPCODE => {
            Instruction::TensorCompletion(TensorCompletion::decode(b, gen)?)
        }
        opcode => return Err(DecodeError::Opcode { opcode }),
    })
}

macro_rules! impl_from {
    ($($t:ident),*) => {$(
        impl From<$t> for Instruction {
            fn from(v: $t) -> Self { Instruction::$t(v) }
        }
    )*};
}
impl_from!(
    CustomOpHeader,
    CustomOpPayload,
    CollectiveCompute,
    CollectiveComputeSecondary,
    CollectiveSendRecv,
    Gpsimdsb2sb,
    GetSequenceBounds,
    CoreBarrier,
    GetGlobalRankId,
    GetCurProcessingRankId,
    TensorCompletion
);
