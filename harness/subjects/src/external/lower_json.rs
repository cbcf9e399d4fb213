//! The JSON of the `lower` operation (docs/subject-protocol.md): the
//! request's `ir` is `tpbconform lower`'s input document ([`ir_document`]),
//! the answer what `tpbconform lower --format json` prints, read strictly
//! ([`module_from_json`]: a bad key names its JSON path).

use crate::strict_json::{get, Json, Object};
use crate::subjects::{Lowered, LoweredModule};
use tpb_core::insn::Sync;
use tpb_core::lower::{Generation, IrInstruction, TransferOperand};
use tpb_core::lut::DTYPE_TABLE;

// The IR document is written as bytes, keys in the order `serde_json`
// (preserve_order) printed them, without `fmt`.

fn num(o: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    o.extend_from_slice(&digits[at..]);
}

/// `,"key":n` for each pair (no comma before the first when `first`).
fn nums(o: &mut Vec<u8>, first: bool, pairs: &[(&str, u64)]) {
    for (i, (key, n)) in pairs.iter().enumerate() {
        o.extend_from_slice(if first && i == 0 { b"\"" } else { b",\"" });
        o.extend_from_slice(key.as_bytes());
        o.extend_from_slice(b"\":");
        num(o, *n);
    }
}

/// `s` as a JSON string (`s` needs no escapes: names and hex).
fn string(o: &mut Vec<u8>, s: &str) {
    o.extend_from_slice(b"\"");
    o.extend_from_slice(s.as_bytes());
    o.extend_from_slice(b"\"");
}

/// A dtype as the input document names it: its SPEC §6.4 name, or the bare
/// ordinal when it is past the table (so `dtype_out_of_range` can be asked).
fn dtype(o: &mut Vec<u8>, ordinal: u32) {
    match usize::try_from(ordinal)
        .ok()
        .and_then(|i| DTYPE_TABLE.get(i))
    {
        Some((name, _, _)) => string(o, name),
        None => num(o, ordinal.into()),
    }
}

/// `,"sync":{…}`.
fn sync(o: &mut Vec<u8>, s: &Sync) {
    o.extend_from_slice(br#","sync":{"#);
    nums(
        o,
        true,
        &[
            ("wait_mode", s.wait_mode.0.into()),
            ("wait_idx", s.wait_idx.into()),
            ("update_mode", s.update_mode.0.into()),
            ("update_idx", s.update_idx.into()),
            ("semaphore_value", s.semaphore_value.into()),
        ],
    );
    o.extend_from_slice(b"}");
}

/// An operand's keys ([`nums`]).
fn operand(o: &mut Vec<u8>, first: bool, t: &TransferOperand) {
    nums(
        o,
        first,
        &[
            ("tensor_id", t.tensor_id),
            ("tensor_base", t.tensor_base),
            ("num_elements_per_partition", t.num_elements_per_partition),
        ],
    );
}

/// `,"key":{…}`.
fn tensor(o: &mut Vec<u8>, key: &str, t: &TransferOperand) {
    o.extend_from_slice(b",\"");
    o.extend_from_slice(key.as_bytes());
    o.extend_from_slice(b"\":{");
    operand(o, true, t);
    o.extend_from_slice(b"}");
}

/// `bytes` as a JSON string of lowercase hex ([`crate::subjects::hex`]),
/// 32 bytes a piece.
fn hex(o: &mut Vec<u8>, bytes: &[u8]) {
    o.extend_from_slice(b"\"");
    for chunk in bytes.chunks(32) {
        let mut digits = [0u8; 64];
        for (d, &x) in digits.chunks_exact_mut(2).zip(chunk) {
            d.copy_from_slice(&crate::subjects::hex_pair(x));
        }
        o.extend_from_slice(&digits[..2 * chunk.len()]);
    }
    o.extend_from_slice(b"\"");
}

fn list<T>(o: &mut Vec<u8>, xs: &[T], mut each: impl FnMut(&mut Vec<u8>, &T)) {
    o.extend_from_slice(b"[");
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            o.extend_from_slice(b",");
        }
        each(o, x);
    }
    o.extend_from_slice(b"]");
}

fn instruction(o: &mut Vec<u8>, insn: &IrInstruction) {
    match insn {
        IrInstruction::Collective(c) => {
            o.extend_from_slice(br#"{"op":"collective","kind":"#);
            string(o, c.kind.name());
            o.extend_from_slice(br#","cce_op":"#);
            string(o, c.cce_op.name());
            o.extend_from_slice(br#","dtype":"#);
            dtype(o, c.dtype);
            o.extend_from_slice(br#","src":"#);
            hex(o, &c.src);
            o.extend_from_slice(br#","src2":"#);
            match &c.src2 {
                Some(s) => hex(o, s),
                None => o.extend_from_slice(b"null"),
            }
            o.extend_from_slice(br#","replica_groups":"#);
            list(o, &c.replica_groups, |o, g| {
                list(o, g, |o, r| num(o, (*r).into()));
            });
            o.extend_from_slice(br#","source_target_pairs":"#);
            list(o, &c.source_target_pairs, |o, (s, t)| {
                list(o, &[*s, *t], |o, r| num(o, (*r).into()));
            });
            nums(
                o,
                false,
                &[
                    ("channel_id", c.channel_id.into()),
                    ("cc_dim", c.cc_dim.into()),
                ],
            );
            sync(o, &c.sync);
        }
        IrInstruction::Transfer(t) => {
            o.extend_from_slice(br#"{"op":"#);
            string(o, t.direction.name());
            operand(o, false, &t.operand);
            nums(o, false, &[("peer", t.peer.into())]);
            sync(o, &t.sync);
        }
        IrInstruction::LocalSendRecv(l) => {
            o.extend_from_slice(br#"{"op":"local_send_recv","kind":"#);
            string(o, l.kind.name());
            tensor(o, "send", &l.send);
            tensor(o, "recv", &l.recv);
            nums(o, false, &[("peer", l.peer.into())]);
            o.extend_from_slice(br#","src_dtype":"#);
            dtype(o, l.src_dtype);
            o.extend_from_slice(br#","dst_dtype":"#);
            dtype(o, l.dst_dtype);
            o.extend_from_slice(br#","src_ap":"#);
            hex(o, &l.src_ap);
            o.extend_from_slice(br#","dst_ap":"#);
            hex(o, &l.dst_ap);
            nums(
                o,
                false,
                &[
                    ("peer_partition", l.peer_partition.into()),
                    ("bytes_per_partition", l.bytes_per_partition),
                    ("cores_per_lnc", l.cores_per_lnc.into()),
                ],
            );
            sync(o, &l.sync);
        }
    }
    o.extend_from_slice(b"}");
}

fn document(o: &mut Vec<u8>, gen: Generation, insns: &[IrInstruction]) {
    o.extend_from_slice(br#"{"generation":"#);
    string(o, gen.name());
    o.extend_from_slice(br#","instructions":"#);
    list(o, insns, instruction);
    o.extend_from_slice(b"}");
}

/// The `tpbconform lower` input document of `insns` under `gen`, as text.
pub fn ir_document(gen: Generation, insns: &[IrInstruction]) -> String {
    let mut o = Vec::with_capacity(64 + 600 * insns.len());
    document(&mut o, gen, insns);
    // Names, digits and hex: ASCII.
    String::from_utf8(o).unwrap_or_default()
}

/// The keys of a `lower` success answer (besides `id`), as
/// `tpb_core::lower::Module::to_json` writes them.
pub const LOWERED_KEYS: [&str; 5] = [
    "generation",
    "instructions",
    "replica_groups",
    "source_target_pairs",
    "attributes",
];

/// Checks that `m` has exactly the keys `want` (names the first stray or
/// missing one); the protocol's answers are read with it too.
pub(super) fn exact_keys(m: &Object<'_>, want: &[&str]) -> Result<(), String> {
    if let Some((k, _)) = m.iter().find(|(k, _)| !want.contains(&&**k)) {
        return Err(format!("unexpected key `{k}`"));
    }
    if let Some(k) = want.iter().find(|k| get(m, k).is_none()) {
        return Err(format!("missing key `{k}`"));
    }
    Ok(())
}

// The readers below take their JSON path as a closure: it is written only
// for an error (a lowering answer is read for every collective_lowering case).
type Path<'p> = &'p dyn Fn() -> String;

fn keys(path: Path, m: &Object<'_>, want: &[&str]) -> Result<(), String> {
    exact_keys(m, want).map_err(|e| format!("{}: {e}", path()))
}

fn array<'a, 'j>(path: Path, v: Option<&'a Json<'j>>) -> Result<&'a [Json<'j>], String> {
    v.and_then(Json::as_array)
        .ok_or_else(|| format!("{} is not an array", path()))
}

fn object<'a, 'j>(path: Path, v: &'a Json<'j>) -> Result<&'a Object<'j>, String> {
    v.as_object()
        .ok_or_else(|| format!("{} is not an object", path()))
}

fn u32_at(path: Path, v: Option<&Json<'_>>) -> Result<u32, String> {
    v.and_then(Json::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("{} is not a u32", path()))
}

fn index_at(path: Path, v: Option<&Json<'_>>) -> Result<usize, String> {
    v.and_then(Json::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{} is not an index", path()))
}

/// The side-table `name` of a module answer: an array of objects with exactly the keys
/// `keys_of`, the k-th of `id` k; `entry` reads one (its JSON path, the object).
fn side_table<T>(
    m: &Object<'_>,
    name: &str,
    keys_of: &[&str],
    entry: impl Fn(Path, &Object<'_>) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    array(&|| format!("$.{name}"), get(m, name))?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = || format!("$.{name}[{i}]");
            let e = object(&p, v)?;
            keys(&p, e, keys_of)?;
            match index_at(&|| format!("{}.id", p()), get(e, "id"))? {
                id if id == i => {}
                id => return Err(format!("{}.id is {id}, expected {i}", p())),
            }
            entry(&p, e)
        })
        .collect()
}

fn ranks(path: Path, v: &Json<'_>) -> Result<Vec<u32>, String> {
    array(path, Some(v))?
        .iter()
        .enumerate()
        .map(|(j, r)| u32_at(&|| format!("{}[{j}]", path()), Some(r)))
        .collect()
}

/// Reads a `lower` success answer (the object without its `id`) into the
/// harness's typed module ([`check_count`] compares it with the request).
pub fn module_from_json(m: &Object<'_>) -> Result<LoweredModule, String> {
    keys(&|| "$".into(), m, &LOWERED_KEYS)?;
    let list = array(&|| "$.instructions".into(), get(m, "instructions"))?;
    let mut instrs = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let p = || format!("$.instructions[{i}]");
        let o = object(&p, v)?;
        keys(&p, o, &["records", "side"])?;
        let records = array(&|| format!("{}.records", p()), get(o, "records"))?
            .iter()
            .enumerate()
            .map(|(j, r)| {
                r.as_str()
                    .and_then(crate::fields_json::parse_bundle_hex)
                    .ok_or_else(|| format!("{}.records[{j}] is not 128 hex digits", p()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let side = array(&|| format!("{}.side", p()), get(o, "side"))?
            .iter()
            .enumerate()
            .map(|(j, r)| {
                let sp = || format!("{}.side[{j}]", p());
                let e = object(&sp, r)?;
                keys(&sp, e, &["table", "id"])?;
                let name = get(e, "table").and_then(Json::as_str);
                let Some(table) = LOWERED_KEYS[2..].iter().find(|t| Some(**t) == name) else {
                    return Err(format!("{}.table is not a side-table name", sp()));
                };
                Ok((*table, index_at(&|| format!("{}.id", sp()), get(e, "id"))?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        instrs.push(Ok(Lowered { records, side }));
    }
    let replica_groups = side_table(m, "replica_groups", &["id", "groups"], |p, e| {
        array(&|| format!("{}.groups", p()), get(e, "groups"))?
            .iter()
            .enumerate()
            .map(|(j, g)| ranks(&|| format!("{}.groups[{j}]", p()), g))
            .collect::<Result<Vec<_>, _>>()
    })?;
    let source_target_pairs = side_table(m, "source_target_pairs", &["id", "pairs"], |p, e| {
        array(&|| format!("{}.pairs", p()), get(e, "pairs"))?
            .iter()
            .enumerate()
            .map(
                |(j, x)| match ranks(&|| format!("{}.pairs[{j}]", p()), x)?[..] {
                    [s, t] => Ok((s, t)),
                    _ => Err(format!("{}.pairs[{j}] is not [source, target]", p())),
                },
            )
            .collect::<Result<Vec<_>, String>>()
    })?;
    let attributes = side_table(
        m,
        "attributes",
        &["id", "kind", "direction", "peer"],
        |p, e| {
            let name = get(e, "direction").and_then(Json::as_str);
            let Some(direction) = ["send", "recv"].into_iter().find(|d| Some(*d) == name) else {
                let e = format!("{}.direction is neither \"send\" nor \"recv\"", p());
                return Err(e);
            };
            Ok((
                u32_at(&|| format!("{}.kind", p()), get(e, "kind"))?,
                direction,
                u32_at(&|| format!("{}.peer", p()), get(e, "peer"))?,
            ))
        },
    )?;
    Ok(LoweredModule {
        instrs,
        replica_groups,
        source_target_pairs,
        attributes,
    })
}

/// An error if `m` does not hold one entry per instruction asked.
pub fn check_count(m: &LoweredModule, expected: usize) -> Result<(), String> {
    match m.instrs.len() {
        n if n == expected => Ok(()),
        n => Err(format!(
            "$.instructions has {n} entries, {expected} instructions were asked"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_display_writes_them() {
        let mut edges = vec![0, 9, 10, 99, 100, 101, 999, 1000, u64::MAX, u64::MAX - 1];
        edges.extend((0..64).map(|k| 1u64 << k));
        edges.extend((1..20).map(|k| 10u64.pow(k) - 1));
        for n in edges {
            let mut o = Vec::new();
            num(&mut o, n);
            assert_eq!(String::from_utf8(o).unwrap(), n.to_string());
        }
    }

    #[test]
    fn a_module_answer_is_read_strictly() {
        let ok = r#"{"generation":"v3","instructions":[{"records":[],"side":[{"table":"attributes","id":0}]}],
            "replica_groups":[],"source_target_pairs":[],
            "attributes":[{"id":0,"kind":4,"direction":"send","peer":1}]}"#;
        let read = |text: &str| {
            let j = crate::strict_json::parse(text).unwrap();
            module_from_json(j.as_object().unwrap())
        };
        let got = read(ok).unwrap();
        assert_eq!(got.instrs[0].as_ref().unwrap().side, [("attributes", 0)]);
        assert_eq!(got.attributes, [(4, "send", 1)]);
        assert!(check_count(&got, 1).is_ok());
        assert!(check_count(&got, 2).is_err(), "instruction count");
        // What the worker writes back for a line reads as the same module.
        let back =
            serde_json::Value::Object(crate::external::protocol::tests::module_json("v3", &got))
                .to_string();
        assert_eq!(read(&back).as_ref(), Ok(&got));
        // Each error names the JSON path of the bad value.
        for (bad, why) in [
            (
                ok.replace("\"attributes\",\"id\"", "\"nope\",\"id\""),
                "$.instructions[0].side[0].table is not a side-table name",
            ),
            (
                ok.replace("\"send\"", "\"sideways\""),
                "$.attributes[0].direction is neither \"send\" nor \"recv\"",
            ),
            (
                ok.replace("{\"id\":0,\"kind\"", "{\"id\":1,\"kind\""),
                "$.attributes[0].id is 1, expected 0",
            ),
            (
                ok.replace("\"peer\":1", "\"peer\":-1"),
                "$.attributes[0].peer is not a u32",
            ),
            (
                ok.replace("\"records\":[]", "\"records\":[\"00\"]"),
                "$.instructions[0].records[0] is not 128 hex digits",
            ),
            (
                ok.replace(
                    "\"replica_groups\":[]",
                    "\"replica_groups\":[{\"id\":0,\"groups\":[[1,\"x\"]]}]",
                ),
                "$.replica_groups[0].groups[0][1] is not a u32",
            ),
            (
                ok.replace("\"generation\":\"v3\",", ""),
                "$: missing key `generation`",
            ),
        ] {
            assert_eq!(read(&bad).unwrap_err(), why, "{bad}");
        }
    }
}
