//! CUSTOM_OP header (0x85), payload (0x86) and the group they form
//! (SPEC §3, §4, §5.3; S000 §C3; S003 §10).

use super::sync_band::Sync;
use super::{DecodeError, EncodeError};
use crate::bundle::Bundle;
use crate::generation::Generation;
use crate::layout::custom_op_payload::OFF_ARG_TYPE;
use crate::layout::{ARG_TYPE_ARRAY_OF_TENSOR, ARG_TYPE_TENSOR, INST_WORD_LEN, OFF_OPCODE};
use crate::validate::{validate_header, validate_payload};

/// Fills the skeleton every encoder writes: zeroed bundle, opcode, 0x10 tag, sync
/// (S003 "shared skeleton"; `setupHeader`).
pub(crate) fn skeleton(opcode: u8, sync: &Sync) -> Bundle {
    let mut b = Bundle::ZERO;
    b.put(OFF_OPCODE, &[opcode, INST_WORD_LEN]);
    sync.write(&mut b);
    b
}

/// The generation's compiler must be able to emit `opcode` (seed 003 §"At a glance"; D-22).
pub(crate) fn emitted(gen: Generation, opcode: u8) -> Result<(), EncodeError> {
    if gen.emits(opcode) {
        Ok(())
    } else {
        Err(EncodeError::NotEmitted {
            opcode,
            generation: gen,
        })
    }
}

/// A 0x85 CustomOpHeader (SPEC §3 field table; S000 §C3; S003 §10).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct CustomOpHeader {
    /// Sync band.
    pub sync: Sync,
    /// +0x0C u16; num_arguments + 2 in a well-formed group (S003 §10).
    pub num_payloads: u16,
    /// +0x0E (S000 §C3, §R1).
    pub function_id: u8,
    /// +0x0F (S003 §10 `lea [r13+0Fh]`).
    pub num_arguments: u8,
    /// +0x10 `has_scratch_space`, scratch triple part 1 (S000 (5); F§8); this build emits 0.
    pub has_scratch_space: u8,
    /// +0x14 `scratch_space_addr`, counted only in the non-empty test (S000 (5); D-4).
    pub scratch_space_addr: u32,
    /// +0x18 `scratch_space_size`, scratch triple part 2.
    pub scratch_space_size: u32,
    /// +0x1C `scratch_space_num_partitions`, scratch triple part 3.
    pub scratch_space_num_partitions: u8,
}

record_codec!(CustomOpHeader, custom_op_header, check = check_scratch, {
    num_payloads @ OFF_NUM_PAYLOADS,
    function_id @ OFF_FUNCTION_ID,
    num_arguments @ OFF_NUM_ARGUMENTS,
    has_scratch_space @ OFF_HAS_SCRATCH_SPACE,
    scratch_space_addr @ OFF_SCRATCH_SPACE_ADDR,
    scratch_space_size @ OFF_SCRATCH_SPACE_SIZE,
    scratch_space_num_partitions @ OFF_SCRATCH_SPACE_NUM_PARTITIONS,
});

impl CustomOpHeader {
    /// The S000 (5) rule: non-empty ⇒ byte\[0x10\], dword\[0x18\], byte\[0x1C\] all nonzero.
    fn check_scratch(&self) -> Result<(), EncodeError> {
        let nonempty = self.has_scratch_space != 0
            || self.scratch_space_addr != 0
            || self.scratch_space_size != 0
            || self.scratch_space_num_partitions != 0;
        let full = self.has_scratch_space != 0
            && self.scratch_space_size != 0
            && self.scratch_space_num_partitions != 0;
        if nonempty && !full {
            return Err(EncodeError::ScratchSpaceVal {
                has_scratch_space: self.has_scratch_space,
                scratch_space_size: self.scratch_space_size,
                scratch_space_num_partitions: self.scratch_space_num_partitions,
            });
        }
        Ok(())
    }

    /// Reads the fields of a bundle already accepted by the header validator.
    pub fn read_validated(b: &Bundle) -> CustomOpHeader {
        Self::read_fields(b)
    }

    /// Decodes: the generation's header validator is the whole check (SPEC §5.1).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<CustomOpHeader, DecodeError> {
        validate_header(b, gen)?;
        Ok(Self::read_validated(b))
    }

    /// `num_arguments + 2` (S000 §C3).
    pub fn expected_num_payloads(&self) -> u32 {
        u32::from(self.num_arguments) + 2
    }
}

/// A 0x86 CustomOpPayload (SPEC §4; S000 §C3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CustomOpPayload {
    /// Sync band (zero in encoder-emitted groups, S000 §C3).
    pub sync: Sync,
    /// +0x0F `arg_type`: TENSOR 1 or ARRAY_OF_TENSOR 2 (F§8 \[H\]; S000 AC03-C2 "marker").
    pub arg_type: u8,
    /// +0x10..+0x3F ADDR4 access pattern, opaque (D-5).
    pub ap: [u8; 48],
}

impl Default for CustomOpPayload {
    fn default() -> Self {
        CustomOpPayload {
            sync: Sync::default(),
            arg_type: ARG_TYPE_TENSOR,
            ap: [0; 48],
        }
    }
}

/// `arg_type` values that decode: TENSOR 1, ARRAY_OF_TENSOR 2 (F§8 \[H\]; INVALID 0 does not).
fn arg_type_ok(v: u8) -> bool {
    v == ARG_TYPE_TENSOR || v == ARG_TYPE_ARRAY_OF_TENSOR
}

/// An `arg_type` input must be TENSOR or ARRAY_OF_TENSOR (F§8 \[H\]).
fn arg_type_encodable(
    _field: &'static str,
    value: u8,
    _gen: Generation,
) -> Result<(), EncodeError> {
    if arg_type_ok(value) {
        Ok(())
    } else {
        Err(EncodeError::ArgType { value })
    }
}

// `[0x0F]=arg_type`, `[0x10..0x3F]=ap` (S000 §C3; F§8).
record_codec!(CustomOpPayload, custom_op_payload, {
    arg_type @ OFF_ARG_TYPE => arg_type_encodable,
    ap @ OFF_AP,
});

impl CustomOpPayload {
    /// Reads the fields of a bundle already accepted by the payload validator.
    pub fn read_validated(b: &Bundle) -> CustomOpPayload {
        Self::read_fields(b)
    }

    /// Decodes: payload validator, then `arg_type` ∈ {1, 2} (SPEC §5.1; D-8).
    pub fn decode(b: &Bundle, gen: Generation) -> Result<CustomOpPayload, DecodeError> {
        validate_payload(b, gen)?;
        let value = b.byte(OFF_ARG_TYPE);
        if !arg_type_ok(value) {
            return Err(DecodeError::ArgType { value });
        }
        Ok(Self::read_validated(b))
    }
}

/// A whole custom-op group: header, output payload, N argument payloads
/// (S000 §C3 "0x85 HEADER … 0x86 OUTPUT … N×0x86 ARG"; SPEC §5.3).
///
/// The header carries the sync band; payloads carry none (S000 §C3 lists only
/// `[0x0F]=1` and the AP for them).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct CustomOpGroup {
    /// Header sync band.
    pub sync: Sync,
    /// Header +0x0E.
    pub function_id: u8,
    /// Header +0x10 `has_scratch_space`.
    pub has_scratch_space: u8,
    /// Header +0x14 `scratch_space_addr`.
    pub scratch_space_addr: u32,
    /// Header +0x18 `scratch_space_size`.
    pub scratch_space_size: u32,
    /// Header +0x1C `scratch_space_num_partitions`.
    pub scratch_space_num_partitions: u8,
    /// Output access pattern (the first 0x86).
    pub output: [u8; 48],
    /// Argument access patterns.
    pub args: Vec<[u8; 48]>,
}

impl CustomOpGroup {
    /// The header this group encodes to (`num_payloads = n_args + 2`, S000 §C3).
    pub fn header(&self) -> Result<CustomOpHeader, EncodeError> {
        let n = self.args.len();
        let num_arguments = u8::try_from(n).map_err(|_| EncodeError::TooManyArguments { n })?;
        Ok(CustomOpHeader {
            sync: self.sync,
            num_payloads: u16::from(num_arguments) + 2,
            function_id: self.function_id,
            num_arguments,
            has_scratch_space: self.has_scratch_space,
            scratch_space_addr: self.scratch_space_addr,
            scratch_space_size: self.scratch_space_size,
            scratch_space_num_partitions: self.scratch_space_num_partitions,
        })
    }

    /// Encodes to `n_args + 2` bundles: header, output, args; payloads are TENSOR
    /// (S000 §C3 `[0x0F]=1`).
    pub fn encode(&self, gen: Generation) -> Result<Vec<Bundle>, EncodeError> {
        let header = self.header()?.encode(gen)?;
        let mut out = Vec::with_capacity(self.args.len() + 2);
        out.push(header);
        for ap in core::iter::once(&self.output).chain(self.args.iter()) {
            out.push(
                CustomOpPayload {
                    sync: Sync::default(),
                    arg_type: ARG_TYPE_TENSOR,
                    ap: *ap,
                }
                .encode(gen)?,
            );
        }
        Ok(out)
    }

    /// Decodes exactly one group image (the inverse of [`CustomOpGroup::encode`]): payloads
    /// must carry no sync band (D-19) and `arg_type` TENSOR (D-23).
    pub fn decode(bundles: &[Bundle], gen: Generation) -> Result<CustomOpGroup, DecodeError> {
        let first = bundles.first().ok_or(DecodeError::GroupShape {
            expected: 2,
            found: 0,
        })?;
        let h = CustomOpHeader::decode(first, gen)?;
        if u32::from(h.num_payloads) != h.expected_num_payloads() {
            return Err(DecodeError::GroupPayloadCount {
                num_payloads: h.num_payloads,
                num_arguments: h.num_arguments,
            });
        }
        let expected = usize::from(h.num_arguments) + 2;
        if bundles.len() != expected {
            return Err(DecodeError::GroupShape {
                expected,
                found: bundles.len(),
            });
        }
        let mut aps = Vec::with_capacity(expected - 1);
        for (index, b) in bundles.iter().enumerate().skip(1) {
            let p = CustomOpPayload::decode(b, gen)?;
            if p.sync != Sync::default() {
                return Err(DecodeError::GroupPayloadSync { index });
            }
            if p.arg_type != ARG_TYPE_TENSOR {
                return Err(DecodeError::GroupArgType {
                    index,
                    value: p.arg_type,
                });
            }
            aps.push(p.ap);
        }
        let mut it = aps.into_iter();
        let output = it.next().unwrap_or([0; 48]);
        Ok(CustomOpGroup {
            sync: h.sync,
            function_id: h.function_id,
            has_scratch_space: h.has_scratch_space,
            scratch_space_addr: h.scratch_space_addr,
            scratch_space_size: h.scratch_space_size,
            scratch_space_num_partitions: h.scratch_space_num_partitions,
            output,
            args: it.collect(),
        })
    }
}
