//! Collective lowering: IR collectives and Send/Recv to wire records plus the
//! module side-tables (SPEC §5.4; S003 §2–§5).
//!
//! The recurring finding of S003 is that collective geometry is not on the
//! wire: replica groups and source-target pairs go to the module's registries
//! (`Module::addReplicaGroupIDs` / `addSrcTargetPairIDs`, S003 §3.3), the
//! send/recv peer to a module attribute (`setAttribute(kind=2)`, S003 §4), and
//! the records carry only {op, dtype, kind, AP} per leg. [`lower`] follows the
//! arms of `visitInstCollectiveCompute` as the table [`ARMS`] states them.

mod arms;
mod error;
mod ir;
mod json;
mod module;

pub use arms::{arm_of, lower, needs_second_leg, Arm, Geometry, ARMS};
pub use error::LowerError;
pub use ir::{
    Collective, Direction, IrInstruction, LocalSendRecv, Transfer, TransferOperand, AP2_LEN,
    AP3_LEN,
};
pub use module::{
    Attribute, Lowered, Module, SideRef, MAX_PAIRS, MAX_RANKS, SEND_RECV_ATTRIBUTE_KIND,
};

/// Hardware generation the lowering targets: the crate's one [`crate::Generation`].
pub use crate::generation::Generation;
