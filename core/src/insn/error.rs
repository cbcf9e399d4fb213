//! Encode and decode errors of the instruction layer.

use crate::generation::Generation;
use crate::layout;
use crate::lut::LutError;
use crate::validate::ValidationError;
use core::fmt;

/// Why a bundle is not an encoder image (SPEC §5.1). Compared across
/// implementations as `(field(), offset())`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum DecodeError {
    /// A 0x85/0x86 bundle failed its validator; `field()` is the predicate name.
    Invalid(ValidationError),
    /// byte\[0\] is not a record opcode (isa/records.tsv).
    Opcode {
        /// byte\[0\].
        opcode: u8,
    },
    /// byte\[0\] is a record opcode, but this generation's compiler does not emit it
    /// (seed 003 §"At a glance": 0xBE, 0xBF, 0xD8 are CoreV3+; D-22). Field `opcode`.
    NotEmitted {
        /// byte\[0\].
        opcode: u8,
        /// The generation asked.
        generation: Generation,
    },
    /// byte\[1\] is not the stamped `inst_word_len` (0x10; 0x00 for 0xDA).
    InstWordLen {
        /// byte\[1\].
        value: u8,
    },
    /// A reserved byte is nonzero.
    Reserved {
        /// Its offset.
        offset: usize,
        /// Its value.
        value: u8,
    },
    /// byte\[4\] is not a WAIT_MODE member (F§2 \[H\]).
    WaitMode {
        /// byte\[4\].
        value: u8,
    },
    /// byte\[6\] is not an UPDATE_MODE member (F§2 \[H\]).
    UpdateMode {
        /// byte\[6\].
        value: u8,
    },
    /// byte\[0x0C\] of 0xD9/0xDA is not a shipped CCE wire byte {0x00, 0x04} (D-13).
    CceOp {
        /// The wire byte.
        value: u8,
    },
    /// A `dtype` byte is not a tag of the generation's dtype column (SPEC §6.4).
    Dtype {
        /// Its offset.
        offset: usize,
        /// The byte.
        value: u8,
    },
    /// byte\[0x0E\] of 0xD9/0xDA is not a CollectiveKind wire byte 0x01..=0x09.
    Kind {
        /// The wire byte.
        value: u8,
    },
    /// byte\[0x0C\] of 0xBF is not a dtype tag.
    SrcDtype {
        /// The byte.
        value: u8,
    },
    /// byte\[0x0D\] of 0xBF is not a dtype tag.
    DstDtype {
        /// The byte.
        value: u8,
    },
    /// byte\[0x20\] of 0xBF is not 0x01 (S003 §5 `bundle[0x20] = 1`).
    CrossCoreEnable {
        /// The byte.
        value: u8,
    },
    /// byte\[0x0C\] of 0xDC is not 0 or 1 (D-7).
    Valid {
        /// The byte.
        value: u8,
    },
    /// byte\[0x0F\] `arg_type` of 0x86 is not TENSOR 1 or ARRAY_OF_TENSOR 2 (F§8 \[H\]; D-8).
    ArgType {
        /// The byte.
        value: u8,
    },
    /// A byte outside its field's domain, for a table field without a variant of its own.
    Field {
        /// The field name (isa/records.tsv).
        field: &'static str,
        /// The byte's offset.
        offset: usize,
        /// The byte.
        value: u8,
    },
    /// A custom-op group has the wrong number of bundles for its header.
    GroupShape {
        /// Bundles the header announces (num_arguments + 2).
        expected: usize,
        /// Bundles given.
        found: usize,
    },
    /// A group header's num_payloads ≠ num_arguments + 2 (S000 §C3).
    GroupPayloadCount {
        /// num_payloads.
        num_payloads: u16,
        /// num_arguments.
        num_arguments: u8,
    },
    /// A payload of a group carries a nonzero sync band (S000 §C3: payloads carry none).
    GroupPayloadSync {
        /// Position of the payload bundle within the group.
        index: usize,
    },
    /// A payload of a group is not `arg_type` TENSOR (S000 §C3 `[0x0F]=1`; D-23).
    GroupArgType {
        /// Position of the payload bundle within the group.
        index: usize,
        /// Its `arg_type`.
        value: u8,
    },
}

impl DecodeError {
    /// SPEC §5.1 field name.
    pub fn field(&self) -> &'static str {
        match self {
            DecodeError::Invalid(e) => e.predicate().name(),
            DecodeError::Opcode { .. } | DecodeError::NotEmitted { .. } => "opcode",
            DecodeError::InstWordLen { .. } => "inst_word_len",
            DecodeError::Reserved { .. } => "reserved",
            DecodeError::WaitMode { .. } => "wait_mode",
            DecodeError::UpdateMode { .. } => "update_mode",
            DecodeError::CceOp { .. } => "cce_op",
            DecodeError::Dtype { .. } => "dtype",
            DecodeError::Kind { .. } => "kind",
            DecodeError::SrcDtype { .. } => "src_dtype",
            DecodeError::DstDtype { .. } => "dst_dtype",
            DecodeError::CrossCoreEnable { .. } => "cross_core_enable",
            DecodeError::Valid { .. } => "valid",
            DecodeError::ArgType { .. } | DecodeError::GroupArgType { .. } => "arg_type",
            DecodeError::GroupShape { .. } => "group",
            DecodeError::GroupPayloadCount { .. } => "num_payloads",
            DecodeError::GroupPayloadSync { .. } => "sync",
            DecodeError::Field { field, .. } => field,
        }
    }

    /// Byte offset of the failure (for validator failures: the byte the predicate is about).
    pub fn offset(&self) -> usize {
        match *self {
            DecodeError::Invalid(e) => e.offset(),
            DecodeError::Opcode { .. } | DecodeError::NotEmitted { .. } => layout::OFF_OPCODE,
            DecodeError::InstWordLen { .. } => layout::OFF_INST_WORD_LEN,
            DecodeError::Reserved { offset, .. }
            | DecodeError::Dtype { offset, .. }
            | DecodeError::Field { offset, .. } => offset,
            DecodeError::WaitMode { .. } => layout::OFF_WAIT_MODE,
            DecodeError::UpdateMode { .. } => layout::OFF_UPDATE_MODE,
            DecodeError::CceOp { .. } => layout::collective_compute::OFF_CCE_OP,
            DecodeError::SrcDtype { .. } => layout::gpsimdsb2sb::OFF_SRC_DTYPE,
            DecodeError::Valid { .. } => layout::get_global_rank_id::OFF_VALID,
            DecodeError::DstDtype { .. } => layout::gpsimdsb2sb::OFF_DST_DTYPE,
            DecodeError::Kind { .. } => layout::collective_compute::OFF_KIND,
            DecodeError::CrossCoreEnable { .. } => layout::gpsimdsb2sb::OFF_CROSS_CORE_ENABLE,
            DecodeError::ArgType { .. } | DecodeError::GroupArgType { .. } => layout::OFF_ARG_TYPE,
            DecodeError::GroupShape { .. } | DecodeError::GroupPayloadSync { .. } => 0,
            DecodeError::GroupPayloadCount { .. } => layout::OFF_NUM_PAYLOADS,
        }
    }
}

impl From<ValidationError> for DecodeError {
    fn from(e: ValidationError) -> Self {
        DecodeError::Invalid(e)
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let DecodeError::NotEmitted { opcode, generation } = self {
            return write!(
                f,
                "decode error: opcode {opcode:#04x} is not emitted by the {} ({}) compiler",
                generation.name(),
                generation.codename()
            );
        }
        write!(
            f,
            "decode error: {} at byte {:#04x}",
            self.field(),
            self.offset()
        )
    }
}

impl std::error::Error for DecodeError {}

/// Why a set of field values cannot be encoded (SPEC §5.2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum EncodeError {
    /// This generation's compiler cannot emit the opcode (seed 003 §"At a glance"; D-22).
    NotEmitted {
        /// The opcode.
        opcode: u8,
        /// The generation asked.
        generation: Generation,
    },
    /// Wire wait mode is not a WAIT_MODE member (F§2 \[H\]).
    WaitMode {
        /// The byte.
        value: u8,
    },
    /// Wire update mode is not an UPDATE_MODE member (F§2 \[H\]).
    UpdateMode {
        /// The byte.
        value: u8,
    },
    /// 0x86 `arg_type` not TENSOR 1 or ARRAY_OF_TENSOR 2 (F§8 \[H\]).
    ArgType {
        /// The value.
        value: u8,
    },
    /// `cce_op` not encodable (SPEC §6.2 CCE subset).
    CceOp(LutError),
    /// A dtype field is not a tag of the generation's dtype column (SPEC §6.4).
    Dtype {
        /// `dtype`, `src_dtype` or `dst_dtype`.
        field: &'static str,
        /// The value.
        value: u8,
    },
    /// `kind` not encodable (SPEC §6.1).
    Kind(LutError),
    /// `valid` flag not 0/1 (D-7).
    Valid {
        /// The value.
        value: u64,
    },
    /// Header scratch triple half-filled (S000 (5)); the header validator would reject it.
    ScratchSpaceVal {
        /// byte\[0x10\] `has_scratch_space`.
        has_scratch_space: u8,
        /// dword\[0x18\] `scratch_space_size`.
        scratch_space_size: u32,
        /// byte\[0x1C\] `scratch_space_num_partitions`.
        scratch_space_num_partitions: u8,
    },
    /// An integer does not fit the field's width.
    DoesNotFit {
        /// Field name.
        field: &'static str,
        /// The value.
        value: u64,
    },
    /// A byte-block field has the wrong length.
    BadLength {
        /// Field name.
        field: &'static str,
        /// The length given.
        len: usize,
    },
    /// A name field holds a name not in the SPEC §6 table.
    UnknownName {
        /// Field name.
        field: &'static str,
    },
    /// A field has the wrong value kind (int / name / bytes).
    WrongKind {
        /// Field name.
        field: &'static str,
    },
    /// A required field is absent.
    Missing {
        /// Field name.
        field: &'static str,
    },
    /// A field is given twice.
    Duplicate {
        /// Field name.
        field: &'static str,
    },
    /// An input field name is not in the opcode's canonical list.
    UnknownField {
        /// Position of the offending entry in the input slice.
        position: usize,
    },
    /// The opcode is not a record opcode (isa/records.tsv).
    Opcode {
        /// The opcode.
        opcode: u8,
    },
    /// A custom-op group has more than 255 arguments (num_arguments is a u8).
    TooManyArguments {
        /// The number of arguments.
        n: usize,
    },
}

impl EncodeError {
    /// The field the error is about.
    pub fn field(&self) -> &'static str {
        match *self {
            EncodeError::NotEmitted { .. } => "opcode",
            EncodeError::WaitMode { .. } => "wait_mode",
            EncodeError::UpdateMode { .. } => "update_mode",
            EncodeError::ArgType { .. } => "arg_type",
            EncodeError::CceOp(_) => "cce_op",
            EncodeError::Dtype { field, .. } => field,
            EncodeError::Kind(_) => "kind",
            EncodeError::Valid { .. } => "valid",
            EncodeError::ScratchSpaceVal { .. } => "custom_op_header_scratch_space_val",
            EncodeError::DoesNotFit { field, .. }
            | EncodeError::BadLength { field, .. }
            | EncodeError::UnknownName { field }
            | EncodeError::WrongKind { field }
            | EncodeError::Missing { field }
            | EncodeError::Duplicate { field } => field,
            EncodeError::UnknownField { .. } => "unknown_field",
            EncodeError::Opcode { .. } => "opcode",
            EncodeError::TooManyArguments { .. } => "num_arguments",
        }
    }

    /// Short reason tag (`"missing"`, `"does_not_fit"`, ...; LUT errors give the LUT name).
    pub fn reason(&self) -> &'static str {
        match self {
            EncodeError::NotEmitted { .. } => "not_emitted",
            EncodeError::WaitMode { .. }
            | EncodeError::UpdateMode { .. }
            | EncodeError::ArgType { .. }
            | EncodeError::Dtype { .. }
            | EncodeError::Valid { .. }
            | EncodeError::ScratchSpaceVal { .. } => "invalid_value",
            EncodeError::CceOp(e) | EncodeError::Kind(e) => e.name(),
            EncodeError::DoesNotFit { .. } => "does_not_fit",
            EncodeError::BadLength { .. } => "bad_length",
            EncodeError::UnknownName { .. } => "unknown_name",
            EncodeError::WrongKind { .. } => "wrong_kind",
            EncodeError::Missing { .. } => "missing",
            EncodeError::Duplicate { .. } => "duplicate",
            EncodeError::UnknownField { .. } => "unknown_field",
            EncodeError::Opcode { .. } => "bad_opcode",
            EncodeError::TooManyArguments { .. } => "too_many_arguments",
        }
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let EncodeError::NotEmitted { opcode, generation } = self {
            let name = crate::mnemonics::mnemonic(*opcode).unwrap_or("?");
            return write!(
                f,
                "encode error: opcode {opcode:#04x} ({name}) is not emitted by the {} ({}) compiler",
                generation.name(),
                generation.codename()
            );
        }
        write!(f, "encode error: {} ({})", self.field(), self.reason())
    }
}

impl std::error::Error for EncodeError {}
