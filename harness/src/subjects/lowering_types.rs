//! The vocabulary of [`super::Subject::lower`] (SPEC §5.4 collective
//! lowering): the request is a list of IR instructions (core's IR types,
//! `tpb_core::lower`, are the vocabulary), lowered in order into one module of
//! the subject's generation; the answer is each instruction's records and
//! side-table rows, or its error, and the module's side-tables.

pub use tpb_core::lower::IrInstruction;

/// What one IR instruction lowered to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// The 64-byte records, in emission order.
    pub records: Vec<[u8; 64]>,
    /// The side-table rows it needs: `(table, index)`, table one of
    /// `replica_groups`, `source_target_pairs`, `attributes`.
    pub side: Vec<(&'static str, usize)>,
}

/// Why an IR instruction was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweringRejected {
    /// The SPEC §5.4 error name.
    pub name: &'static str,
    /// The subject's message.
    pub message: String,
}

/// A whole module's lowering.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LoweredModule {
    /// Per instruction, in order.
    pub instrs: Vec<Result<Lowered, LoweringRejected>>,
    /// The replica-group table.
    pub replica_groups: Vec<Vec<Vec<u32>>>,
    /// The source-target-pair table.
    pub source_target_pairs: Vec<Vec<(u32, u32)>>,
    /// The attribute table: `(kind, "send" | "recv", peer)`.
    pub attributes: Vec<(u32, &'static str, u32)>,
}
