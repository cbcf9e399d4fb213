//! Why an IR instruction does not lower (SPEC §5.4 DL-11: first failing check wins).

use core::fmt;

named_error! {
    /// SPEC §5.4 error name.
    fn name;
    /// A lowering error. Compared across implementations by [`LowerError::name`].
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    #[non_exhaustive]
    pub enum LowerError {
        /// A CollectiveCompute of kind SendRecv/SendRecvCCE: those never go
        /// through the kind LUT (S003 §2 GOTCHA); use a local SendRecv.
        SendRecvKind {
            /// The kind ordinal (0 or 1).
            kind: u32,
        } => "send_recv_kind",
        /// A local SendRecv whose kind is not SendRecv/SendRecvCCE.
        NotSendRecvKind {
            /// The kind ordinal.
            kind: u32,
        } => "not_send_recv_kind",
        /// cc_dim ∉ {0, 1} (S003 §3.5).
        BadCcDim {
            /// The dimension.
            dim: u32,
        } => "bad_cc_dim",
        /// BIR dtype ordinal past the table (FACTS §6).
        DtypeOutOfRange {
            /// Which operand: `dtype`, `src_dtype` or `dst_dtype`.
            field: &'static str,
            /// The ordinal.
            ordinal: u32,
        } => "dtype_out_of_range",
        /// cce_op outside the shipped subset {bypass, add} (S003 §1.1).
        CceOpNotShipped {
            /// The AluOp ordinal.
            op: u32,
        } => "cce_op_not_shipped",
        /// The op is not the one the kind accepts (collectiveKindAcceptsALUOp,
        /// S003 §3; DL-4).
        OpNotAccepted {
            /// The kind ordinal.
            kind: u32,
            /// The AluOp ordinal.
            op: u32,
        } => "op_not_accepted",
        /// A two-leg kind without its second access pattern (DL-3).
        MissingSecondAp {
            /// The kind ordinal.
            kind: u32,
        } => "missing_second_ap",
        /// A one-leg kind given a second access pattern (DL-3).
        UnexpectedSecondAp {
            /// The kind ordinal.
            kind: u32,
        } => "unexpected_second_ap",
        /// Source-target pairs on a kind that registers replica groups (DL-5).
        PairsOnGroupKind {
            /// The kind ordinal.
            kind: u32,
        } => "pairs_on_group_kind",
        /// Replica groups on a kind that registers source-target pairs (DL-5).
        GroupsOnPairKind {
            /// The kind ordinal.
            kind: u32,
        } => "groups_on_pair_kind",
        /// A group-registering kind with no replica groups (DL-5).
        NoReplicaGroups {
            /// The kind ordinal.
            kind: u32,
        } => "no_replica_groups",
        /// A pair-registering kind with no source-target pairs (DL-5).
        NoSourceTargetPairs {
            /// The kind ordinal.
            kind: u32,
        } => "no_source_target_pairs",
        /// More ranks (summed over groups) or pairs than the limit (DL-5).
        TooLarge {
            /// `ranks` or `pairs`.
            what: &'static str,
            /// How many were given.
            found: usize,
            /// The limit.
            limit: usize,
        } => "too_large",
        /// A replica group with no rank (DL-5).
        EmptyGroup {
            /// Its position.
            index: usize,
        } => "empty_group",
        /// A rank in two groups, or twice in one (NKI ReplicaGroup: no overlap; DL-5).
        DuplicateRank {
            /// The rank.
            rank: u32,
        } => "duplicate_rank",
        /// Two pairs with the same source (DL-5).
        DuplicateSource {
            /// The rank.
            rank: u32,
        } => "duplicate_source",
        /// Two pairs with the same target (DL-5).
        DuplicateTarget {
            /// The rank.
            rank: u32,
        } => "duplicate_target",
        /// A record encoder refused a field (the sync band, DL-11).
        Record {
            /// The record's opcode.
            opcode: u8,
            /// The encoder's field name.
            field: &'static str,
        } => "record",
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LowerError::SendRecvKind { kind } | LowerError::NotSendRecvKind { kind } => {
                write!(f, "{}: kind {kind}", self.name())
            }
            LowerError::BadCcDim { dim } => write!(f, "bad_cc_dim: {dim} not in {{0, 1}}"),
            LowerError::DtypeOutOfRange { field, ordinal } => {
                write!(f, "dtype_out_of_range: {field} ordinal {ordinal}")
            }
            LowerError::CceOpNotShipped { op } => write!(f, "cce_op_not_shipped: op {op}"),
            LowerError::OpNotAccepted { kind, op } => {
                write!(f, "op_not_accepted: kind {kind} does not accept op {op}")
            }
            LowerError::MissingSecondAp { kind }
            | LowerError::UnexpectedSecondAp { kind }
            | LowerError::PairsOnGroupKind { kind }
            | LowerError::GroupsOnPairKind { kind }
            | LowerError::NoReplicaGroups { kind }
            | LowerError::NoSourceTargetPairs { kind } => write!(f, "{}: kind {kind}", self.name()),
            LowerError::TooLarge { what, found, limit } => {
                write!(f, "too_large: {found} {what} (limit {limit})")
            }
            LowerError::EmptyGroup { index } => write!(f, "empty_group: group {index}"),
            LowerError::DuplicateRank { rank }
            | LowerError::DuplicateSource { rank }
            | LowerError::DuplicateTarget { rank } => write!(f, "{}: rank {rank}", self.name()),
            LowerError::Record { opcode, field } => {
                write!(f, "record: 0x{opcode:02X} encoder refused {field}")
            }
        }
    }
}

impl std::error::Error for LowerError {}
