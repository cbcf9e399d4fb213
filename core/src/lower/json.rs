//! The module as JSON: records (hex) and side-tables together (SPEC §5.4).

use super::module::{Module, SideRef};
use core::fmt::Write;

fn list<T>(out: &mut String, items: &[T], mut each: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

fn side_ref(out: &mut String, r: &SideRef) {
    let (table, id) = match *r {
        SideRef::ReplicaGroups(id) => ("replica_groups", id),
        SideRef::SourceTargetPairs(id) => ("source_target_pairs", id),
        SideRef::Attribute(id) => ("attributes", id),
    };
    let _ = write!(out, "{{\"table\":\"{table}\",\"id\":{id}}}");
}

impl Module {
    /// One JSON object: `generation`, `instructions` (each `records`, lowercase
    /// hex, and `side`, the `{table, id}` entries it needs), `replica_groups`,
    /// `source_target_pairs` and `attributes` (each entry with its `id`).
    /// Deterministic: same module, same text.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "{{\"generation\":\"{}\",\"instructions\":",
            self.generation().name()
        );
        list(&mut out, self.lowered(), |out, l| {
            out.push_str("{\"records\":");
            list(out, &l.records, |out, b| {
                let _ = write!(out, "\"{}\"", b.to_hex());
            });
            out.push_str(",\"side\":");
            list(out, &l.side, side_ref);
            out.push('}');
        });
        out.push_str(",\"replica_groups\":");
        let groups: Vec<_> = self.replica_groups().iter().enumerate().collect();
        list(&mut out, &groups, |out, (id, groups)| {
            let _ = write!(out, "{{\"id\":{id},\"groups\":");
            list(out, groups, |out, g| {
                list(out, g, |out, r| {
                    let _ = write!(out, "{r}");
                });
            });
            out.push('}');
        });
        out.push_str(",\"source_target_pairs\":");
        let pairs: Vec<_> = self.source_target_pairs().iter().enumerate().collect();
        list(&mut out, &pairs, |out, (id, pairs)| {
            let _ = write!(out, "{{\"id\":{id},\"pairs\":");
            list(out, pairs, |out, (s, t)| {
                let _ = write!(out, "[{s},{t}]");
            });
            out.push('}');
        });
        out.push_str(",\"attributes\":");
        let attrs: Vec<_> = self.attributes().iter().enumerate().collect();
        list(&mut out, &attrs, |out, (id, a)| {
            let _ = write!(
                out,
                "{{\"id\":{id},\"kind\":{},\"direction\":\"{}\",\"peer\":{}}}",
                a.kind,
                a.direction.name(),
                a.peer
            );
        });
        out.push('}');
        out
    }
}
