//! CUSTOM_OP header (0x85), payload (0x86) and the group they form
//! (SPEC §3, §4, §5.3; S000 §C3; S003 §10).

use super::fields::{bytes, int, FieldList, Source};
use super::sync_band::{Sync, SYNC_FIELDS};
use super::{DecodeError, EncodeError};
use crate::bundle::Bundle;
use crate::layout::*;
use crate::validate::{validate_header, validate_payload};

/// Fills the skeleton every encoder writes: zeroed bundle, opcode, 0x10 tag, sync
/// (S003 "shared skeleton"; `setupHeader`).
pub(crate) fn skeleton(opcode: u8, sync: &Sync) -> Bundle {
    let mut b = Bundle::ZERO;
    b.put(OFF_OPCODE, &[opcode, INST_WORD_LEN]);
    sync.write(&mut b);
    b
}

/// Debug bytes [0x02..0x03] must be zero (S003 "reserved = 0x0000"; SPEC §5.1).
fn check_debug(b: &Bundle) -> Result<(), DecodeError> {
    for offset in [OFF_DEBUG, OFF_DEBUG + 1] {
        let value = b.byte(offset);
        if value != 0 {
            return Err(DecodeError::Reserved { offset, value });
        }
    }
    Ok(())
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
    /// +0x10 scratch triple part 1 (S000 (5)); this build emits 0.
    pub scratch_byte_10: u8,
    /// +0x14 counted only in the non-empty test (S000 (5); D-4).
    pub scratch_dword_14: u32,
    /// +0x18 scratch triple part 2.
    pub scratch_dword_18: u32,
    /// +0x1C scratch triple part 3.
    pub scratch_byte_1c: u8,
}

impl CustomOpHeader {
    /// Opcode. S000 (3).
    pub const OPCODE: u8 = OPCODE_CUSTOM_OP_HEADER;
    /// Field names after the sync band (SPEC §5.2).
    pub const FIELDS: [&'static str; 7] = [
        "num_payloads",
        "function_id",
        "num_arguments",
        "scratch_byte_10",
        "scratch_dword_14",
        "scratch_dword_18",
        "scratch_byte_1c",
    ];

    /// The S000 (5) rule: non-empty ⇒ byte[0x10], dword[0x18], byte[0x1C] all nonzero.
    fn check_scratch(&self) -> Result<(), EncodeError> {
        let nonempty = self.scratch_byte_10 != 0
            || self.scratch_dword_14 != 0
            || self.scratch_dword_18 != 0
            || self.scratch_byte_1c != 0;
        let full =
            self.scratch_byte_10 != 0 && self.scratch_dword_18 != 0 && self.scratch_byte_1c != 0;
        if nonempty && !full {
            return Err(EncodeError::ScratchSpaceVal {
                byte_10: self.scratch_byte_10,
                dword_18: self.scratch_dword_18,
                byte_1c: self.scratch_byte_1c,
            });
        }
        Ok(())
    }

    /// Encodes (S000 §C3; S003 §10).
    pub fn encode(&self) -> Result<Bundle, EncodeError> {
        self.sync.check()?;
        self.check_scratch()?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(OFF_NUM_PAYLOADS, &self.num_payloads.to_le_bytes());
        b.put(OFF_FUNCTION_ID, &[self.function_id]);
        b.put(OFF_NUM_ARGUMENTS, &[self.num_arguments]);
        b.put(OFF_SCRATCH_BYTE_10, &[self.scratch_byte_10]);
        b.put(OFF_SCRATCH_DWORD_14, &self.scratch_dword_14.to_le_bytes());
        b.put(OFF_SCRATCH_DWORD_18, &self.scratch_dword_18.to_le_bytes());
        b.put(OFF_SCRATCH_BYTE_1C, &[self.scratch_byte_1c]);
        Ok(b)
    }

    /// Reads the fields of a bundle already accepted by the header validator.
    pub fn read_validated(b: &Bundle) -> CustomOpHeader {
        CustomOpHeader {
            sync: Sync::read(b),
            num_payloads: u16::from_le_bytes(b.bytes(OFF_NUM_PAYLOADS)),
            function_id: b.byte(OFF_FUNCTION_ID),
            num_arguments: b.byte(OFF_NUM_ARGUMENTS),
            scratch_byte_10: b.byte(OFF_SCRATCH_BYTE_10),
            scratch_dword_14: u32::from_le_bytes(b.bytes(OFF_SCRATCH_DWORD_14)),
            scratch_dword_18: u32::from_le_bytes(b.bytes(OFF_SCRATCH_DWORD_18)),
            scratch_byte_1c: b.byte(OFF_SCRATCH_BYTE_1C),
        }
    }

    /// Decodes: header validator, then debug bytes (SPEC §5.1).
    pub fn decode(b: &Bundle) -> Result<CustomOpHeader, DecodeError> {
        validate_header(b)?;
        check_debug(b)?;
        Ok(Self::read_validated(b))
    }

    /// `num_arguments + 2` (S000 §C3).
    pub fn expected_num_payloads(&self) -> u32 {
        u32::from(self.num_arguments) + 2
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("num_payloads", int(self.num_payloads)));
        out.push(("function_id", int(self.function_id)));
        out.push(("num_arguments", int(self.num_arguments)));
        out.push(("scratch_byte_10", int(self.scratch_byte_10)));
        out.push(("scratch_dword_14", int(self.scratch_dword_14)));
        out.push(("scratch_dword_18", int(self.scratch_dword_18)));
        out.push(("scratch_byte_1c", int(self.scratch_byte_1c)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(src: &Source<'_, S>) -> Result<Self, EncodeError> {
        let h = CustomOpHeader {
            sync: Sync::from_source(src)?,
            num_payloads: src.u16("num_payloads")?,
            function_id: src.u8("function_id")?,
            num_arguments: src.u8("num_arguments")?,
            scratch_byte_10: src.u8("scratch_byte_10")?,
            scratch_dword_14: src.u32("scratch_dword_14")?,
            scratch_dword_18: src.u32("scratch_dword_18")?,
            scratch_byte_1c: src.u8("scratch_byte_1c")?,
        };
        h.check_scratch()?;
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(h)
    }
}

/// A 0x86 CustomOpPayload (SPEC §4; S000 §C3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CustomOpPayload {
    /// Sync band (zero in encoder-emitted groups, S000 §C3).
    pub sync: Sync,
    /// +0x10..+0x3F ADDR4 access pattern, opaque (D-5).
    pub ap: [u8; 48],
}

impl Default for CustomOpPayload {
    fn default() -> Self {
        CustomOpPayload {
            sync: Sync::default(),
            ap: [0; 48],
        }
    }
}

impl CustomOpPayload {
    /// Opcode. S000 payload (3).
    pub const OPCODE: u8 = OPCODE_CUSTOM_OP_PAYLOAD;
    /// Field names after the sync band (SPEC §5.2).
    pub const FIELDS: [&'static str; 1] = ["ap"];

    /// Encodes: `[0x0F]=1`, `[0x10..0x3F]=ap` (S000 §C3).
    pub fn encode(&self) -> Result<Bundle, EncodeError> {
        self.sync.check()?;
        let mut b = skeleton(Self::OPCODE, &self.sync);
        b.put(OFF_PAYLOAD_MARKER, &[PAYLOAD_MARKER]);
        b.put(OFF_PAYLOAD_AP, &self.ap);
        Ok(b)
    }

    /// Reads the fields of a bundle already accepted by the payload validator.
    pub fn read_validated(b: &Bundle) -> CustomOpPayload {
        CustomOpPayload {
            sync: Sync::read(b),
            ap: b.bytes(OFF_PAYLOAD_AP),
        }
    }

    /// Decodes: payload validator, debug bytes, then the 0x01 marker (SPEC §5.1; D-8).
    pub fn decode(b: &Bundle) -> Result<CustomOpPayload, DecodeError> {
        validate_payload(b)?;
        check_debug(b)?;
        let value = b.byte(OFF_PAYLOAD_MARKER);
        if value != PAYLOAD_MARKER {
            return Err(DecodeError::Marker { value });
        }
        Ok(Self::read_validated(b))
    }

    pub(crate) fn push_fields(&self, out: &mut FieldList) {
        self.sync.push_fields(out);
        out.push(("ap", bytes(&self.ap)));
    }

    pub(crate) fn from_source<S: AsRef<str>>(src: &Source<'_, S>) -> Result<Self, EncodeError> {
        let p = CustomOpPayload {
            sync: Sync::from_source(src)?,
            ap: src.bytes("ap")?,
        };
        src.reject_unknown(&[&SYNC_FIELDS, &Self::FIELDS])?;
        Ok(p)
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
    /// Header +0x10.
    pub scratch_byte_10: u8,
    /// Header +0x14.
    pub scratch_dword_14: u32,
    /// Header +0x18.
    pub scratch_dword_18: u32,
    /// Header +0x1C.
    pub scratch_byte_1c: u8,
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
            scratch_byte_10: self.scratch_byte_10,
            scratch_dword_14: self.scratch_dword_14,
            scratch_dword_18: self.scratch_dword_18,
            scratch_byte_1c: self.scratch_byte_1c,
        })
    }

    /// Encodes to `n_args + 2` bundles: header, output, args.
    pub fn encode(&self) -> Result<Vec<Bundle>, EncodeError> {
        let header = self.header()?.encode()?;
        let mut out = Vec::with_capacity(self.args.len() + 2);
        out.push(header);
        for ap in core::iter::once(&self.output).chain(self.args.iter()) {
            out.push(
                CustomOpPayload {
                    sync: Sync::default(),
                    ap: *ap,
                }
                .encode()?,
            );
        }
        Ok(out)
    }

    /// Decodes exactly one group image (the inverse of [`CustomOpGroup::encode`]).
    pub fn decode(bundles: &[Bundle]) -> Result<CustomOpGroup, DecodeError> {
        let first = bundles.first().ok_or(DecodeError::GroupShape {
            expected: 2,
            found: 0,
        })?;
        let h = CustomOpHeader::decode(first)?;
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
            let p = CustomOpPayload::decode(b)?;
            if p.sync != Sync::default() {
                return Err(DecodeError::GroupPayloadSync { index });
            }
            aps.push(p.ap);
        }
        let mut it = aps.into_iter();
        let output = it.next().unwrap_or([0; 48]);
        Ok(CustomOpGroup {
            sync: h.sync,
            function_id: h.function_id,
            scratch_byte_10: h.scratch_byte_10,
            scratch_dword_14: h.scratch_dword_14,
            scratch_dword_18: h.scratch_dword_18,
            scratch_byte_1c: h.scratch_byte_1c,
            output,
            args: it.collect(),
        })
    }
}
