//! The vocabulary of [`super::Subject::lower`] (SPEC §5.4 collective
//! lowering): the request is a list of IR instructions (core's IR types,
//! `tpb_core::lower`, are the vocabulary, as is core's [`Generation`]),
//! lowered in order into one module of the subject's generation; the answer
//! is each instruction's records and side-table rows, or its error, and the
//! module's side-tables.

use std::fmt;
use std::sync::Arc;

pub use tpb_core::lower::{Generation, IrInstruction, LocalSendRecv, Transfer};

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
    pub message: Message,
}

/// A subject's message, kept as the value it is rendered from and formatted
/// only when shown: a gate case rejects thousands of instructions (the
/// lowering properties lower each again) and shows none of the messages.
#[derive(Clone)]
pub struct Message(Arc<dyn fmt::Display + Send + Sync>);

impl Message {
    /// The message `why` renders to.
    pub fn new(why: impl fmt::Display + Send + Sync + 'static) -> Message {
        Message(Arc::new(why))
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

/// Two messages are equal when they read the same.
impl PartialEq for Message {
    fn eq(&self, other: &Message) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for Message {}

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

/// What the `lower` operation answers (SPEC §5.4, as `tpbconform lower`
/// does): every instruction lowered into one module, or the first
/// rejection. External subjects answer this; in-process ones derive it from
/// their [`LoweredModule`] ([`LoweredModule::answer`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleAnswer {
    /// Every instruction lowered (each `Ok`), with the side-tables.
    Lowered(LoweredModule),
    /// The first rejected instruction: its index and SPEC §5.4 error name.
    Rejected {
        /// Index in the request's instructions.
        instruction: usize,
        /// The error name (an unknown one is never equal to core's).
        name: super::types::Name,
    },
}

impl LoweredModule {
    /// The answer `tpbconform lower` gives for this module: the first
    /// rejection, else the whole module.
    pub fn answer(&self) -> ModuleAnswer {
        match self.instrs.iter().position(Result::is_err) {
            Some(i) => ModuleAnswer::Rejected {
                instruction: i,
                name: super::types::Name::Known(
                    self.instrs[i].as_ref().err().map_or("", |e| e.name),
                ),
            },
            None => ModuleAnswer::Lowered(self.clone()),
        }
    }
}
