//! The byte codecs of a `lib:` worker's binary request and answer records
//! (docs/subject-protocol.md "Shared-memory worker"; internal: both ends are
//! one binary; each operation's record is in [`super::protocol`]): the
//! worker reads the library's answer once and writes it typed, which the
//! gate reads back with no JSON. Integers are `u64` LE, texts and byte runs
//! a `u32` LE length and the bytes, lists a `u32` LE count.

use crate::subjects::{FieldName, Lowered, LoweredModule, Value};

const SIDE_TABLES: [&str; 3] = ["replica_groups", "source_target_pairs", "attributes"];
const DIRECTIONS: [&str; 2] = ["send", "recv"];

pub(super) fn u64_(o: &mut Vec<u8>, n: u64) {
    o.extend_from_slice(&n.to_le_bytes());
}

pub(super) fn len(o: &mut Vec<u8>, n: usize) {
    o.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

pub(super) fn bytes(o: &mut Vec<u8>, b: &[u8]) {
    len(o, b.len());
    o.extend_from_slice(b);
}

/// Decoded fields, in order: name, then a kind byte (0 int, 1 name,
/// 2 bytes) and the value.
pub(super) fn put_fields(o: &mut Vec<u8>, fields: &[(FieldName, Value)]) {
    len(o, fields.len());
    for (name, v) in fields {
        bytes(o, name.as_bytes());
        match v {
            Value::Int(n) => {
                o.push(0);
                u64_(o, *n);
            }
            Value::Name(s) => {
                o.push(1);
                bytes(o, s.as_bytes());
            }
            Value::Bytes(b) => {
                o.push(2);
                bytes(o, b);
            }
        }
    }
}

pub(super) fn put_module(o: &mut Vec<u8>, m: &LoweredModule) {
    len(o, m.instrs.len());
    for l in &m.instrs {
        // A module read from an answer has every instruction lowered.
        let (records, side) = l
            .as_ref()
            .map_or((&[][..], &[][..]), |l| (&l.records, &l.side));
        len(o, records.len());
        for r in records {
            o.extend_from_slice(r);
        }
        len(o, side.len());
        for (t, id) in side {
            o.push(SIDE_TABLES.iter().position(|s| s == t).unwrap_or(0) as u8);
            u64_(o, *id as u64);
        }
    }
    len(o, m.replica_groups.len());
    for gs in &m.replica_groups {
        len(o, gs.len());
        for g in gs {
            len(o, g.len());
            for r in g {
                o.extend_from_slice(&r.to_le_bytes());
            }
        }
    }
    len(o, m.source_target_pairs.len());
    for ps in &m.source_target_pairs {
        len(o, ps.len());
        for (s, t) in ps {
            o.extend_from_slice(&s.to_le_bytes());
            o.extend_from_slice(&t.to_le_bytes());
        }
    }
    len(o, m.attributes.len());
    for (kind, dir, peer) in &m.attributes {
        o.extend_from_slice(&kind.to_le_bytes());
        o.push(u8::from(*dir == "recv"));
        o.extend_from_slice(&peer.to_le_bytes());
    }
}

/// A reader of one record; every read checks the bounds.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err("answer record cut short".into());
        }
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(a)
    }

    pub(super) fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    pub(super) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }

    pub(super) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }

    /// A count of items of at least `min` bytes each (bounded by what is left).
    pub(super) fn count(&mut self, min: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.0.len() {
            return Err("answer record cut short".into());
        }
        Ok(n)
    }

    pub(super) fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub(super) fn str(&mut self) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "answer text is not UTF-8".into())
    }

    pub(super) fn text(&mut self) -> Result<String, String> {
        self.str().map(str::to_string)
    }

    /// The fields [`put_fields`] wrote.
    pub(super) fn fields(&mut self) -> Result<Vec<(FieldName, Value)>, String> {
        let n = self.count(6)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let name = crate::layout::field(self.str()?).0;
            let v = match self.u8()? {
                0 => Value::Int(self.u64()?),
                1 => Value::Name(self.text()?),
                2 => Value::Bytes(self.bytes()?.to_vec()),
                k => return Err(format!("field value kind {k}")),
            };
            out.push((name, v));
        }
        Ok(out)
    }

    pub(super) fn module(&mut self) -> Result<LoweredModule, String> {
        let n = self.count(8)?;
        let mut instrs = Vec::with_capacity(n);
        for _ in 0..n {
            let records = (0..self.count(64)?)
                .map(|_| Ok(self.take(64)?.try_into().unwrap_or([0; 64])))
                .collect::<Result<Vec<_>, String>>()?;
            let side = (0..self.count(9)?)
                .map(|_| {
                    let t = SIDE_TABLES
                        .get(usize::from(self.u8()?))
                        .ok_or("side table index")?;
                    Ok((*t, usize::try_from(self.u64()?).unwrap_or(usize::MAX)))
                })
                .collect::<Result<Vec<_>, String>>()?;
            instrs.push(Ok(Lowered { records, side }));
        }
        let replica_groups = (0..self.count(4)?)
            .map(|_| {
                (0..self.count(4)?)
                    .map(|_| (0..self.count(4)?).map(|_| self.u32()).collect())
                    .collect()
            })
            .collect::<Result<Vec<_>, String>>()?;
        let source_target_pairs = (0..self.count(4)?)
            .map(|_| {
                (0..self.count(8)?)
                    .map(|_| Ok((self.u32()?, self.u32()?)))
                    .collect()
            })
            .collect::<Result<Vec<_>, String>>()?;
        let attributes = (0..self.count(9)?)
            .map(|_| {
                let kind = self.u32()?;
                let dir = DIRECTIONS[usize::from(self.u8()? != 0)];
                Ok((kind, dir, self.u32()?))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(LoweredModule {
            instrs,
            replica_groups,
            source_target_pairs,
            attributes,
        })
    }
}
