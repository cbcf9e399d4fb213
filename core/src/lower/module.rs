//! The module side-tables (S003 §3.3, §4): replica-group registry,
//! source-target-pair registry, send/recv attributes, plus the lowered records.

use super::ir::Direction;
use super::Generation;
use crate::bundle::Bundle;

/// `Module::setAttribute` kind of the send/recv peer pairing (S003 §4 `kind=2`).
pub const SEND_RECV_ATTRIBUTE_KIND: u32 = 2;
/// Most ranks, summed over the groups of one instruction (DL-5, bounded memory).
pub const MAX_RANKS: usize = 4096;
/// Most source-target pairs of one instruction (DL-5).
pub const MAX_PAIRS: usize = 4096;

/// One `setAttribute(kind=2, value)` entry: direction and peer (S003 §4.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Attribute {
    /// Always [`SEND_RECV_ATTRIBUTE_KIND`].
    pub kind: u32,
    /// Send or recv.
    pub direction: Direction,
    /// Symbolic peer rank.
    pub peer: u32,
}

/// Which side-table entry an instruction's records need (DL-6).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum SideRef {
    /// An id of the replica-group registry.
    ReplicaGroups(usize),
    /// An id of the source-target-pair registry.
    SourceTargetPairs(usize),
    /// An index of the attribute list.
    Attribute(usize),
}

/// The records of one lowered instruction and the side-table entries they need.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub struct Lowered {
    /// The 64-byte records in emission order (0xD9 then 0xDA, or 0xCB, …).
    pub records: Vec<Bundle>,
    /// Side-table entries, in registration order.
    pub side: Vec<SideRef>,
}

/// A `bir::Module`'s collective metadata (S003 §3.3, §4) and the records
/// lowered into it. Ids are dense, from 0, in first-registration order;
/// identical geometry registers once (DL-6).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Module {
    generation: Generation,
    replica_groups: Vec<Vec<Vec<u32>>>,
    source_target_pairs: Vec<Vec<(u32, u32)>>,
    attributes: Vec<Attribute>,
    lowered: Vec<Lowered>,
}

impl Module {
    /// An empty module for a generation.
    pub fn new(generation: Generation) -> Module {
        Module {
            generation,
            replica_groups: Vec::new(),
            source_target_pairs: Vec::new(),
            attributes: Vec::new(),
            lowered: Vec::new(),
        }
    }

    /// The target generation.
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The replica-group registry; index = id.
    pub fn replica_groups(&self) -> &[Vec<Vec<u32>>] {
        &self.replica_groups
    }

    /// The source-target-pair registry; index = id.
    pub fn source_target_pairs(&self) -> &[Vec<(u32, u32)>] {
        &self.source_target_pairs
    }

    /// The send/recv attributes; index = id.
    pub fn attributes(&self) -> &[Attribute] {
        &self.attributes
    }

    /// Every instruction lowered so far, in order.
    pub fn lowered(&self) -> &[Lowered] {
        &self.lowered
    }

    /// All records, in order.
    pub fn records(&self) -> impl Iterator<Item = &Bundle> {
        self.lowered.iter().flat_map(|l| l.records.iter())
    }

    /// `Module::addReplicaGroupIDs` (S003 §3.3): the id of an identical entry,
    /// or a new one.
    pub(crate) fn add_replica_groups(&mut self, groups: &[Vec<u32>]) -> SideRef {
        SideRef::ReplicaGroups(intern(&mut self.replica_groups, groups))
    }

    /// `Module::addSrcTargetPairIDs` (S003 §3.3).
    pub(crate) fn add_source_target_pairs(&mut self, pairs: &[(u32, u32)]) -> SideRef {
        SideRef::SourceTargetPairs(intern(&mut self.source_target_pairs, pairs))
    }

    /// `Module::setAttribute(kind=2, …)` (S003 §4.1): one entry per record.
    pub(crate) fn set_attribute(&mut self, direction: Direction, peer: u32) -> SideRef {
        self.attributes.push(Attribute {
            kind: SEND_RECV_ATTRIBUTE_KIND,
            direction,
            peer,
        });
        SideRef::Attribute(self.attributes.len() - 1)
    }

    pub(crate) fn push(&mut self, lowered: Lowered) {
        self.lowered.push(lowered);
    }
}

/// The index of the entry of `list` equal to `item`, appended when there is
/// none (S003 §3.3: an identical side entry is shared).
fn intern<T: PartialEq + Clone>(list: &mut Vec<Vec<T>>, item: &[T]) -> usize {
    list.iter().position(|x| x == item).unwrap_or_else(|| {
        list.push(item.to_vec());
        list.len() - 1
    })
}
