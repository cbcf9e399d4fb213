//! The translator of `collective_lowering`: core's IR (`tpb_core::lower`) to
//! the oracle's requests (`tpb_oracle::Request`), and the generation names
//! between the two (field-by-field mappings; no logic). The comparator is
//! [`crate::kinds::collective_lowering`], the modules come from
//! [`crate::generators::lowering_module`].

use tpb_core::insn::Sync;
use tpb_core::lower::{Direction, Generation, IrInstruction, SideRef, TransferOperand};
use tpb_oracle as oracle;

fn band(s: &Sync) -> oracle::Band {
    (
        s.wait_mode.0,
        s.wait_idx,
        s.update_mode.0,
        s.update_idx,
        s.semaphore_value,
    )
}

fn tensor(t: &TransferOperand) -> oracle::Tensor {
    (t.tensor_id, t.tensor_base, t.num_elements_per_partition)
}

/// The oracle's request for one IR instruction.
pub fn to_request(insn: &IrInstruction) -> oracle::Request {
    match insn {
        IrInstruction::Collective(c) => oracle::Request::Collective {
            kind: c.kind.ordinal(),
            op: c.cce_op.ordinal(),
            dtype: c.dtype,
            ap: c.src,
            ap2: c.src2,
            groups: c.replica_groups.clone(),
            pairs: c.source_target_pairs.clone(),
            channel: c.channel_id,
            dim: c.cc_dim,
            band: band(&c.sync),
        },
        IrInstruction::Transfer(t) => oracle::Request::SendOrRecv {
            send: t.direction == Direction::Send,
            tensor: tensor(&t.operand),
            peer: t.peer,
            band: band(&t.sync),
        },
        IrInstruction::LocalSendRecv(l) => oracle::Request::LocalSwap {
            kind: l.kind.ordinal(),
            outgoing: tensor(&l.send),
            incoming: tensor(&l.recv),
            peer: l.peer,
            src_dtype: l.src_dtype,
            dst_dtype: l.dst_dtype,
            src_ap: l.src_ap,
            dst_ap: l.dst_ap,
            partition: l.peer_partition,
            bytes: l.bytes_per_partition,
            lnc: l.cores_per_lnc,
            band: band(&l.sync),
        },
    }
}

/// The oracle's generation number (2..=5).
pub fn gen_number(g: Generation) -> u8 {
    match g {
        Generation::V2 => 2,
        Generation::V3 => 3,
        Generation::V4 => 4,
        Generation::V5 => 5,
    }
}

pub fn side_pair(r: &SideRef) -> (&'static str, usize) {
    match *r {
        SideRef::ReplicaGroups(i) => ("replica_groups", i),
        SideRef::SourceTargetPairs(i) => ("source_target_pairs", i),
        SideRef::Attribute(i) => ("attributes", i),
    }
}
