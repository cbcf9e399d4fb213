//! The CUSTOM_OP wire validators (SPEC §3, §4).
//!
//! Core follows the binary's qword-mask formulation (S000 §Algorithm): the bundle
//! is read as eight little-endian qwords and each predicate is a mask test. The
//! happy path is one combined branch; the failing predicate is only located on
//! the cold path. No allocation.

use crate::bundle::Bundle;
use crate::events::{is_update_mode, is_wait_mode};
use crate::generation::Generation;
use crate::layout::*;
use core::fmt;

/// The named predicates of the two validators, in chain order.
/// S000 §"The five named predicates".
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Predicate {
    /// byte\[0\] in the generation's opcode enum. S000 (1) `is_valid_enum(OPCODE=4,u[0])`; F§1.
    ValidOpcode,
    /// byte\[1\] == 0x10. S000 (1) `cmpb 0x10`.
    InstWordLen,
    /// byte\[4\] ∈ WAIT_MODE and byte\[6\] ∈ UPDATE_MODE, INVALID excluded. S000 (2); F§2 \[H\].
    HasValidNeuronEvents,
    /// byte\[0\] == 0x85. S000 header (3).
    IsCustomOpHeaderOpcode,
    /// Header reserved bytes zero. S000 header (4), AC03-C1.
    CustomOpHeaderReservedZero,
    /// Scratch triple all-zero or all-nonzero. S000 header (5).
    CustomOpHeaderScratchSpaceVal,
    /// byte\[0\] == 0x86. S000 payload (3).
    IsCustomOpPayloadOpcode,
    /// Payload bytes 0x0C..=0x0E zero. S000 payload (4), AC03-C2.
    CustomOpPayloadReservedZero,
}

impl Predicate {
    /// All predicates.
    pub const ALL: [Predicate; 8] = [
        Predicate::ValidOpcode,
        Predicate::InstWordLen,
        Predicate::HasValidNeuronEvents,
        Predicate::IsCustomOpHeaderOpcode,
        Predicate::CustomOpHeaderReservedZero,
        Predicate::CustomOpHeaderScratchSpaceVal,
        Predicate::IsCustomOpPayloadOpcode,
        Predicate::CustomOpPayloadReservedZero,
    ];

    /// The SPEC §3/§4 snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Predicate::ValidOpcode => "valid_opcode",
            Predicate::InstWordLen => "inst_word_len",
            Predicate::HasValidNeuronEvents => "has_valid_neuron_events",
            Predicate::IsCustomOpHeaderOpcode => "is_custom_op_header_opcode",
            Predicate::CustomOpHeaderReservedZero => "custom_op_header_reserved_zero",
            Predicate::CustomOpHeaderScratchSpaceVal => "custom_op_header_scratch_space_val",
            Predicate::IsCustomOpPayloadOpcode => "is_custom_op_payload_opcode",
            Predicate::CustomOpPayloadReservedZero => "custom_op_payload_reserved_zero",
        }
    }

    /// Inverse of [`Predicate::name`].
    pub fn from_name(s: &str) -> Option<Predicate> {
        Predicate::ALL.iter().copied().find(|p| p.name() == s)
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a bundle failed a validator; each variant carries the offending value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum ValidationError {
    /// byte\[0\] is not in the generation's opcode enum (F§1).
    ValidOpcode {
        /// byte\[0\].
        opcode: u8,
        /// The generation whose enum was asked.
        generation: Generation,
    },
    /// byte\[1\] != 0x10.
    InstWordLen {
        /// byte\[1\].
        value: u8,
    },
    /// byte\[4\] ∉ WAIT_MODE or byte\[6\] ∉ UPDATE_MODE (F§2 \[H\]).
    HasValidNeuronEvents {
        /// byte\[4\].
        wait_mode: u8,
        /// byte\[6\].
        update_mode: u8,
    },
    /// Header validator saw a roster opcode other than 0x85.
    IsCustomOpHeaderOpcode {
        /// byte\[0\].
        opcode: u8,
    },
    /// A header reserved byte is nonzero; the lowest such offset and its value.
    CustomOpHeaderReservedZero {
        /// Offset of the first nonzero reserved byte.
        offset: usize,
        /// Its value.
        value: u8,
    },
    /// The scratch descriptor is non-empty but not fully populated.
    CustomOpHeaderScratchSpaceVal {
        /// byte\[0x10\] `has_scratch_space`.
        has_scratch_space: u8,
        /// dword\[0x14\] `scratch_space_addr`.
        scratch_space_addr: u32,
        /// dword\[0x18\] `scratch_space_size`.
        scratch_space_size: u32,
        /// byte\[0x1C\] `scratch_space_num_partitions`.
        scratch_space_num_partitions: u8,
    },
    /// Payload validator saw a roster opcode other than 0x86.
    IsCustomOpPayloadOpcode {
        /// byte\[0\].
        opcode: u8,
    },
    /// A payload reserved byte (0x0C..=0x0E) is nonzero; the lowest such offset.
    CustomOpPayloadReservedZero {
        /// Offset of the first nonzero reserved byte.
        offset: usize,
        /// Its value.
        value: u8,
    },
}

impl ValidationError {
    /// The predicate that failed.
    pub fn predicate(&self) -> Predicate {
        match self {
            ValidationError::ValidOpcode { .. } => Predicate::ValidOpcode,
            ValidationError::InstWordLen { .. } => Predicate::InstWordLen,
            ValidationError::HasValidNeuronEvents { .. } => Predicate::HasValidNeuronEvents,
            ValidationError::IsCustomOpHeaderOpcode { .. } => Predicate::IsCustomOpHeaderOpcode,
            ValidationError::CustomOpHeaderReservedZero { .. } => {
                Predicate::CustomOpHeaderReservedZero
            }
            ValidationError::CustomOpHeaderScratchSpaceVal { .. } => {
                Predicate::CustomOpHeaderScratchSpaceVal
            }
            ValidationError::IsCustomOpPayloadOpcode { .. } => Predicate::IsCustomOpPayloadOpcode,
            ValidationError::CustomOpPayloadReservedZero { .. } => {
                Predicate::CustomOpPayloadReservedZero
            }
        }
    }

    /// The byte offset the failed predicate is about.
    pub fn offset(&self) -> usize {
        match *self {
            ValidationError::ValidOpcode { .. }
            | ValidationError::IsCustomOpHeaderOpcode { .. }
            | ValidationError::IsCustomOpPayloadOpcode { .. } => OFF_OPCODE,
            ValidationError::InstWordLen { .. } => OFF_INST_WORD_LEN,
            ValidationError::HasValidNeuronEvents { wait_mode, .. } => {
                if is_wait_mode(wait_mode) {
                    OFF_UPDATE_MODE
                } else {
                    OFF_WAIT_MODE
                }
            }
            ValidationError::CustomOpHeaderReservedZero { offset, .. }
            | ValidationError::CustomOpPayloadReservedZero { offset, .. } => offset,
            // D-14: the first zero part of the triple (0x10, then 0x18, then 0x1C).
            ValidationError::CustomOpHeaderScratchSpaceVal {
                has_scratch_space,
                scratch_space_size,
                scratch_space_num_partitions,
                ..
            } => {
                if has_scratch_space == 0 {
                    OFF_HAS_SCRATCH_SPACE
                } else if scratch_space_size == 0 {
                    custom_op_header::OFF_SCRATCH_SPACE_SIZE
                } else if scratch_space_num_partitions == 0 {
                    custom_op_header::OFF_SCRATCH_SPACE_NUM_PARTITIONS
                } else {
                    OFF_HAS_SCRATCH_SPACE
                }
            }
        }
    }

    /// The `dbg` twin's message: `inst failed assertion check: '<predicate>'`
    /// (S000 §"The five named predicates").
    pub fn dbg_message(&self) -> String {
        format!("inst failed assertion check: '{}'", self.predicate().name())
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "inst failed assertion check: '{}'",
            self.predicate().name()
        )
    }
}

impl std::error::Error for ValidationError {}

#[inline(always)]
fn front_end(gen: Generation, q0: u64) -> (u8, bool, bool, bool) {
    let op = q0 as u8;
    let p1 = gen.is_valid_opcode(op);
    let p2 = (q0 >> 8) as u8 == INST_WORD_LEN;
    let p3 = events_ok(q0);
    (op, p1, p2, p3)
}

/// S000 (2): byte\[4\] and byte\[6\] each through is_valid_enum and `cmp $0xff`; F§2 \[H\].
#[inline(always)]
fn events_ok(q0: u64) -> bool {
    is_wait_mode((q0 >> 32) as u8) & is_update_mode((q0 >> 48) as u8)
}

/// (1) and (3) together: byte\[0\] is `opcode` and `opcode` is in the generation's enum
/// (a lookup on the generation only, so a loop over bundles hoists it); (2) with
/// them: byte\[1\] is 0x10, bytes 0..2 tested as one u16.
#[inline(always)]
fn opcode_and_len_ok(gen: Generation, q0: u64, opcode: u8) -> bool {
    ((q0 as u16) == u16::from_le_bytes([opcode, INST_WORD_LEN])) & gen.is_valid_opcode(opcode)
}

/// S000 header (4): (dword\[0x10\] | dword\[0x1C\]) & 0xFFFFFF00, then the 32-byte tail.
#[inline(always)]
fn header_reserved_ok(q: &[u64; 8]) -> bool {
    let [_, _, q2, q3, q4, q5, q6, q7] = *q;
    (((q2 as u32 | (q3 >> 32) as u32) & HDR_RESERVED_DWORD_MASK) == 0) & ((q4 | q5 | q6 | q7) == 0)
}

/// S000 header (5): non-empty => byte\[0x10\], dword\[0x18\], byte\[0x1C\] all nonzero.
#[inline(always)]
fn header_scratch_ok(q: &[u64; 8]) -> bool {
    let [_, _, q2, q3, ..] = *q;
    let nonempty = ((q2 & HDR_SCRATCH_Q10_MASK) | (q3 & HDR_SCRATCH_Q18_MASK)) != 0;
    let full = (q2 as u8 != 0) & (q3 as u32 != 0) & ((q3 >> 32) as u8 != 0);
    !nonempty | full
}

/// The header validator, `is_valid_custom_op_header` (S000 0x129b940; SPEC §3), as the
/// validator of generation `gen` (its opcode enum; S000 last NOTE: core_v3/v4 siblings).
///
/// The accept test is every predicate at once, branch-free; the failing predicate
/// is located only on the error path (`header_error`). Always inlined, with its
/// error path: a caller that reads only `is_ok()` (or only the predicate) keeps
/// only what it reads, so the accept/reject loop stays branch-free.
#[inline(always)]
pub fn validate_header(b: &Bundle, gen: Generation) -> Result<(), ValidationError> {
    let q = b.qwords();
    let ok = opcode_and_len_ok(gen, q[0], OPCODE_CUSTOM_OP_HEADER)
        & events_ok(q[0])
        & header_reserved_ok(&q)
        & header_scratch_ok(&q);
    if ok {
        Ok(())
    } else {
        Err(header_error(&q, gen))
    }
}

/// The error of a rejected header: the first failing predicate in chain order
/// (loop-free, inlined into the caller with [`validate_header`]).
#[inline(always)]
fn header_error(q: &[u64; 8], generation: Generation) -> ValidationError {
    let [q0, _q1, q2, q3, ..] = *q;
    let (op, p1, p2, p3) = front_end(generation, q0);
    // S000 header (3) `cmp bl,0x85`
    let p4 = op == OPCODE_CUSTOM_OP_HEADER;
    // One bit per failed predicate, chain order = bit order; the lowest set bit wins.
    let fail = u32::from(!p1)
        | u32::from(!p2) << 1
        | u32::from(!p3) << 2
        | u32::from(!p4) << 3
        | u32::from(!header_reserved_ok(q)) << 4
        | u32::from(!header_scratch_ok(q)) << 5;
    let first = fail.trailing_zeros();
    if let Some(e) = front_end_error(first, op, generation, q0) {
        return e;
    }
    match first {
        3 => ValidationError::IsCustomOpHeaderOpcode { opcode: op },
        4 => header_reserved_error(q),
        // 5 (and, unreachably, an all-pass mask)
        _ => ValidationError::CustomOpHeaderScratchSpaceVal {
            has_scratch_space: q2 as u8,
            scratch_space_addr: (q2 >> 32) as u32,
            scratch_space_size: q3 as u32,
            scratch_space_num_partitions: (q3 >> 32) as u8,
        },
    }
}

/// S000 payload (4) `(v28.i32[3] & 0xFFFFFF) == 0`: the reserved bytes 0x0C..=0x0E.
#[inline(always)]
fn payload_reserved(q1: u64) -> u32 {
    (q1 >> 32) as u32 & PAYLOAD_RESERVED_DWORD_MASK
}

/// The payload validator, `is_valid_custom_op_payload` (S000 dbg twin 0x129c610; SPEC §4),
/// as the validator of generation `gen`; accept test and error path as in
/// [`validate_header`].
#[inline(always)]
pub fn validate_payload(b: &Bundle, gen: Generation) -> Result<(), ValidationError> {
    let [q0, q1, ..] = b.qwords();
    let ok = opcode_and_len_ok(gen, q0, OPCODE_CUSTOM_OP_PAYLOAD)
        & events_ok(q0)
        & (payload_reserved(q1) == 0);
    if ok {
        Ok(())
    } else {
        Err(payload_error(q0, q1, gen))
    }
}

/// The error of a rejected payload: the first failing predicate in chain order
/// (inlined, as [`header_error`]).
#[inline(always)]
fn payload_error(q0: u64, q1: u64, generation: Generation) -> ValidationError {
    let (op, p1, p2, p3) = front_end(generation, q0);
    // S000 payload (3) `v10 == -122`
    let p4 = op == OPCODE_CUSTOM_OP_PAYLOAD;
    let reserved = payload_reserved(q1);
    let fail = u32::from(!p1)
        | u32::from(!p2) << 1
        | u32::from(!p3) << 2
        | u32::from(!p4) << 3
        | u32::from(reserved != 0) << 4;
    let first = fail.trailing_zeros();
    if let Some(e) = front_end_error(first, op, generation, q0) {
        return e;
    }
    match first {
        3 => ValidationError::IsCustomOpPayloadOpcode { opcode: op },
        _ => {
            // lowest nonzero byte of the 3-byte little-endian field at 0x0C
            let lane = reserved.trailing_zeros() / 8;
            ValidationError::CustomOpPayloadReservedZero {
                offset: 0x0C + lane as usize,
                value: (reserved >> (lane * 8)) as u8,
            }
        }
    }
}

/// The error of predicates #1..#3 (fail bits 0..=2, the [`front_end`] both
/// validators share) when `first` is one of them.
#[inline(always)]
fn front_end_error(first: u32, op: u8, generation: Generation, q0: u64) -> Option<ValidationError> {
    match first {
        0 => Some(ValidationError::ValidOpcode {
            opcode: op,
            generation,
        }),
        1 => Some(ValidationError::InstWordLen {
            value: (q0 >> 8) as u8,
        }),
        2 => Some(events_error(q0)),
        _ => None,
    }
}

#[inline]
fn events_error(q0: u64) -> ValidationError {
    ValidationError::HasValidNeuronEvents {
        wait_mode: (q0 >> 32) as u8,
        update_mode: (q0 >> 48) as u8,
    }
}

/// First nonzero header reserved byte, S000 §"The reserved-zero region":
/// [0x11..0x13] ∪ [0x1D..0x1F] ∪ [0x20..0x3F], i.e. qword\[0x10\] and qword\[0x18\]
/// under the reserved dword mask, then qwords 0x20..0x38 whole. The lowest set
/// byte of the first nonzero masked qword is the lowest offending offset.
#[inline(always)]
fn header_reserved_error(q: &[u64; 8]) -> ValidationError {
    let m = u64::from(HDR_RESERVED_DWORD_MASK);
    let [_, _, q2, q3, q4, q5, q6, q7] = *q;
    let words = [q2 & m, q3 & (m << 32), q4, q5, q6, q7];
    let (offset, value) = match words.iter().enumerate().find(|&(_, &w)| w != 0) {
        Some((k, &w)) => {
            let lane = w.trailing_zeros() / 8;
            (0x10 + 8 * k + lane as usize, (w >> (lane * 8)) as u8)
        }
        // Not reached: called only when the reserved mask test failed.
        None => (0x11, 0),
    };
    ValidationError::CustomOpHeaderReservedZero { offset, value }
}

/// `dbg_is_valid_custom_op_header` (S000 0x129ba90): the message names the predicate.
pub fn dbg_validate_header(b: &Bundle, gen: Generation) -> Result<(), String> {
    validate_header(b, gen).map_err(|e| e.dbg_message())
}

/// `dbg_is_valid_custom_op_payload` (S000 0x129c610): the message names the predicate.
pub fn dbg_validate_payload(b: &Bundle, gen: Generation) -> Result<(), String> {
    validate_payload(b, gen).map_err(|e| e.dbg_message())
}

#[cfg(test)]
mod tests;
