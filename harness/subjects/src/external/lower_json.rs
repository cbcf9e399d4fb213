//! The JSON of the `lower` operation (docs/subject-protocol.md): the request's
//! `ir` is the input document of `tpbconform lower` (format:
//! `cli/lower_input.rs`), the answer the object `tpbconform lower --format
//! json` prints (`tpb_core::lower::Module::to_json`). [`ir_document`] writes
//! the one, [`module_from_json`] reads the other, strictly (a missing, extra
//! or mistyped key names its JSON path).

use crate::subjects::{Lowered, LoweredModule};
use serde_json::{json, Map, Value};
use tpb_core::insn::Sync;
use tpb_core::lower::{Generation, IrInstruction, TransferOperand};
use tpb_core::lut::DTYPE_TABLE;

/// A dtype as the input document names it: its SPEC §6.4 name, or the bare
/// ordinal when it is past the table (so `dtype_out_of_range` can be asked).
fn dtype(ordinal: u32) -> Value {
    usize::try_from(ordinal)
        .ok()
        .and_then(|i| DTYPE_TABLE.get(i))
        .map_or_else(|| Value::from(ordinal), |(name, _, _)| Value::from(*name))
}

fn sync(s: &Sync) -> Value {
    json!({
        "wait_mode": s.wait_mode.0,
        "wait_idx": s.wait_idx,
        "update_mode": s.update_mode.0,
        "update_idx": s.update_idx,
        "semaphore_value": s.semaphore_value,
    })
}

fn tensor(t: &TransferOperand) -> Value {
    json!({
        "tensor_id": t.tensor_id,
        "tensor_base": t.tensor_base,
        "num_elements_per_partition": t.num_elements_per_partition,
    })
}

fn instruction(insn: &IrInstruction) -> Value {
    match insn {
        IrInstruction::Collective(c) => {
            let pairs: Vec<[u32; 2]> = c.source_target_pairs.iter().map(|p| [p.0, p.1]).collect();
            json!({
                "op": "collective",
                "kind": c.kind.name(),
                "cce_op": c.cce_op.name(),
                "dtype": dtype(c.dtype),
                "src": crate::subjects::hex(&c.src),
                "src2": c.src2.as_ref().map(|s| crate::subjects::hex(s)),
                "replica_groups": c.replica_groups,
                "source_target_pairs": pairs,
                "channel_id": c.channel_id,
                "cc_dim": c.cc_dim,
                "sync": sync(&c.sync),
            })
        }
        IrInstruction::Transfer(t) => json!({
            "op": t.direction.name(),
            "tensor_id": t.operand.tensor_id,
            "tensor_base": t.operand.tensor_base,
            "num_elements_per_partition": t.operand.num_elements_per_partition,
            "peer": t.peer,
            "sync": sync(&t.sync),
        }),
        IrInstruction::LocalSendRecv(l) => json!({
            "op": "local_send_recv",
            "kind": l.kind.name(),
            "send": tensor(&l.send),
            "recv": tensor(&l.recv),
            "peer": l.peer,
            "src_dtype": dtype(l.src_dtype),
            "dst_dtype": dtype(l.dst_dtype),
            "src_ap": crate::subjects::hex(&l.src_ap),
            "dst_ap": crate::subjects::hex(&l.dst_ap),
            "peer_partition": l.peer_partition,
            "bytes_per_partition": l.bytes_per_partition,
            "cores_per_lnc": l.cores_per_lnc,
            "sync": sync(&l.sync),
        }),
    }
}

/// The `tpbconform lower` input document of `insns` under `gen`.
pub fn ir_document(gen: Generation, insns: &[IrInstruction]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("generation".into(), Value::from(gen.name()));
    m.insert(
        "instructions".into(),
        Value::Array(insns.iter().map(instruction).collect()),
    );
    m
}

fn keys(path: &str, m: &Map<String, Value>, want: &[&str]) -> Result<(), String> {
    if let Some(k) = m.keys().find(|k| !want.contains(&k.as_str())) {
        return Err(format!("{path}: unexpected key `{k}`"));
    }
    if let Some(k) = want.iter().find(|k| !m.contains_key(**k)) {
        return Err(format!("{path}: missing key `{k}`"));
    }
    Ok(())
}

fn array<'a>(path: &str, v: Option<&'a Value>) -> Result<&'a Vec<Value>, String> {
    v.and_then(Value::as_array)
        .ok_or_else(|| format!("{path} is not an array"))
}

fn object<'a>(path: &str, v: &'a Value) -> Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{path} is not an object"))
}

fn u32_at(path: &str, v: Option<&Value>) -> Result<u32, String> {
    v.and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| format!("{path} is not a u32"))
}

fn index_at(path: &str, v: Option<&Value>) -> Result<usize, String> {
    v.and_then(Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{path} is not an index"))
}

/// Each entry of a side-table must carry its position as `id`.
/// The side-table `name` of a module answer: an array of objects with exactly the keys
/// `keys_of`, the k-th of `id` k; `entry` reads one (its JSON path, the object).
fn side_table<T>(
    m: &Map<String, Value>,
    name: &str,
    keys_of: &[&str],
    entry: impl Fn(&str, &Map<String, Value>) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    array(&format!("$.{name}"), m.get(name))?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let p = format!("$.{name}[{i}]");
            let e = object(&p, v)?;
            keys(&p, e, keys_of)?;
            check_id(&p, e, i)?;
            entry(&p, e)
        })
        .collect()
}

fn check_id(path: &str, e: &Map<String, Value>, i: usize) -> Result<(), String> {
    match index_at(&format!("{path}.id"), e.get("id"))? {
        id if id == i => Ok(()),
        id => Err(format!("{path}.id is {id}, expected {i}")),
    }
}

fn ranks(path: &str, v: &Value) -> Result<Vec<u32>, String> {
    array(path, Some(v))?
        .iter()
        .enumerate()
        .map(|(j, r)| u32_at(&format!("{path}[{j}]"), Some(r)))
        .collect()
}

/// Reads a `lower` success answer (the object without its `id`) into the
/// harness's typed module. `expected` is the number of instructions asked.
pub fn module_from_json(m: &Map<String, Value>, expected: usize) -> Result<LoweredModule, String> {
    keys("$", m, &super::protocol::LOWERED_KEYS)?;
    let list = array("$.instructions", m.get("instructions"))?;
    if list.len() != expected {
        return Err(format!(
            "$.instructions has {} entries, {expected} instructions were asked",
            list.len()
        ));
    }
    let mut instrs = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let p = format!("$.instructions[{i}]");
        let o = object(&p, v)?;
        keys(&p, o, &["records", "side"])?;
        let records = array(&format!("{p}.records"), o.get("records"))?
            .iter()
            .enumerate()
            .map(|(j, r)| {
                r.as_str()
                    .and_then(super::protocol::parse_bundle_hex)
                    .ok_or_else(|| format!("{p}.records[{j}] is not 128 hex digits"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let side = array(&format!("{p}.side"), o.get("side"))?
            .iter()
            .enumerate()
            .map(|(j, r)| {
                let sp = format!("{p}.side[{j}]");
                let e = object(&sp, r)?;
                keys(&sp, e, &["table", "id"])?;
                let table = match e.get("table").and_then(Value::as_str) {
                    Some("replica_groups") => "replica_groups",
                    Some("source_target_pairs") => "source_target_pairs",
                    Some("attributes") => "attributes",
                    _ => return Err(format!("{sp}.table is not a side-table name")),
                };
                Ok((table, index_at(&format!("{sp}.id"), e.get("id"))?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        instrs.push(Ok(Lowered { records, side }));
    }
    let replica_groups = side_table(m, "replica_groups", &["id", "groups"], |p, e| {
        array(&format!("{p}.groups"), e.get("groups"))?
            .iter()
            .enumerate()
            .map(|(j, g)| ranks(&format!("{p}.groups[{j}]"), g))
            .collect::<Result<Vec<_>, _>>()
    })?;
    let source_target_pairs = side_table(m, "source_target_pairs", &["id", "pairs"], |p, e| {
        array(&format!("{p}.pairs"), e.get("pairs"))?
            .iter()
            .enumerate()
            .map(|(j, x)| match ranks(&format!("{p}.pairs[{j}]"), x)?[..] {
                [s, t] => Ok((s, t)),
                _ => Err(format!("{p}.pairs[{j}] is not [source, target]")),
            })
            .collect::<Result<Vec<_>, String>>()
    })?;
    let attributes = side_table(
        m,
        "attributes",
        &["id", "kind", "direction", "peer"],
        |p, e| {
            let direction = match e.get("direction").and_then(Value::as_str) {
                Some("send") => "send",
                Some("recv") => "recv",
                _ => return Err(format!("{p}.direction is neither \"send\" nor \"recv\"")),
            };
            Ok((
                u32_at(&format!("{p}.kind"), e.get("kind"))?,
                direction,
                u32_at(&format!("{p}.peer"), e.get("peer"))?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_answer_is_read_strictly() {
        let ok = r#"{"generation":"v3","instructions":[{"records":[],"side":[{"table":"attributes","id":0}]}],
            "replica_groups":[],"source_target_pairs":[],
            "attributes":[{"id":0,"kind":4,"direction":"send","peer":1}]}"#;
        let m: Map<String, Value> = serde_json::from_str(ok).unwrap();
        let got = module_from_json(&m, 1).unwrap();
        assert_eq!(got.instrs[0].as_ref().unwrap().side, [("attributes", 0)]);
        assert_eq!(got.attributes, [(4, "send", 1)]);
        assert!(module_from_json(&m, 2).is_err(), "instruction count");
        for (bad, why) in [
            (
                ok.replace("\"attributes\",\"id\"", "\"nope\",\"id\""),
                "side table",
            ),
            (ok.replace("\"send\"", "\"sideways\""), "direction"),
            (ok.replace("{\"id\":0,\"kind\"", "{\"id\":1,\"kind\""), "id"),
            (ok.replace("\"generation\":\"v3\",", ""), "missing key"),
        ] {
            let m: Map<String, Value> = serde_json::from_str(&bad).unwrap();
            assert!(module_from_json(&m, 1).is_err(), "{why}");
        }
    }
}
