//! The binary request and answer records of a `lib:` worker
//! (docs/subject-protocol.md "Shared-memory worker"; internal: both ends are
//! one binary): a request is a kind byte and its input as is; the worker
//! reads the library's answer once ([`super::protocol::answer_of`] for
//! `tpb_decode` / `tpb_lower` JSON) and writes the typed [`Answer`], which
//! the gate reads back with no JSON. Integers are `u64` LE, texts and byte
//! runs a `u32` LE length and the bytes, lists a `u32` LE count.

use super::protocol::{Answer, Request};
use crate::subjects::{FieldName, Lowered, LoweredModule, LutTable, Value};

const REQ_HEADER: u8 = b'H';
const REQ_PAYLOAD: u8 = b'P';
const REQ_DECODE: u8 = b'D';
const REQ_ENCODE: u8 = b'E';
const REQ_LUT: u8 = b'T';
const REQ_STREAM: u8 = b'S';
const REQ_LOWER: u8 = b'L';

/// The request record of `r` in two parts, written one after the other
/// (a stream or an IR document is not copied to make it).
pub fn request_parts(r: &Request) -> (Vec<u8>, &[u8]) {
    match r {
        Request::ValidateHeader(b) => (vec![REQ_HEADER], b),
        Request::ValidatePayload(b) => (vec![REQ_PAYLOAD], b),
        Request::Decode(b) => (vec![REQ_DECODE], b),
        Request::Encode { opcode, fields } => {
            let mut o = vec![REQ_ENCODE, *opcode];
            put_fields(&mut o, fields);
            (o, &[])
        }
        Request::Lut { table, input } => {
            let t = LutTable::ALL.iter().position(|x| x == table).unwrap_or(0) as u8;
            let mut o = vec![REQ_LUT, t];
            o.extend_from_slice(&input.to_le_bytes());
            (o, &[])
        }
        Request::ValidateStream(b) => (vec![REQ_STREAM], b),
        Request::Lower(ir) => (vec![REQ_LOWER], ir.as_bytes()),
    }
}

/// The request a record of [`request_parts`] holds.
pub fn get_request(b: &[u8]) -> Result<Request, String> {
    let bundle = |b: &[u8]| <[u8; 64]>::try_from(b).map_err(|_| "not 64 bytes".to_string());
    let Some((&kind, rest)) = b.split_first() else {
        return Err("empty".into());
    };
    Ok(match kind {
        REQ_HEADER => Request::ValidateHeader(bundle(rest)?),
        REQ_PAYLOAD => Request::ValidatePayload(bundle(rest)?),
        REQ_DECODE => Request::Decode(bundle(rest)?),
        REQ_ENCODE => {
            let (&opcode, fields) = rest.split_first().ok_or("no opcode")?;
            let mut r = Reader(fields);
            let fields = r.fields()?;
            if !r.0.is_empty() {
                return Err("bytes past the fields".into());
            }
            Request::Encode { opcode, fields }
        }
        REQ_LUT => match rest {
            [t, a, b, c, d] => Request::Lut {
                table: *LutTable::ALL
                    .get(usize::from(*t))
                    .ok_or("LUT table index")?,
                input: u32::from_le_bytes([*a, *b, *c, *d]),
            },
            _ => return Err("not a table and an ordinal".into()),
        },
        REQ_STREAM => Request::ValidateStream(rest.to_vec()),
        REQ_LOWER => Request::Lower(
            String::from_utf8(rest.to_vec()).map_err(|_| "IR not UTF-8".to_string())?,
        ),
        k => return Err(format!("request kind {k}")),
    })
}

const UNSUPPORTED: u8 = 0;
/// The library answered `TPB_ERROR` or broke the ABI: the text says how.
const ERROR: u8 = 1;
const VERDICT: u8 = 2;
const VALID: u8 = 3;
const DECODED: u8 = 4;
const DECODE_ERROR: u8 = 5;
const ENCODED: u8 = 6;
const REFUSED: u8 = 7;
const WIRE: u8 = 8;
const STREAM_OK: u8 = 9;
const STREAM_ERROR: u8 = 10;
const LOWERED: u8 = 11;
const LOWER_REJECTED: u8 = 12;

const SIDE_TABLES: [&str; 3] = ["replica_groups", "source_target_pairs", "attributes"];
const DIRECTIONS: [&str; 2] = ["send", "recv"];

fn u64_(o: &mut Vec<u8>, n: u64) {
    o.extend_from_slice(&n.to_le_bytes());
}

fn len(o: &mut Vec<u8>, n: usize) {
    o.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn bytes(o: &mut Vec<u8>, b: &[u8]) {
    len(o, b.len());
    o.extend_from_slice(b);
}

/// Decoded fields, in order: name, then a kind byte (0 int, 1 name,
/// 2 bytes) and the value.
fn put_fields(o: &mut Vec<u8>, fields: &[(FieldName, Value)]) {
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

/// `a` (or the library's error text) as a record.
pub fn put_answer(a: &Result<Answer, String>) -> Vec<u8> {
    let mut o = Vec::with_capacity(80);
    let o_ = &mut o;
    match a {
        Err(e) => {
            o_.push(ERROR);
            bytes(o_, e.as_bytes());
        }
        Ok(Answer::Unsupported) => o_.push(UNSUPPORTED),
        Ok(Answer::Verdict(None)) => o_.push(VALID),
        Ok(Answer::Verdict(Some(p))) => {
            o_.push(VERDICT);
            bytes(o_, p.as_bytes());
        }
        Ok(Answer::Decoded { opcode, fields }) => {
            o_.extend_from_slice(&[DECODED, *opcode]);
            put_fields(o_, fields);
        }
        Ok(Answer::DecodeError { field, offset }) => {
            o_.push(DECODE_ERROR);
            bytes(o_, field.as_bytes());
            u64_(o_, *offset);
        }
        Ok(Answer::Encoded(b)) => {
            o_.push(ENCODED);
            o_.extend_from_slice(b);
        }
        Ok(Answer::Refused(why)) => {
            o_.push(REFUSED);
            bytes(o_, why.as_bytes());
        }
        Ok(Answer::Wire(w)) => {
            o_.push(WIRE);
            u64_(o_, *w);
        }
        Ok(Answer::Stream(None)) => o_.push(STREAM_OK),
        Ok(Answer::Stream(Some((e, index)))) => {
            o_.push(STREAM_ERROR);
            bytes(o_, e.as_bytes());
            u64_(o_, *index);
        }
        Ok(Answer::Lowered { generation, module }) => {
            o_.push(LOWERED);
            bytes(o_, generation.as_bytes());
            put_module(o_, module);
        }
        Ok(Answer::LowerRejected { error, instruction }) => {
            o_.push(LOWER_REJECTED);
            bytes(o_, error.as_bytes());
            u64_(o_, *instruction);
        }
    }
    o
}

fn put_module(o: &mut Vec<u8>, m: &LoweredModule) {
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
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.0.len() {
            return Err("answer record cut short".into());
        }
        let (a, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(a)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// A count of items of at least `min` bytes each (bounded by what is left).
    fn count(&mut self, min: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.0.len() {
            return Err("answer record cut short".into());
        }
        Ok(n)
    }

    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    fn text(&mut self) -> Result<String, String> {
        std::str::from_utf8(self.bytes()?)
            .map(str::to_string)
            .map_err(|_| "answer text is not UTF-8".into())
    }

    /// The fields [`put_fields`] wrote.
    fn fields(&mut self) -> Result<Vec<(FieldName, Value)>, String> {
        let n = self.count(6)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let name = self.text()?;
            let v = match self.u8()? {
                0 => Value::Int(self.u64()?),
                1 => Value::Name(self.text()?),
                2 => Value::Bytes(self.bytes()?.to_vec()),
                k => return Err(format!("field value kind {k}")),
            };
            out.push((name.into(), v));
        }
        Ok(out)
    }

    fn module(&mut self) -> Result<LoweredModule, String> {
        let n = self.count(8)?;
        let mut instrs = Vec::with_capacity(n);
        for _ in 0..n {
            let records = (0..self.count(64)?)
                .map(|_| {
                    let mut r = [0u8; 64];
                    r.copy_from_slice(self.take(64)?);
                    Ok(r)
                })
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

/// The answer record `b`: `Ok(Err(text))` is the library's error; `Err` a
/// record that is not one (the worker's fault). Whether it answers its
/// request's operation is the reader's check ([`Answer::answers`]).
pub fn get_answer(b: &[u8]) -> Result<Result<Answer, String>, String> {
    let mut r = Reader(b);
    let a = match r.u8()? {
        ERROR => return Ok(Err(r.text()?)),
        UNSUPPORTED => Answer::Unsupported,
        VALID => Answer::Verdict(None),
        VERDICT => Answer::Verdict(Some(r.text()?)),
        DECODED => Answer::Decoded {
            opcode: r.u8()?,
            fields: r.fields()?,
        },
        DECODE_ERROR => Answer::DecodeError {
            field: r.text()?,
            offset: r.u64()?,
        },
        ENCODED => {
            let mut b = [0u8; 64];
            b.copy_from_slice(r.take(64)?);
            Answer::Encoded(b)
        }
        REFUSED => Answer::Refused(r.text()?),
        WIRE => Answer::Wire(r.u64()?),
        STREAM_OK => Answer::Stream(None),
        STREAM_ERROR => Answer::Stream(Some((r.text()?, r.u64()?))),
        LOWERED => Answer::Lowered {
            generation: r.text()?,
            module: r.module()?,
        },
        LOWER_REJECTED => Answer::LowerRejected {
            error: r.text()?,
            instruction: r.u64()?,
        },
        t => return Err(format!("answer record tag {t}")),
    };
    if !r.0.is_empty() {
        return Err("answer record has bytes past its end".into());
    }
    Ok(Ok(a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::protocol::Op;

    #[test]
    fn every_answer_reads_back_as_written() {
        let module = LoweredModule {
            instrs: vec![Ok(Lowered {
                records: vec![[7; 64]],
                side: vec![("attributes", 0), ("replica_groups", 3)],
            })],
            replica_groups: vec![vec![vec![0, 1], vec![]]],
            source_target_pairs: vec![vec![(0, 1), (1, 0)]],
            attributes: vec![(4, "recv", 1)],
        };
        let fields = vec![
            ("opcode".into(), Value::Int(0xD9)),
            ("op".into(), Value::Name("add".into())),
            ("src".into(), Value::Bytes(vec![1, 2])),
        ];
        for (op, a) in [
            (Op::Decode, Ok(Answer::Unsupported)),
            (Op::Lower, Err("bad".to_string())),
            (Op::ValidateHeader, Ok(Answer::Verdict(None))),
            (Op::ValidatePayload, Ok(Answer::Verdict(Some("x".into())))),
            (Op::Decode, Ok(Answer::Decoded { opcode: 9, fields })),
            (
                Op::Decode,
                Ok(Answer::DecodeError {
                    field: "f".into(),
                    offset: 3,
                }),
            ),
            (Op::Encode, Ok(Answer::Encoded([5; 64]))),
            (Op::Encode, Ok(Answer::Refused("r".into()))),
            (Op::Lut, Ok(Answer::Wire(300))),
            (Op::ValidateStream, Ok(Answer::Stream(None))),
            (
                Op::ValidateStream,
                Ok(Answer::Stream(Some(("e".into(), 2)))),
            ),
            (
                Op::Lower,
                Ok(Answer::Lowered {
                    generation: "v3".into(),
                    module,
                }),
            ),
            (
                Op::Lower,
                Ok(Answer::LowerRejected {
                    error: "e".into(),
                    instruction: 1,
                }),
            ),
        ] {
            let rec = put_answer(&a);
            assert_eq!(get_answer(&rec), Ok(a.clone()), "{a:?}");
            assert!(a.as_ref().map_or(true, |a| a.answers(op)), "{a:?}");
            // Every cut is refused, never read as another answer.
            for n in 0..rec.len() {
                assert!(get_answer(&rec[..n]).is_err(), "{a:?} cut at {n}");
            }
        }
        assert!(!Answer::Encoded([0; 64]).answers(Op::Decode));
        // Requests of every operation read back as written.
        let b = [3u8; 64];
        for r in [
            Request::ValidateHeader(b),
            Request::ValidatePayload(b),
            Request::Decode(b),
            Request::Encode {
                opcode: 0xD9,
                fields: vec![("src".into(), Value::Bytes(vec![1]))],
            },
            Request::Lut {
                table: crate::subjects::LutTable::Dge,
                input: 70_000,
            },
            Request::ValidateStream(vec![0x85, 1, 2]),
            Request::Lower("{}".into()),
        ] {
            let (head, tail) = request_parts(&r);
            assert_eq!(get_request(&[head, tail.to_vec()].concat()), Ok(r));
        }
        assert!(get_request(&[REQ_DECODE, 0]).is_err());
        // Every stream the gate reads (a corpus file) fits one hand-off.
        let big = Request::ValidateStream(vec![0x86; super::super::protocol::MAX_STREAM]);
        assert!(super::super::shm::request_len(&big) + 8 <= super::super::shm::REQ);
    }
}
