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

use crate::lut::Generation as DtypeColumn;

/// Hardware generation the lowering targets (FACTS: v2 Sunda, v3 Cayman,
/// v4 Mariana, v5 Maverick).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Gen {
    /// Sunda, CoreV2.
    V2,
    /// Cayman, CoreV3.
    V3,
    /// Mariana, CoreV4.
    V4,
    /// Maverick.
    V5,
}

impl Gen {
    /// Every generation, oldest first.
    pub const ALL: [Gen; 4] = [Gen::V2, Gen::V3, Gen::V4, Gen::V5];

    /// The short name (`v2` … `v5`).
    pub fn name(self) -> &'static str {
        match self {
            Gen::V2 => "v2",
            Gen::V3 => "v3",
            Gen::V4 => "v4",
            Gen::V5 => "v5",
        }
    }

    /// From its short name.
    pub fn from_name(s: &str) -> Option<Gen> {
        Gen::ALL.into_iter().find(|g| g.name() == s)
    }

    /// `true` iff this generation's compiler can emit GPSIMDSB2SB 0xBF:
    /// "CoreV3 adds … GPSIMDSB2SB (0xBF)", V4 inherits (S003 "At a glance";
    /// FACTS §1 "v2 lacks 0xBE and 0xBF").
    pub fn has_sb2sb(self) -> bool {
        self >= Gen::V3
    }

    /// The dtype-table column (FACTS §6: pre-v4 / v4; v5 keeps v4's tags,
    /// SPEC DL-9).
    pub fn dtype_column(self) -> DtypeColumn {
        if self >= Gen::V4 {
            DtypeColumn::V4
        } else {
            DtypeColumn::PreV4
        }
    }
}
