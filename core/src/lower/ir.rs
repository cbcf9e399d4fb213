//! The IR the lowering consumes (SPEC §5.4, DL-1): `InstCollectiveCompute`,
//! `InstCollectiveSend`/`Recv`, and KLR's local SendRecv swap.

use crate::insn::Sync;
use crate::lut::{AluOp, CollectiveKind};

/// ADDR8 TENSOR2D access pattern width, +0x10..+0x3F of 0xD9/0xDA (S003 §3.1; D-5).
pub const AP2_LEN: usize = 48;
/// TENSOR3D access pattern width of 0xBF (S003 §5; D-5).
pub const AP3_LEN: usize = 16;

/// `InstCollectiveCompute` (S003 §3): one collective, kinds 2..=10.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Collective {
    /// I+0xF8 collective kind (S003 §3).
    pub kind: CollectiveKind,
    /// I+0x180 reduce-on-copy op (S003 §1.1).
    pub cce_op: AluOp,
    /// BIR dtype ordinal, already the reinterpreted copy dtype (S003 §3.1; DL-9).
    pub dtype: u32,
    /// Source access pattern, packed ADDR8 TENSOR2D (S003 §3.1; DL-8).
    pub src: [u8; AP2_LEN],
    /// Second access pattern: the recv tile of a permute or the second source
    /// of a reducing permute (S003 §3.2; DL-3).
    pub src2: Option<[u8; AP2_LEN]>,
    /// I+0x100 replica groups (S003 §3.3); group kinds and implicit permutes.
    pub replica_groups: Vec<Vec<u32>>,
    /// Source-target pairs (S003 §3.3); explicit permutes.
    pub source_target_pairs: Vec<(u32, u32)>,
    /// I+0x160 channel (S003 §3.4); wired on the 0xDA leg only (DL-7).
    pub channel_id: u16,
    /// I+0x27C collective dimension, {0 Partition, 1 Free} (S003 §3.5).
    pub cc_dim: u32,
    /// Sync band of the 0xD9 record.
    pub sync: Sync,
}

/// Send or receive (S003 §4: module metadata, not a wire byte).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Direction {
    /// `InstCollectiveSend`: the AP is the source.
    Send,
    /// `InstCollectiveRecv`: the AP is the destination.
    Recv,
}

impl Direction {
    /// `send` / `recv`.
    pub fn name(self) -> &'static str {
        match self {
            Direction::Send => "send",
            Direction::Recv => "recv",
        }
    }

    /// From its name.
    pub fn from_name(s: &str) -> Option<Direction> {
        [Direction::Send, Direction::Recv]
            .into_iter()
            .find(|d| d.name() == s)
    }
}

/// The tensor a 0xCB record names (S003 §4.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct TransferOperand {
    /// `instr.tensor_id` = ap_base(arg0 AP), +0x10.
    pub tensor_id: u64,
    /// I+0xD0 tensor base, +0x30.
    pub tensor_base: u64,
    /// getNumElementsPerPartition(arg0 AP), +0x38.
    pub num_elements_per_partition: u64,
}

/// `InstCollectiveSend` / `InstCollectiveRecv` (S003 §4).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Transfer {
    /// Which of the two.
    pub direction: Direction,
    /// The tensor and its access pattern.
    pub operand: TransferOperand,
    /// Symbolic peer rank: `setAttribute(kind=2)`, not a wire byte (S003 §4.1).
    pub peer: u32,
    /// Sync band of the 0xCB record.
    pub sync: Sync,
}

/// KLR's local send/recv swap, `CollectiveKind = SendRecv(0)` or
/// `SendRecvCCE(1)` with `is_local` (S003 §2 GOTCHA): `lower_local_collectives`
/// routes it to GPSIMDSB2SB 0xBF or drops it onto 0xCB (DL-10).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct LocalSendRecv {
    /// SendRecv or SendRecvCCE; never looked up in the kind LUT (S003 §2).
    pub kind: CollectiveKind,
    /// The local tile sent (0xCB route: the Send record).
    pub send: TransferOperand,
    /// The tile received (0xCB route: the Recv record).
    pub recv: TransferOperand,
    /// Symbolic peer rank (0xCB route: both attributes).
    pub peer: u32,
    /// BIR dtype of the source (0xBF +0x0C).
    pub src_dtype: u32,
    /// BIR dtype of the destination (0xBF +0x0D).
    pub dst_dtype: u32,
    /// Local read AP, TENSOR3D (0xBF +0x10).
    pub src_ap: [u8; AP3_LEN],
    /// Peer write AP, TENSOR3D (0xBF +0x30).
    pub dst_ap: [u8; AP3_LEN],
    /// Peer SB partition (0xBF +0x21).
    pub peer_partition: u8,
    /// Bytes per partition, the routing input (S003 §5 NOTE, ceiling 1024).
    pub bytes_per_partition: u64,
    /// arch+0x1A4 cores per LNC (S003 §5 gate: 0xBF needs 2).
    pub cores_per_lnc: u32,
    /// Sync band; on the 0xCB route split between the two records (DL-10).
    pub sync: Sync,
}

/// One IR instruction the lowering accepts.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum IrInstruction {
    /// CollectiveCompute.
    Collective(Collective),
    /// CollectiveSend / CollectiveRecv.
    Transfer(Transfer),
    /// Local SendRecv swap.
    LocalSendRecv(LocalSendRecv),
}
