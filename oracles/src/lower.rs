//! Collective lowering, second reading (SPEC §5.4 and the DL decisions; seed 003 §2–§5).
//!
//! Style: the arm of a kind is derived from its *name* (SPEC §5.4 table read as rules:
//! "Permute…" kinds have two legs, explicit permutes register pairs, "…Reduce…" kinds
//! reduce with add), records come from the field-list encoder, and the side-tables are a
//! ledger of rows searched linearly.

use crate::codec::encode;
use crate::gates::{gate_cc_dim, gate_lnc, route_is_sb2sb};
use crate::lut::{cce_wire, collective_wire, dtype_wire, ALU, COLLECTIVE};
use crate::roster::{Generation, CHIPS};
use crate::val::Val;
use std::collections::BTreeSet;

/// A sync band as the encoder takes it: (wait_mode, wait_id, update_mode, update_id, values).
pub type Band = (u8, u8, u8, u8, u32);

/// The tensor of one 0xCB record: (tensor_id @0x10, tensor_base @0x30, elements per
/// partition @0x38), seed 003 §4.1.
pub type Tensor = (u64, u64, u64);

/// One IR request. Ordinals are BIR ordinals (kind, AluOp, dtype).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    Collective {
        kind: u32,
        op: u32,
        dtype: u32,
        ap: [u8; 48],
        ap2: Option<[u8; 48]>,
        groups: Vec<Vec<u32>>,
        pairs: Vec<(u32, u32)>,
        channel: u16,
        dim: u32,
        band: Band,
    },
    /// `send == true`: CollectiveSend; else CollectiveRecv.
    SendOrRecv {
        send: bool,
        tensor: Tensor,
        peer: u32,
        band: Band,
    },
    LocalSwap {
        kind: u32,
        outgoing: Tensor,
        incoming: Tensor,
        peer: u32,
        src_dtype: u32,
        dst_dtype: u32,
        src_ap: [u8; 16],
        dst_ap: [u8; 16],
        partition: u8,
        bytes: u64,
        lnc: u32,
        band: Band,
    },
}

crate::errors::rejection! {
    /// Why a request does not lower; `name()` is the SPEC §5.4 error name.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum LowerRejection {
        SendRecvKind { kind: u32 } = "send_recv_kind",
        NotSendRecvKind { kind: u32 } = "not_send_recv_kind",
        BadCcDim { dim: u32 } = "bad_cc_dim",
        DtypeOutOfRange { field: &'static str, ordinal: u32 } = "dtype_out_of_range",
        CceOpNotShipped { op: u32 } = "cce_op_not_shipped",
        OpNotAccepted { kind: u32, op: u32 } = "op_not_accepted",
        MissingSecondAp { kind: u32 } = "missing_second_ap",
        UnexpectedSecondAp { kind: u32 } = "unexpected_second_ap",
        PairsOnGroupKind { kind: u32 } = "pairs_on_group_kind",
        GroupsOnPairKind { kind: u32 } = "groups_on_pair_kind",
        NoReplicaGroups { kind: u32 } = "no_replica_groups",
        NoSourceTargetPairs { kind: u32 } = "no_source_target_pairs",
        TooLarge { what: &'static str, found: usize, limit: usize } = "too_large",
        EmptyGroup { index: usize } = "empty_group",
        DuplicateRank { rank: u32 } = "duplicate_rank",
        DuplicateSource { rank: u32 } = "duplicate_source",
        DuplicateTarget { rank: u32 } = "duplicate_target",
        Record { opcode: u8, field: &'static str } = "record",
    }
}

/// Limits of one request (SPEC DL-5).
const RANK_LIMIT: usize = 4096;
const PAIR_LIMIT: usize = 4096;
/// setAttribute kind of the send/recv pairing (seed 003 §4 `kind=2`).
const PEER_ATTRIBUTE: u32 = 2;
/// First generation whose compiler emits 0xBF (seed 003 "At a glance": CoreV3 adds it).
const FIRST_SB2SB_GENERATION: u8 = 3;
/// First generation on the v4 dtype column (FACTS §6; v5 keeps it, SPEC DL-9).
const FIRST_V4_DTYPE_GENERATION: u8 = 4;

/// What one request produced: records and the `(table, id)` rows it needs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Emitted {
    pub records: Vec<[u8; 64]>,
    pub refs: Vec<(&'static str, usize)>,
}

/// The module side-tables plus everything emitted, for generation `generation` (2..=5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ledger {
    pub generation: u8,
    pub replica_groups: Vec<Vec<Vec<u32>>>,
    pub source_target_pairs: Vec<Vec<(u32, u32)>>,
    /// (kind, "send" | "recv", peer).
    pub attributes: Vec<(u32, &'static str, u32)>,
    pub emitted: Vec<Emitted>,
}

/// The shape of a kind, read off its name (SPEC §5.4 table; DL-2..DL-4).
struct Shape {
    two_legs: bool,
    pairs: bool,
    reduce_op: u32,
}

const BYPASS: u32 = 0;
const ADD: u32 = 4;

fn shape_of(name: &str) -> Shape {
    let permute = name.starts_with("Permute");
    Shape {
        two_legs: permute,
        pairs: permute && !name.ends_with("Implicit"),
        reduce_op: if name.contains("Reduce") { ADD } else { BYPASS },
    }
}

fn band_fields(band: Band) -> Vec<(&'static str, Val)> {
    let (wm, wi, um, ui, v) = band;
    vec![
        ("wait_mode", Val::Int(wm.into())),
        ("wait_idx", Val::Int(wi.into())),
        ("update_mode", Val::Int(um.into())),
        ("update_idx", Val::Int(ui.into())),
        ("semaphore_value", Val::Int(v.into())),
    ]
}

/// The chip of a generation number 2..=5 (FACTS "Generations"); later numbers are Maverick.
fn chip_of(generation: u8) -> Generation {
    CHIPS
        .iter()
        .find(|(n, _)| n.strip_prefix('v') == Some(generation.to_string().as_str()))
        .map_or(Generation::Maverick, |(_, c)| *c)
}

fn emit(generation: u8, opcode: u8, fields: &[(&str, Val)]) -> Result<[u8; 64], LowerRejection> {
    encode(opcode, fields, chip_of(generation)).map_err(|e| LowerRejection::Record {
        opcode,
        field: e.field(),
    })
}

fn send_recv_fields(band: Band, t: Tensor) -> Vec<(&'static str, Val)> {
    let mut f = band_fields(band);
    f.push(("tensor_id", Val::Int(t.0)));
    f.push(("tensor_base", Val::Int(t.1)));
    f.push(("num_elements_per_partition", Val::Int(t.2)));
    f
}

impl Ledger {
    pub fn new(generation: u8) -> Ledger {
        Ledger {
            generation,
            replica_groups: vec![],
            source_target_pairs: vec![],
            attributes: vec![],
            emitted: vec![],
        }
    }

    fn tag(&self, field: &'static str, ordinal: u32) -> Result<u8, LowerRejection> {
        dtype_wire(ordinal, self.generation >= FIRST_V4_DTYPE_GENERATION)
            .map_err(|_| LowerRejection::DtypeOutOfRange { field, ordinal })
    }

    /// Lower one request; on error nothing is recorded.
    pub fn lower(&mut self, req: &Request) -> Result<Emitted, LowerRejection> {
        let out = match req {
            Request::Collective { .. } => self.collective(req)?,
            Request::SendOrRecv {
                send,
                tensor,
                peer,
                band,
            } => {
                let record = emit(self.generation, 0xCB, &send_recv_fields(*band, *tensor))?;
                let dir = if *send { "send" } else { "recv" };
                self.attributes.push((PEER_ATTRIBUTE, dir, *peer));
                Emitted {
                    records: vec![record],
                    refs: vec![("attributes", self.attributes.len() - 1)],
                }
            }
            Request::LocalSwap { .. } => self.local(req)?,
        };
        self.emitted.push(out.clone());
        Ok(out)
    }

    fn collective(&mut self, req: &Request) -> Result<Emitted, LowerRejection> {
        let Request::Collective {
            kind,
            op,
            dtype,
            ap,
            ap2,
            groups,
            pairs,
            channel,
            dim,
            band,
        } = req
        else {
            return Ok(Emitted::default());
        };
        let kind = *kind;
        let wire_kind = collective_wire(kind).ok();
        let name = COLLECTIVE.name(kind).filter(|_| wire_kind.is_some());
        let Some(name) = name else {
            return Err(LowerRejection::SendRecvKind { kind });
        };
        let shape = shape_of(name);
        gate_cc_dim(*dim).map_err(|_| LowerRejection::BadCcDim { dim: *dim })?;
        let tag = self.tag("dtype", *dtype)?;
        cce_wire(*op).map_err(|_| LowerRejection::CceOpNotShipped { op: *op })?;
        if *op != shape.reduce_op {
            return Err(LowerRejection::OpNotAccepted { kind, op: *op });
        }
        if shape.two_legs && ap2.is_none() {
            return Err(LowerRejection::MissingSecondAp { kind });
        }
        if !shape.two_legs && ap2.is_some() {
            return Err(LowerRejection::UnexpectedSecondAp { kind });
        }
        if shape.pairs {
            vet_pairs(kind, groups, pairs)?;
        } else {
            vet_groups(kind, groups, pairs)?;
        }
        let trio = [
            ("cce_op", Val::Name(ALU.name(*op).unwrap_or("").to_string())),
            ("dtype", Val::Int(tag.into())),
            ("kind", Val::Name(name.to_string())),
        ];
        let mut first = band_fields(*band);
        first.extend(trio.iter().cloned());
        first.push(("ap", Val::Bytes(ap.to_vec())));
        let mut records = vec![emit(self.generation, 0xD9, &first)?];
        if let Some(ap2) = ap2 {
            let mut second = vec![("channel_id", Val::Int((*channel).into()))];
            second.extend(trio.iter().cloned());
            second.push(("ap", Val::Bytes(ap2.to_vec())));
            records.push(emit(self.generation, 0xDA, &second)?);
        }
        let reference = if shape.pairs {
            (
                "source_target_pairs",
                find_or_add(&mut self.source_target_pairs, pairs),
            )
        } else {
            (
                "replica_groups",
                find_or_add(&mut self.replica_groups, groups),
            )
        };
        Ok(Emitted {
            records,
            refs: vec![reference],
        })
    }

    fn local(&mut self, req: &Request) -> Result<Emitted, LowerRejection> {
        let Request::LocalSwap {
            kind,
            outgoing,
            incoming,
            peer,
            src_dtype,
            dst_dtype,
            src_ap,
            dst_ap,
            partition,
            bytes,
            lnc,
            band,
        } = req
        else {
            return Ok(Emitted::default());
        };
        // Exactly the kinds without a wire byte are the send/recv kinds (seed 003 §2).
        if COLLECTIVE.name(*kind).is_none() || collective_wire(*kind).is_ok() {
            return Err(LowerRejection::NotSendRecvKind { kind: *kind });
        }
        let src = self.tag("src_dtype", *src_dtype)?;
        let dst = self.tag("dst_dtype", *dst_dtype)?;
        let mover = self.generation >= FIRST_SB2SB_GENERATION
            && gate_lnc(*lnc).is_ok()
            && route_is_sb2sb(*bytes);
        if mover {
            let mut f = band_fields(*band);
            f.extend([
                ("src_dtype", Val::Int(src.into())),
                ("dst_dtype", Val::Int(dst.into())),
                ("src_ap", Val::Bytes(src_ap.to_vec())),
                ("peer_partition", Val::Int((*partition).into())),
                ("dst_ap", Val::Bytes(dst_ap.to_vec())),
            ]);
            return Ok(Emitted {
                records: vec![emit(self.generation, 0xBF, &f)?],
                refs: vec![],
            });
        }
        let (wm, wi, um, ui, v) = *band;
        let records = vec![
            emit(
                self.generation,
                0xCB,
                &send_recv_fields((wm, wi, 0, 0, v), *outgoing),
            )?,
            emit(
                self.generation,
                0xCB,
                &send_recv_fields((0, 0, um, ui, v), *incoming),
            )?,
        ];
        let mut refs = vec![];
        for dir in ["send", "recv"] {
            self.attributes.push((PEER_ATTRIBUTE, dir, *peer));
            refs.push(("attributes", self.attributes.len() - 1));
        }
        Ok(Emitted { records, refs })
    }
}

fn find_or_add<T: Clone + PartialEq>(table: &mut Vec<T>, row: &T) -> usize {
    if let Some(id) = table.iter().position(|r| r == row) {
        return id;
    }
    table.push(row.clone());
    table.len() - 1
}

fn vet_groups(kind: u32, groups: &[Vec<u32>], pairs: &[(u32, u32)]) -> Result<(), LowerRejection> {
    if !pairs.is_empty() {
        return Err(LowerRejection::PairsOnGroupKind { kind });
    }
    if groups.is_empty() {
        return Err(LowerRejection::NoReplicaGroups { kind });
    }
    let found = groups.iter().fold(0usize, |n, g| n.saturating_add(g.len()));
    if found > RANK_LIMIT {
        return Err(LowerRejection::TooLarge {
            what: "ranks",
            found,
            limit: RANK_LIMIT,
        });
    }
    let mut seen = BTreeSet::new();
    for (index, g) in groups.iter().enumerate() {
        if g.is_empty() {
            return Err(LowerRejection::EmptyGroup { index });
        }
        if let Some(&rank) = g.iter().find(|r| !seen.insert(**r)) {
            return Err(LowerRejection::DuplicateRank { rank });
        }
    }
    Ok(())
}

fn vet_pairs(kind: u32, groups: &[Vec<u32>], pairs: &[(u32, u32)]) -> Result<(), LowerRejection> {
    if !groups.is_empty() {
        return Err(LowerRejection::GroupsOnPairKind { kind });
    }
    if pairs.is_empty() {
        return Err(LowerRejection::NoSourceTargetPairs { kind });
    }
    if pairs.len() > PAIR_LIMIT {
        return Err(LowerRejection::TooLarge {
            what: "pairs",
            found: pairs.len(),
            limit: PAIR_LIMIT,
        });
    }
    let (mut from, mut to) = (BTreeSet::new(), BTreeSet::new());
    for &(s, t) in pairs {
        if !from.insert(s) {
            return Err(LowerRejection::DuplicateSource { rank: s });
        }
        if !to.insert(t) {
            return Err(LowerRejection::DuplicateTarget { rank: t });
        }
    }
    Ok(())
}
