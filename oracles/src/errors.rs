//! Error enums. Each variant names the reason and carries the offending value.

use crate::roster::Generation;
use crate::val::Val;

/// A rejection enum as rows `Variant { fields } = "spec_name"`: declares the enum, `name()`
/// (the row's SPEC error name), `Display` (`name: {:?}`) and `Error`, once for every such enum.
macro_rules! rejection {
    (
        $(#[$meta:meta])*
        pub enum $ty:ident {
            $($(#[$vmeta:meta])* $v:ident $({ $($f:ident: $t:ty),* $(,)? })? = $name:literal,)*
        }
    ) => {
        $crate::errors::named! {
            $(#[$meta])*
            pub enum $ty {
                $($(#[$vmeta])* $v $({ $($f: $t),* })? = $name,)*
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}: {:?}", self.name(), self)
            }
        }

        impl std::error::Error for $ty {}
    };
}

/// An enum as rows `Variant { fields } = "spec_name"`: the enum and `name()`.
macro_rules! named {
    (
        $(#[$meta:meta])*
        pub enum $ty:ident {
            $($(#[$vmeta:meta])* $v:ident $({ $($f:ident: $t:ty),* $(,)? })? = $name:literal,)*
        }
    ) => {
        $(#[$meta])*
        pub enum $ty {
            $($(#[$vmeta])* $v $({ $($f: $t),* })?,)*
        }

        impl $ty {
            /// The variant's SPEC name.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Self::$v { .. } => $name,)*
                }
            }
        }
    };
}
pub(crate) use {named, rejection};

named! {
    /// The named predicates of the two custom-op validators, with their names verbatim from
    /// seed 000 §"The five named predicates" (as the dbg validator prints them).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Predicate {
        ValidOpcode = "valid_opcode",
        InstWordLen = "inst_word_len",
        HasValidNeuronEvents = "has_valid_neuron_events",
        IsCustomOpHeaderOpcode = "is_custom_op_header_opcode",
        CustomOpHeaderReservedZero = "custom_op_header_reserved_zero",
        CustomOpHeaderScratchSpaceVal = "custom_op_header_scratch_space_val",
        IsCustomOpPayloadOpcode = "is_custom_op_payload_opcode",
        CustomOpPayloadReservedZero = "custom_op_payload_reserved_zero",
    }
}

/// A validator verdict: the first failing predicate, with the offending byte offset and value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub predicate: Predicate,
    /// Offset of the byte that made the predicate fail.
    pub offset: usize,
    /// Value of that byte.
    pub value: u8,
}

impl Rejection {
    pub fn predicate_name(&self) -> &'static str {
        self.predicate.name()
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "inst failed assertion check: '{}' (byte 0x{:02x} = 0x{:02x})",
            self.predicate_name(),
            self.offset,
            self.value
        )
    }
}

impl std::error::Error for Rejection {}

/// Why `decode` refused a byte image (SPEC §5.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeRejection {
    /// 0x85 / 0x86: the validator failed; field = predicate name.
    Validator(Rejection),
    /// byte\[0\] is not one of the eleven opcodes.
    UnknownOpcode { value: u8 },
    /// One of the eleven, but `chip`'s compiler does not emit it (seed 003 "At a glance").
    NotOnChip { value: u8, chip: Generation },
    /// byte\[1\] is not the record's inst_word_len.
    BadInstWordLen { value: u8, expected: u8 },
    /// A reserved byte is nonzero.
    NonzeroReserved { offset: usize, value: u8 },
    /// A constant byte (`marker`, `cross_core_enable`) has the wrong value.
    BadConstant {
        field: &'static str,
        offset: usize,
        value: u8,
        expected: u8,
    },
    /// A live field holds a value no encoder emits.
    BadFieldValue {
        field: &'static str,
        offset: usize,
        value: u64,
    },
}

impl DecodeRejection {
    pub fn field(&self) -> &'static str {
        match self {
            DecodeRejection::Validator(r) => r.predicate_name(),
            DecodeRejection::UnknownOpcode { .. } | DecodeRejection::NotOnChip { .. } => "opcode",
            DecodeRejection::BadInstWordLen { .. } => "inst_word_len",
            DecodeRejection::NonzeroReserved { .. } => "reserved",
            DecodeRejection::BadConstant { field, .. } => field,
            DecodeRejection::BadFieldValue { field, .. } => field,
        }
    }

    pub fn offset(&self) -> usize {
        match self {
            DecodeRejection::Validator(r) => r.offset,
            DecodeRejection::UnknownOpcode { .. } | DecodeRejection::NotOnChip { .. } => 0,
            DecodeRejection::BadInstWordLen { .. } => 1,
            DecodeRejection::NonzeroReserved { offset, .. } => *offset,
            DecodeRejection::BadConstant { offset, .. } => *offset,
            DecodeRejection::BadFieldValue { offset, .. } => *offset,
        }
    }
}

impl std::fmt::Display for DecodeRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "decode: bad {} at 0x{:02x}: {:?}",
            self.field(),
            self.offset(),
            self
        )
    }
}

impl std::error::Error for DecodeRejection {}

/// Why `encode` refused a field list. `field()` names the first bad field in canonical order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EncodeRejection {
    /// The opcode is not one of the eleven.
    UnknownOpcode { opcode: u8 },
    /// One of the eleven, but `chip`'s compiler cannot emit it (seed 003 "At a glance").
    NotOnChip { opcode: u8, chip: Generation },
    /// A canonical field is absent.
    Missing { field: &'static str },
    /// A canonical field is given more than once.
    Duplicate { field: &'static str },
    /// The value has the wrong kind (Int / Name / Bytes).
    WrongKind { field: &'static str, got: Val },
    /// An int does not fit the field's width.
    TooWide {
        field: &'static str,
        value: u64,
        width: usize,
    },
    /// An int fits but is not a value the field admits (wait/update mode, dtype tag, valid flag).
    BadValue { field: &'static str, value: u64 },
    /// A name that is not in the field's name table.
    UnknownName { field: &'static str, name: String },
    /// A known name the lookup table refuses (kind without wire byte, op not shipped, ...).
    Lut {
        field: &'static str,
        cause: LutRejection,
    },
    /// A byte block of the wrong length.
    BadLength {
        field: &'static str,
        len: usize,
        expected: usize,
    },
    /// A field name the record does not have.
    UnknownField { name: String },
    /// The assembled image fails the record's validator (0x85 scratch triple).
    Invalid(Rejection),
    /// A custom-op group with more than 255 arguments.
    TooManyArgs { n_args: usize },
}

impl EncodeRejection {
    pub fn field(&self) -> &'static str {
        match self {
            EncodeRejection::UnknownOpcode { .. } | EncodeRejection::NotOnChip { .. } => "opcode",
            EncodeRejection::Missing { field }
            | EncodeRejection::Duplicate { field }
            | EncodeRejection::WrongKind { field, .. }
            | EncodeRejection::TooWide { field, .. }
            | EncodeRejection::BadValue { field, .. }
            | EncodeRejection::UnknownName { field, .. }
            | EncodeRejection::Lut { field, .. }
            | EncodeRejection::BadLength { field, .. } => field,
            EncodeRejection::UnknownField { .. } => "unknown_field",
            EncodeRejection::Invalid(r) => r.predicate_name(),
            EncodeRejection::TooManyArgs { .. } => "num_arguments",
        }
    }
}

impl std::fmt::Display for EncodeRejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let EncodeRejection::NotOnChip { opcode, chip } = self {
            return write!(
                f,
                "encode: the {} ({chip:?}) compiler cannot emit opcode 0x{opcode:02x}",
                chip.arch()
            );
        }
        write!(f, "encode: bad {}: {:?}", self.field(), self)
    }
}

impl std::error::Error for EncodeRejection {}

rejection! {
    /// Why a lookup table refused an input (SPEC §6).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum LutRejection {
        /// A CollectiveKind with no wire byte (SendRecv, SendRecvCCE).
        NotEncodable { kind: u32, name: &'static str } = "not_encodable",
        /// An ordinal past the end of the table.
        OutOfRange { value: u32 } = "out_of_range",
        /// An AluOp with no wire byte (average, elemwise_mul).
        NoWireByte { op: u32, name: &'static str } = "no_wire_byte",
        /// An AluOp outside the shipped CCE subset.
        NotShipped { op: u32, name: &'static str } = "not_shipped",
        /// An AluOp that has no DgeComputeOp.
        NotDgeOp { op: u32 } = "not_dge_op",
    }
}

rejection! {
    /// Why the stream parser refused a byte string (SPEC §5.3).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum StreamRejection {
        TrailingBytes { len: usize } = "trailing_bytes",
        InvalidRecord { index: usize, rejection: Rejection } = "invalid_record",
        PayloadCountMismatch { index: usize, num_payloads: u64, num_arguments: u64 } = "payload_count_mismatch",
        StrayPayload { index: usize } = "stray_payload",
        ShortGroup { header_index: usize, expected: u64, found: u64 } = "short_group",
        /// A 0xDA not right after a two-leg 0xD9.
        StrayLeg { index: usize } = "stray_leg",
        /// A two-leg 0xD9 (at `index`) not followed by a 0xDA.
        MissingLeg { index: usize } = "missing_leg",
        /// A 0xDA (at `index`) whose bytes 0x0C..0x0E differ from its 0xD9's.
        LegMismatch { index: usize } = "leg_mismatch",
    }
}

impl StreamRejection {
    /// The bundle index the error is about (the header for `short_group`); None for
    /// `trailing_bytes`.
    pub fn index(&self) -> Option<usize> {
        use StreamRejection::*;
        match *self {
            TrailingBytes { .. } => None,
            ShortGroup { header_index, .. } => Some(header_index),
            InvalidRecord { index, .. } | PayloadCountMismatch { index, .. } => Some(index),
            StrayPayload { index } | StrayLeg { index } | MissingLeg { index } => Some(index),
            LegMismatch { index } => Some(index),
        }
    }
}

/// Which operand list a memory-space failure is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Arg,
    Output,
}

rejection! {
    /// Why an IR gate refused (SPEC §7).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum GateRejection {
        TooManyOutputs { n_outputs: usize } = "too_many_outputs",
        BadMemorySpace { operand: Operand, index: usize, code: u8 } = "bad_memory_space",
        BadArch { code: u8 } = "bad_arch",
        NotCustomOp { kind: u32 } = "not_custom_op",
        BadSubkind { subkind: u32 } = "bad_subkind",
        NotSbArgGlobal = "not_sb_arg_global",
        ScratchCountMismatch { expected: u128, n_scratch: u64 } = "scratch_count_mismatch",
        BadCcDim { dim: u32 } = "bad_cc_dim",
        NotRegisterAccess { storage_kind: u32 } = "not_register_access",
        NotLnc2 { cores_per_lnc: u32 } = "not_lnc2",
    }
}
