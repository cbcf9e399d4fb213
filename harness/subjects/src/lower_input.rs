//! The JSON input of `tpbconform lower`: a generation and a list of IR
//! instructions (SPEC §5.4), parsed into `tpb_core::lower` types. Every error
//! names the JSON path of the bad value (`$.instructions[2].kind`).
//!
//! ```json
//! {"generation": "v3", "instructions": [
//!   {"op": "collective", "kind": "AllReduce", "cce_op": "add", "dtype": "bfloat16",
//!    "src": "<96 hex digits>", "replica_groups": [[0, 1], [2, 3]]},
//!   {"op": "send", "tensor_id": 4096, "tensor_base": 0, "num_elements_per_partition": 64,
//!    "peer": 1},
//!   {"op": "local_send_recv", "kind": "SendRecv", "send": {...tensor...},
//!    "recv": {...tensor...}, "peer": 1, "src_dtype": "bfloat16", "dst_dtype": "bfloat16",
//!    "src_ap": "<32 hex digits>", "dst_ap": "<32 hex digits>", "peer_partition": 0,
//!    "bytes_per_partition": 512, "cores_per_lnc": 2}]}
//! ```
//! Optional: `src2` (hex or null), `replica_groups`, `source_target_pairs` (`[[s, t], …]`),
//! `channel_id`, `cc_dim` (0 when absent), `sync` (`{wait_mode, wait_idx, update_mode,
//! update_idx, semaphore_value}` as decode names them, each 0 when absent). A dtype is a
//! name or its ordinal (an unsigned integer). Any other key is an error.

use crate::strict_json::{Json, Object, Scan};
use std::fmt;
use tpb_core::insn::{Sync, UpdateMode, WaitMode, SYNC_FIELDS};
use tpb_core::lower::{
    Collective, Direction, Generation, IrInstruction, LocalSendRecv, LowerError, Transfer,
    TransferOperand,
};
use tpb_core::lut::{AluOp, CollectiveKind, DTYPE_TABLE};

pub const MAX_INPUT_BYTES: u64 = 16 << 20;

/// A bad value: its JSON path (`$.instructions[0].kind`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

fn err<T>(path: &str, message: impl Into<String>) -> Result<T, PathError> {
    Err(PathError {
        path: path.to_string(),
        message: message.into(),
    })
}

/// An object's JSON path, written only for an error (a lowering case reads every field).
type Path<'p> = &'p dyn Fn() -> String;

/// One object's keys, consumed as they are read; leftovers are errors.
struct Obj<'p, 'a, 'j> {
    path: Path<'p>,
    map: &'a Object<'j>,
    /// Bit `i`: entry `i` was read (past 64 entries one of the first 64 is unknown).
    used: u64,
}

impl<'p, 'a, 'j> Obj<'p, 'a, 'j> {
    fn new(path: Path<'p>, v: &'a Json<'j>) -> Result<Obj<'p, 'a, 'j>, PathError> {
        match v {
            Json::Object(map) => Ok(Obj { path, map, used: 0 }),
            _ => err(&path(), "expected an object"),
        }
    }

    fn at(&self, key: &str) -> String {
        format!("{}.{key}", (self.path)())
    }

    fn opt(&mut self, key: &'static str) -> Option<&'a Json<'j>> {
        let i = self.map.iter().position(|(k, _)| k == key)?;
        self.used |= 1u64.checked_shl(i as u32).unwrap_or(0);
        Some(&self.map[i].1).filter(|v| !v.is_null())
    }

    fn req(&mut self, key: &'static str) -> Result<&'a Json<'j>, PathError> {
        match self.opt(key) {
            Some(v) => Ok(v),
            None => err(&self.at(key), "missing"),
        }
    }

    fn uint<T: TryFrom<u64>>(
        &mut self,
        key: &'static str,
        default: Option<T>,
    ) -> Result<T, PathError> {
        let v = match (self.opt(key), default) {
            (None, Some(d)) => return Ok(d),
            (None, None) => return err(&self.at(key), "missing"),
            (Some(v), _) => v,
        };
        let Some(n) = v.as_u64() else {
            return err(
                &self.at(key),
                format!("expected an unsigned integer, found {v}"),
            );
        };
        T::try_from(n).or_else(|_| {
            err(
                &self.at(key),
                format!("{n} does not fit {} bits", 8 * std::mem::size_of::<T>()),
            )
        })
    }

    fn str(&mut self, key: &'static str) -> Result<&'a str, PathError> {
        match self.req(key)?.as_str() {
            Some(s) => Ok(s),
            None => err(&self.at(key), "expected a string"),
        }
    }

    fn hex<const N: usize>(&mut self, key: &'static str) -> Result<Option<[u8; N]>, PathError> {
        let Some(v) = self.opt(key) else {
            return Ok(None);
        };
        let Some(s) = v.as_str() else {
            return err(&self.at(key), "expected a hex string");
        };
        hex_digits(s).map(Some).or_else(|e| err(&self.at(key), e))
    }

    fn req_hex<const N: usize>(&mut self, key: &'static str) -> Result<[u8; N], PathError> {
        self.hex(key)?
            .map_or_else(|| err(&self.at(key), "missing"), Ok)
    }

    /// An array of arrays of ranks (absent: none).
    fn ranks(&mut self, key: &'static str) -> Result<Vec<Vec<u32>>, PathError> {
        let Some(v) = self.opt(key) else {
            return Ok(Vec::new());
        };
        let Some(outer) = v.as_array() else {
            return err(&self.at(key), "expected an array of arrays of ranks");
        };
        let at = |i: usize| format!("{}[{i}]", self.at(key));
        outer
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let Some(inner) = g.as_array() else {
                    return err(&at(i), "expected an array of ranks");
                };
                inner
                    .iter()
                    .enumerate()
                    .map(
                        |(j, r)| match r.as_u64().and_then(|n| u32::try_from(n).ok()) {
                            Some(r) => Ok(r),
                            None => err(
                                &format!("{}[{j}]", at(i)),
                                format!("expected a u32 rank, found {r}"),
                            ),
                        },
                    )
                    .collect()
            })
            .collect()
    }

    fn pairs(&mut self, key: &'static str) -> Result<Vec<(u32, u32)>, PathError> {
        let ranks = self.ranks(key)?.into_iter().enumerate();
        ranks
            .map(|(i, p)| match p[..] {
                [s, t] => Ok((s, t)),
                _ => err(
                    &format!("{}[{i}]", self.at(key)),
                    "expected [source, target]",
                ),
            })
            .collect()
    }

    fn finish(self) -> Result<(), PathError> {
        let unread = |i: usize| i >= 64 || self.used & (1 << i) == 0;
        match (0..self.map.len()).find(|&i| unread(i)) {
            Some(i) => err(&self.at(&self.map[i].0), "unknown key"),
            None => Ok(()),
        }
    }
}

/// `N` bytes as hex digits, whitespace skipped: the count is checked first, then the first pair
/// with a non-hex digit is named.
fn hex_digits<const N: usize>(s: &str) -> Result<[u8; N], String> {
    let mut out = [0u8; N];
    // The usual text: exactly the digits.
    if s.len() == 2 * N {
        let nibble = |c: u8| char::from(c).to_digit(16).map_or(16, |d| d as u8);
        let mut ok = true;
        for (o, p) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
            let (h, l) = (nibble(p[0]), nibble(p[1]));
            ok &= h < 16 && l < 16;
            *o = h << 4 | (l & 15);
        }
        if ok {
            return Ok(out);
        }
        out = [0u8; N];
    }
    let (mut n, mut bad) = (0usize, None);
    for c in s.bytes().filter(|c| !c.is_ascii_whitespace()) {
        match (out.get_mut(n / 2), char::from(c).to_digit(16)) {
            (Some(o), Some(d)) => *o = (*o << 4) | d as u8,
            (Some(_), None) => bad = bad.or(Some(n / 2)),
            (None, _) => {}
        }
        n += 1;
    }
    if n != 2 * N {
        return Err(format!("expected {} hex digits, found {n}", 2 * N));
    }
    match bad {
        Some(i) => Err(format!("not a hex digit at digit {}", 2 * i)),
        None => Ok(out),
    }
}

/// A SPEC §6.4 name, or a bare ordinal (the `lower` operation sends out-of-range ones so).
fn dtype(o: &mut Obj<'_, '_, '_>, key: &'static str) -> Result<u32, PathError> {
    if let Some(n) = o.opt(key).and_then(Json::as_u64) {
        return u32::try_from(n).or_else(|_| err(&o.at(key), format!("{n} does not fit 32 bits")));
    }
    let name = o.str(key)?;
    dtype_named(name).map_or_else(|| err(&o.at(key), format!("unknown dtype {name:?}")), Ok)
}

fn dtype_named(name: &str) -> Option<u32> {
    DTYPE_TABLE
        .iter()
        .position(|(n, _, _)| *n == name)
        .map(|i| i as u32)
}

fn kind(o: &mut Obj<'_, '_, '_>) -> Result<CollectiveKind, PathError> {
    let name = o.str("kind")?;
    CollectiveKind::from_name(name).map_or_else(
        || err(&o.at("kind"), format!("unknown collective kind {name:?}")),
        Ok,
    )
}

/// The object `v` under `o`'s `key`, read by `read`; other keys are errors.
fn nested<T>(
    o: &Obj<'_, '_, '_>,
    key: &str,
    v: &Json<'_>,
    read: impl FnOnce(&mut Obj<'_, '_, '_>) -> Result<T, PathError>,
) -> Result<T, PathError> {
    let p = || o.at(key);
    let mut n = Obj::new(&p, v)?;
    let r = read(&mut n)?;
    n.finish()?;
    Ok(r)
}

fn sync(o: &mut Obj<'_, '_, '_>) -> Result<Sync, PathError> {
    let Some(v) = o.opt("sync") else {
        return Ok(Sync::default());
    };
    nested(o, "sync", v, |s| {
        Ok(Sync {
            wait_mode: WaitMode(s.uint("wait_mode", Some(0))?),
            wait_idx: s.uint("wait_idx", Some(0))?,
            update_mode: UpdateMode(s.uint("update_mode", Some(0))?),
            update_idx: s.uint("update_idx", Some(0))?,
            semaphore_value: s.uint("semaphore_value", Some(0))?,
            ..Sync::default()
        })
    })
}

fn tensor(o: &mut Obj<'_, '_, '_>) -> Result<TransferOperand, PathError> {
    Ok(TransferOperand {
        tensor_id: o.uint("tensor_id", None)?,
        tensor_base: o.uint("tensor_base", None)?,
        num_elements_per_partition: o.uint("num_elements_per_partition", None)?,
    })
}

fn collective(o: &mut Obj<'_, '_, '_>) -> Result<Collective, PathError> {
    let kind = kind(o)?;
    let op_name = o.str("cce_op")?;
    let Some(cce_op) = AluOp::from_name(op_name) else {
        return err(&o.at("cce_op"), format!("unknown AluOp {op_name:?}"));
    };
    // Read in this order (each its error): the fields as written.
    Ok(Collective {
        kind,
        cce_op,
        dtype: dtype(o, "dtype")?,
        src: o.req_hex("src")?,
        src2: o.hex("src2")?,
        replica_groups: o.ranks("replica_groups")?,
        source_target_pairs: o.pairs("source_target_pairs")?,
        channel_id: o.uint("channel_id", Some(0))?,
        cc_dim: o.uint("cc_dim", Some(0))?,
        sync: sync(o)?,
    })
}

fn local(o: &mut Obj<'_, '_, '_>) -> Result<LocalSendRecv, PathError> {
    let sub = |o: &mut Obj<'_, '_, '_>, key: &'static str| {
        let v = o.req(key)?;
        nested(o, key, v, tensor)
    };
    Ok(LocalSendRecv {
        kind: kind(o)?,
        send: sub(o, "send")?,
        recv: sub(o, "recv")?,
        peer: o.uint("peer", None)?,
        src_dtype: dtype(o, "src_dtype")?,
        dst_dtype: dtype(o, "dst_dtype")?,
        src_ap: o.req_hex("src_ap")?,
        dst_ap: o.req_hex("dst_ap")?,
        peer_partition: o.uint("peer_partition", None)?,
        bytes_per_partition: o.uint("bytes_per_partition", None)?,
        cores_per_lnc: o.uint("cores_per_lnc", None)?,
        sync: sync(o)?,
    })
}

fn instruction(path: Path, v: &Json<'_>) -> Result<IrInstruction, PathError> {
    let mut o = Obj::new(path, v)?;
    let insn = match o.str("op")? {
        "collective" => IrInstruction::Collective(collective(&mut o)?),
        d @ ("send" | "recv") => IrInstruction::Transfer(Transfer {
            direction: Direction::from_name(d).unwrap_or(Direction::Send),
            operand: tensor(&mut o)?,
            peer: o.uint("peer", None)?,
            sync: sync(&mut o)?,
        }),
        "local_send_recv" => IrInstruction::LocalSendRecv(local(&mut o)?),
        other => {
            return err(
                &o.at("op"),
                format!("unknown op {other:?} (collective, send, recv, local_send_recv)"),
            )
        }
    };
    o.finish()?;
    Ok(insn)
}

pub fn parse_program(v: &Json<'_>) -> Result<(Generation, Vec<IrInstruction>), PathError> {
    let mut o = Obj::new(&|| "$".to_string(), v)?;
    let g = o.str("generation")?;
    let Ok(gen) = Generation::from_name(g) else {
        return err(
            &o.at("generation"),
            format!("unknown generation {g:?} (v2, v3, v4, v5)"),
        );
    };
    let Some(list) = o.req("instructions")?.as_array() else {
        return err(&o.at("instructions"), "expected an array");
    };
    let insns = list
        .iter()
        .enumerate()
        .map(|(i, v)| instruction(&|| format!("$.instructions[{i}]"), v))
        .collect::<Result<Vec<_>, _>>()?;
    o.finish()?;
    Ok((gen, insns))
}

/// [`parse_program`] straight from the text (a `lib:` worker's library reads one per case):
/// `None` wherever unsure (an escape, a key twice, `op` not first, any error), then
/// `parse_program` names the error; else the same program (`tests/text_readers.rs`).
pub fn parse_program_text(text: &str) -> Option<(Generation, Vec<IrInstruction>)> {
    let mut s = Scan::new(text);
    let (mut gen, mut insns, mut seen) = (None, None, 0u64);
    s.entries(|s, k| {
        match key_once(&mut seen, &["generation", "instructions"], k)? {
            0 => gen = Some(Generation::from_name(s.str()?).ok()?),
            _ => {
                let mut v = Vec::new();
                s.items(|s| fast_instruction(s).map(|i| v.push(i)))?;
                insns = Some(v);
            }
        }
        Some(())
    })?;
    s.end()?;
    Some((gen?, insns?))
}

/// The index of `key` in `keys`, only the first time.
fn key_once(seen: &mut u64, keys: &[&str], key: &str) -> Option<usize> {
    let i = keys.iter().position(|k| *k == key)?;
    let bit = 1u64 << i;
    (*seen & bit == 0).then(|| *seen |= bit)?;
    Some(i)
}

fn fit<T: TryFrom<u64>>(v: Option<u64>, default: Option<T>) -> Option<T> {
    match v {
        Some(n) => T::try_from(n).ok(),
        None => default,
    }
}

fn fast_dtype(s: &mut Scan<'_>) -> Option<u32> {
    match s.u64() {
        Some(n) => u32::try_from(n).ok(),
        None => dtype_named(s.str()?),
    }
}

fn fast_ranks(s: &mut Scan<'_>) -> Option<Vec<Vec<u32>>> {
    let mut out = Vec::new();
    s.items(|s| {
        let mut g = Vec::new();
        s.items(|s| u32::try_from(s.u64()?).ok().map(|r| g.push(r)))?;
        out.push(g);
        Some(())
    })?;
    Some(out)
}

/// An object of unsigned integers (or nulls) under `keys`, each at most once.
fn fast_uints<const N: usize>(s: &mut Scan<'_>, keys: &[&str]) -> Option<[Option<u64>; N]> {
    let (mut v, mut seen) = ([None; N], 0);
    s.entries(|s, k| {
        let i = key_once(&mut seen, keys, k)?;
        v[i] = if s.null() { None } else { Some(s.u64()?) };
        Some(())
    })?;
    Some(v)
}

/// The band fields after the debug bytes.
fn fast_sync(s: &mut Scan<'_>) -> Option<Sync> {
    let v: [_; 5] = fast_uints(s, &SYNC_FIELDS[2..])?;
    Some(Sync {
        wait_mode: WaitMode(fit(v[0], Some(0))?),
        wait_idx: fit(v[1], Some(0))?,
        update_mode: UpdateMode(fit(v[2], Some(0))?),
        update_idx: fit(v[3], Some(0))?,
        semaphore_value: fit(v[4], Some(0))?,
        ..Sync::default()
    })
}

fn fast_tensor(v: [Option<u64>; 3]) -> Option<TransferOperand> {
    Some(TransferOperand {
        tensor_id: fit(v[0], None)?,
        tensor_base: fit(v[1], None)?,
        num_elements_per_partition: fit(v[2], None)?,
    })
}

const INSN_KEYS: [&str; 24] = [
    "op",
    "kind",
    "cce_op",
    "dtype",
    "src",
    "src2",
    "replica_groups",
    "source_target_pairs",
    "channel_id",
    "cc_dim",
    "sync",
    "tensor_id",
    "tensor_base",
    "num_elements_per_partition",
    "peer",
    "send",
    "recv",
    "src_dtype",
    "dst_dtype",
    "src_ap",
    "dst_ap",
    "peer_partition",
    "bytes_per_partition",
    "cores_per_lnc",
];

/// Which of [`INSN_KEYS`] each op has (bit `i`: key `i`).
fn insn_keys(op: &str) -> u64 {
    let bits = |keys: &[usize]| keys.iter().fold(0, |b, i| b | 1 << i);
    match op {
        "collective" => bits(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
        "send" | "recv" => bits(&[0, 10, 11, 12, 13, 14]),
        "local_send_recv" => bits(&[0, 1, 10, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]),
        _ => 0,
    }
}

/// Its `op` first.
fn fast_instruction(s: &mut Scan<'_>) -> Option<IrInstruction> {
    let mut op = "";
    let mut seen = 0u64;
    let (mut strs, mut ints) = ([None; 24], [None; 24]);
    let (mut dtypes, mut groups, mut pairs) = ([None; 24], None, None);
    let (mut sync, mut operands) = (None, [None, None]);
    s.entries(|s, k| {
        let i = key_once(&mut seen, &INSN_KEYS, k)?;
        if i == 0 {
            op = s.str()?;
            return Some(());
        }
        // Keys of another op, or before `op`: the tree reader's.
        if insn_keys(op) & 1 << i == 0 {
            return None;
        }
        if s.null() {
            return Some(());
        }
        match INSN_KEYS[i] {
            "kind" | "cce_op" | "src" | "src2" | "src_ap" | "dst_ap" => strs[i] = Some(s.str()?),
            "dtype" | "src_dtype" | "dst_dtype" => dtypes[i] = Some(fast_dtype(s)?),
            "replica_groups" => groups = Some(fast_ranks(s)?),
            "source_target_pairs" => {
                let p = fast_ranks(s)?.into_iter().map(|p| match p[..] {
                    [a, b] => Some((a, b)),
                    _ => None,
                });
                pairs = Some(p.collect::<Option<Vec<_>>>()?);
            }
            "sync" => sync = Some(fast_sync(s)?),
            "send" | "recv" => {
                operands[usize::from(i == 16)] =
                    Some(fast_tensor(fast_uints(s, &INSN_KEYS[11..14])?)?)
            }
            _ => ints[i] = Some(s.u64()?),
        }
        Some(())
    })?;
    let kind = |k: Option<&str>| CollectiveKind::from_name(k?);
    let sync = sync.unwrap_or_default();
    Some(match op {
        "collective" => IrInstruction::Collective(Collective {
            kind: kind(strs[1])?,
            cce_op: AluOp::from_name(strs[2]?)?,
            dtype: dtypes[3]?,
            src: hex_digits(strs[4]?).ok()?,
            src2: strs[5]
                .map(|h| hex_digits(h).ok())
                .map_or(Some(None), |h| h.map(Some))?,
            replica_groups: groups.unwrap_or_default(),
            source_target_pairs: pairs.unwrap_or_default(),
            channel_id: fit(ints[8], Some(0))?,
            cc_dim: fit(ints[9], Some(0))?,
            sync,
        }),
        "send" | "recv" => IrInstruction::Transfer(Transfer {
            direction: Direction::from_name(op)?,
            operand: fast_tensor([ints[11], ints[12], ints[13]])?,
            peer: fit(ints[14], None)?,
            sync,
        }),
        "local_send_recv" => IrInstruction::LocalSendRecv(LocalSendRecv {
            kind: kind(strs[1])?,
            send: operands[0]?,
            recv: operands[1]?,
            peer: fit(ints[14], None)?,
            src_dtype: dtypes[17]?,
            dst_dtype: dtypes[18]?,
            src_ap: hex_digits(strs[19]?).ok()?,
            dst_ap: hex_digits(strs[20]?).ok()?,
            peer_partition: fit(ints[21], None)?,
            bytes_per_partition: fit(ints[22], None)?,
            cores_per_lnc: fit(ints[23], None)?,
            sync,
        }),
        _ => return None,
    })
}

/// The JSON path (below the instruction's) of the value a lowering error is about.
pub fn error_path(insn: &IrInstruction, e: &LowerError) -> String {
    // The second place `rank` is at.
    let first_dup = |groups: &[Vec<u32>], rank: u32| -> String {
        let mut at = groups.iter().enumerate().flat_map(|(i, g)| {
            let hits = g.iter().enumerate().filter(move |(_, r)| **r == rank);
            hits.map(move |(j, _)| (i, j))
        });
        match at.nth(1) {
            Some((i, j)) => format!(".replica_groups[{i}][{j}]"),
            None => ".replica_groups".to_string(),
        }
    };
    let pair_at = |pairs: &[(u32, u32)], rank: u32, side: usize| -> String {
        let pos = |p: &(u32, u32)| if side == 0 { p.0 } else { p.1 };
        match (0..pairs.len()).filter(|&k| pos(&pairs[k]) == rank).nth(1) {
            Some(k) => format!(".source_target_pairs[{k}][{side}]"),
            None => ".source_target_pairs".to_string(),
        }
    };
    let (groups, stp): (&[Vec<u32>], &[(u32, u32)]) = match insn {
        IrInstruction::Collective(c) => (&c.replica_groups, &c.source_target_pairs),
        _ => (&[], &[]),
    };
    match *e {
        LowerError::SendRecvKind { .. } | LowerError::NotSendRecvKind { .. } => ".kind".into(),
        LowerError::BadCcDim { .. } => ".cc_dim".into(),
        LowerError::DtypeOutOfRange { field, .. } => format!(".{field}"),
        LowerError::CceOpNotShipped { .. } | LowerError::OpNotAccepted { .. } => ".cce_op".into(),
        LowerError::MissingSecondAp { .. } | LowerError::UnexpectedSecondAp { .. } => {
            ".src2".into()
        }
        LowerError::PairsOnGroupKind { .. } | LowerError::NoSourceTargetPairs { .. } => {
            ".source_target_pairs".into()
        }
        LowerError::GroupsOnPairKind { .. } | LowerError::NoReplicaGroups { .. } => {
            ".replica_groups".into()
        }
        LowerError::TooLarge { what, .. } => if what == "pairs" {
            ".source_target_pairs"
        } else {
            ".replica_groups"
        }
        .into(),
        LowerError::EmptyGroup { index } => format!(".replica_groups[{index}]"),
        LowerError::DuplicateRank { rank } => first_dup(groups, rank),
        LowerError::DuplicateSource { rank } => pair_at(stp, rank, 0),
        LowerError::DuplicateTarget { rank } => pair_at(stp, rank, 1),
        // The encoders name band fields bare (SPEC §5.2); the IR nests them in `sync`.
        LowerError::Record { field, .. } if SYNC_FIELDS.contains(&field) => {
            format!(".sync.{field}")
        }
        LowerError::Record { field, .. } => format!(".{field}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tpb_core::lower::AP2_LEN;

    fn read(text: &str) -> Result<(Generation, Vec<IrInstruction>), String> {
        let doc = crate::strict_json::parse(text).map_err(|e| e.to_string())?;
        parse_program(&doc).map_err(|e| e.to_string())
    }

    /// An AllReduce whose `src` is `src` (48 bytes: 96 hex digits).
    fn with_src(src: &str) -> String {
        format!(
            r#"{{"generation":"v3","instructions":[{{"op":"collective","kind":"AllReduce",
            "cce_op":"add","dtype":"bfloat16","src":"{src}","replica_groups":[[0,1]]}}]}}"#
        )
    }

    #[test]
    fn hex_operands_skip_whitespace_and_name_the_first_bad_pair() {
        let ok = "0a".repeat(AP2_LEN);
        let (_, insns) = read(&with_src(&ok)).unwrap();
        let IrInstruction::Collective(c) = &insns[0] else {
            panic!("{insns:?}")
        };
        assert_eq!(c.src, [0x0A; AP2_LEN]);
        let spaced = format!("0A {}\\n", &ok[2..]);
        assert!(read(&with_src(&spaced)).is_ok(), "whitespace skipped");
        let src = "$.instructions[0].src";
        assert_eq!(
            read(&with_src("0a0b")).unwrap_err(),
            format!("{src}: expected {} hex digits, found 4", 2 * AP2_LEN)
        );
        // Digit 5 (the second of pair 2) and digit 9 bad: pair 2 is named.
        let mut bad = ok.clone().into_bytes();
        bad[5] = b'g';
        bad[9] = b'x';
        let bad = String::from_utf8(bad).unwrap();
        assert_eq!(
            read(&with_src(&bad)).unwrap_err(),
            format!("{src}: not a hex digit at digit 4")
        );
        let long = format!("{ok}00");
        assert_eq!(
            read(&with_src(&long)).unwrap_err(),
            format!(
                "{src}: expected {} hex digits, found {}",
                2 * AP2_LEN,
                2 * AP2_LEN + 2
            )
        );
    }
}
