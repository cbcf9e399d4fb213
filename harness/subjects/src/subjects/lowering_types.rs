//! The vocabulary of [`super::Reference::lower`] (SPEC §5.4): core's IR instructions in, each
//! one's records and side-table rows (or its error) and the module's side-tables out.

use std::fmt;
use std::sync::Arc;

pub use tpb_core::lower::{Generation, IrInstruction, LocalSendRecv, Transfer};

/// What one IR instruction lowered to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    /// In emission order.
    pub records: Vec<[u8; 64]>,
    /// `(table, index)`: `replica_groups`, `source_target_pairs` or `attributes`.
    pub side: Vec<(&'static str, usize)>,
}

/// Why an IR instruction was rejected: the SPEC §5.4 error name, the subject's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoweringRejected {
    pub name: &'static str,
    pub message: Message,
}

/// A message formatted only when shown: a gate case rejects thousands of instructions and
/// shows none of the messages.
#[derive(Clone)]
pub struct Message(Arc<dyn fmt::Display + Send + Sync>);

impl Message {
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

/// A whole module's lowering: per instruction, then the side-tables.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LoweredModule {
    pub instrs: Vec<Result<Lowered, LoweringRejected>>,
    pub replica_groups: Vec<Vec<Vec<u32>>>,
    pub source_target_pairs: Vec<Vec<(u32, u32)>>,
    /// `(kind, "send" | "recv", peer)`.
    pub attributes: Vec<(u32, &'static str, u32)>,
}

/// What the `lower` operation answers (as `tpbconform lower`): the module with every
/// instruction lowered, or the first rejected instruction's index and SPEC §5.4 error name.
#[derive(Clone, Debug, PartialEq)]
pub enum ModuleAnswer {
    Lowered(LoweredModule),
    Rejected {
        instruction: usize,
        name: super::types::Name,
    },
}

impl LoweredModule {
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
