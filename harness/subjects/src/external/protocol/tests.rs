//! Unit tests of the `tpb-subject/1` line protocol (docs/subject-protocol.md).

use super::*;
use crate::fields_json::fields_json;
use crate::subjects::LoweredModule;
use serde_json::{json, Map, Value};

// The lines below are the issue's pinned examples of tpb-subject/1,
// written out by hand (not produced by this module).
const HEADER_HEX: &str = "85100000000000000000000003000102000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn request_lines_are_the_pinned_shapes() {
    let b = parse_bundle_hex(HEADER_HEX).unwrap();
    assert_eq!(
        Request::Validate(Validator::Header, b).to_line(1),
        format!(r#"{{"id":1,"op":"validate_header","hex":"{HEADER_HEX}"}}"#)
    );
    assert_eq!(
        Request::Lut {
            table: LutTable::AluOp,
            input: 4
        }
        .to_line(4),
        r#"{"id":4,"op":"lut","table":"alu_op","input":4}"#
    );
    assert_eq!(
        hello_line("v2"),
        r#"{"op":"hello","protocol":1,"arch":"v2"}"#
    );
}

#[test]
fn answers_parse_strictly() {
    let v = Capability::ValidateHeader;
    assert_eq!(
        parse_answer(r#"{"id":1,"failed":null}"#, 1, v),
        Ok(Answer::Verdict(None))
    );
    assert_eq!(
        parse_answer(
            r#"{"id":1,"failed":"custom_op_header_reserved_zero"}"#,
            1,
            v
        ),
        Ok(Answer::Verdict(Some(
            "custom_op_header_reserved_zero".into()
        )))
    );
    assert_eq!(
        parse_answer(r#"{"id":5,"unsupported":true}"#, 5, Capability::Encode),
        Ok(Answer::Unsupported)
    );
    assert_eq!(
        parse_answer(
            r#"{"id":2,"error":{"field":"kind","offset":14}}"#,
            2,
            Capability::Decode
        ),
        Ok(Answer::DecodeError {
            field: "kind".into(),
            offset: 14
        })
    );
    assert_eq!(
        parse_answer(r#"{"id":4,"wire":9}"#, 4, Capability::Lut(LutTable::AluOp)),
        Ok(Answer::Wire(9))
    );
    assert_eq!(
        parse_answer(
            r#"{"id":4,"refused":"out_of_range"}"#,
            4,
            Capability::Lut(LutTable::AluOp)
        ),
        Ok(Answer::Refused("out_of_range".into()))
    );
    for (bad, why) in [
        (r#"{"id":2,"failed":null}"#, "wrong id"),
        (r#"{"failed":null}"#, "missing id"),
        (r#"{"id":1}"#, "missing failed"),
        (r#"{"id":1,"failed":null,"x":1}"#, "extra key"),
        (r#"{"id":1,"failed":3}"#, "mistyped"),
        (r#"{"id":1,"failed":""}"#, "empty name"),
        (r#"{"id":1,"unsupported":false}"#, "unsupported false"),
        (r#"{"id":1,"failed":null"#, "truncated"),
        ("garbage", "not JSON"),
        ("[1]", "not an object"),
    ] {
        assert!(parse_answer(bad, 1, v).is_err(), "{why}: {bad}");
    }
    assert!(parse_answer(r#"{"id":3,"hex":"00"}"#, 3, Capability::Encode).is_err());
    assert!(parse_answer(
        r#"{"id":2,"opcode":"D9","fields":{}}"#,
        2,
        Capability::Decode
    )
    .is_err());
    assert!(parse_answer(r#"{"id":4,"wire":-1}"#, 4, Capability::Lut(LutTable::AluOp)).is_err());
}

#[test]
fn hello_parses_strictly() {
    let h =
        parse_hello(r#"{"protocol":1,"name":"x","ops":["validate_payload","validate_header"]}"#)
            .unwrap();
    assert_eq!(
        h.ops,
        Capabilities::of(&[Capability::ValidateHeader, Capability::ValidatePayload])
    );
    for bad in [
        r#"{"protocol":2,"name":"x","ops":[]}"#,
        r#"{"protocol":1,"name":"x","ops":["fly"]}"#,
        r#"{"protocol":1,"name":"","ops":[]}"#,
        r#"{"protocol":1,"ops":[]}"#,
        r#"{"protocol":1,"name":"x","ops":[],"id":0}"#,
    ] {
        assert!(parse_hello(bad).is_err(), "{bad}");
    }
}

#[test]
fn hello_tables_are_declared_one_by_one() {
    let h =
        parse_hello(r#"{"protocol":1,"name":"x","ops":["lut"],"tables":["update_mode","cce_op"]}"#)
            .unwrap();
    assert_eq!(h.lut_tables(), [LutTable::CceOp, LutTable::UpdateMode]);
    // Absent: every SPEC §6 table, cce_op and update_mode included.
    let all = parse_hello(r#"{"protocol":1,"name":"x","ops":["lut"]}"#).unwrap();
    assert_eq!(all.lut_tables().len(), 8);
    assert!(all.lut_tables().contains(&LutTable::CceOp));
    assert!(all.lut_tables().contains(&LutTable::UpdateMode));
    let none = parse_hello(r#"{"protocol":1,"name":"x","ops":[]}"#).unwrap();
    assert!(none.lut_tables().is_empty());
    for bad in [
        r#"{"protocol":1,"name":"x","ops":["lut"],"tables":["alu"]}"#,
        r#"{"protocol":1,"name":"x","ops":["lut"],"tables":"alu_op"}"#,
        r#"{"protocol":1,"name":"x","ops":[],"tables":["alu_op"]}"#,
    ] {
        assert!(parse_hello(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_hello(&h.to_string()), Ok(h));
    // `lut` with no table is kept as said.
    let empty = r#"{"protocol":1,"name":"x","ops":["decode","lut"],"tables":[]}"#;
    let h = parse_hello(empty).unwrap();
    assert!(h.lut_tables().is_empty());
    assert_eq!(h.to_string().replace(' ', ""), empty.replace(' ', ""));
}

#[test]
fn stream_and_lower_answers_parse_strictly() {
    let s = Capability::ValidateStream;
    assert_eq!(
        parse_answer(r#"{"id":1,"valid":true}"#, 1, s),
        Ok(Answer::Stream(None))
    );
    assert_eq!(
        parse_answer(r#"{"id":1,"stream_error":"short_group","index":3}"#, 1, s),
        Ok(Answer::Stream(Some(("short_group".into(), 3))))
    );
    for bad in [
        r#"{"id":1,"valid":false}"#,
        r#"{"id":1,"stream_error":"short_group"}"#,
        r#"{"id":1,"stream_error":"","index":0}"#,
        r#"{"id":1,"stream_error":"x","index":-1}"#,
        r#"{"id":1,"valid":true,"index":0}"#,
    ] {
        assert!(parse_answer(bad, 1, s).is_err(), "{bad}");
    }
    let l = Capability::Lower;
    assert_eq!(
        parse_answer(r#"{"id":2,"error":"duplicate_rank","instruction":1}"#, 2, l),
        Ok(Answer::LowerRejected {
            error: "duplicate_rank".into(),
            instruction: 1
        })
    );
    let ok = r#"{"id":2,"generation":"v3","instructions":[],"replica_groups":[],"source_target_pairs":[],"attributes":[]}"#;
    assert!(matches!(parse_answer(ok, 2, l),
        Ok(Answer::Lowered { generation, module }) if generation == "v3" && module.instrs.is_empty()));
    assert!(parse_answer(&ok.replace(",\"attributes\":[]", ""), 2, l).is_err());
    assert!(parse_answer(r#"{"id":2,"error":"x"}"#, 2, l).is_err());
    // Requests: the pinned shapes (a `lib:` worker reads them as binary
    // records instead: `every_answer_reads_back_as_written`).
    let r = Request::ValidateStream(vec![0x85, 0x10].into());
    assert_eq!(
        r.to_line(3),
        r#"{"id":3,"op":"validate_stream","hex":"8510"}"#
    );
    let r = Request::Lower(r#"{"generation":"v3","instructions":[]}"#.to_string().into());
    assert_eq!(
        r.to_line(4),
        r#"{"id":4,"op":"lower","ir":{"generation":"v3","instructions":[]}}"#
    );
    // Every stream the gate reads (a corpus file) can be sent.
    assert_eq!(MAX_STREAM as u64, crate::input::MAX_INPUT);
}

/// The answer line (without the newline) for request `id`, as a `cmd:`
/// subject writes it: `"id"` first, then [`answer_object`].
fn answer_line(id: u64, a: &Answer) -> String {
    let mut m = Map::new();
    m.insert("id".into(), Value::from(id));
    m.extend(answer_object(a));
    Value::Object(m).to_string()
}

#[test]
fn answer_objects_read_back() {
    let b = parse_bundle_hex(HEADER_HEX).unwrap();
    for a in [
        Answer::Verdict(None),
        Answer::Verdict(Some("inst_word_len".into())),
        Answer::DecodeError {
            field: "reserved".into(),
            offset: 3,
        },
        Answer::Encoded(b),
        Answer::Wire(5),
        Answer::Refused("no".into()),
        Answer::Unsupported,
    ] {
        let op = match a {
            Answer::Verdict(_) => Capability::ValidateHeader,
            Answer::DecodeError { .. } => Capability::Decode,
            Answer::Encoded(_) | Answer::Refused(_) => Capability::Encode,
            _ => Capability::Lut(LutTable::AluOp),
        };
        assert_eq!(parse_answer(&answer_line(7, &a), 7, op), Ok(a));
    }
}

/// The worker's binary records (request kinds and answer tags).
#[test]
fn every_answer_reads_back_as_written() {
    let module = LoweredModule {
        instrs: vec![Ok(crate::subjects::Lowered {
            records: vec![[7; 64]],
            side: vec![("attributes", 0), ("replica_groups", 3)],
        })],
        replica_groups: vec![vec![vec![0, 1], vec![]]],
        source_target_pairs: vec![vec![(0, 1), (1, 0)]],
        attributes: vec![(4, "recv", 1)],
    };
    let fields = vec![
        ("opcode".into(), crate::subjects::Value::Int(0xD9)),
        ("op".into(), crate::subjects::Value::Name("add".into())),
        ("src".into(), crate::subjects::Value::Bytes(vec![1, 2])),
    ];
    for (op, a) in [
        (Capability::Decode, Ok(Answer::Unsupported)),
        (Capability::Lower, Err("bad".to_string())),
        (Capability::ValidateHeader, Ok(Answer::Verdict(None))),
        (
            Capability::ValidatePayload,
            Ok(Answer::Verdict(Some("x".into()))),
        ),
        (
            Capability::Decode,
            Ok(Answer::Decoded { opcode: 9, fields }),
        ),
        (
            Capability::Decode,
            Ok(Answer::DecodeError {
                field: "f".into(),
                offset: 3,
            }),
        ),
        (Capability::Encode, Ok(Answer::Encoded([5; 64]))),
        (Capability::Encode, Ok(Answer::Refused("r".into()))),
        (Capability::Lut(LutTable::AluOp), Ok(Answer::Wire(300))),
        (Capability::ValidateStream, Ok(Answer::Stream(None))),
        (
            Capability::ValidateStream,
            Ok(Answer::Stream(Some(("e".into(), 2)))),
        ),
        (
            Capability::Lower,
            Ok(Answer::Lowered {
                generation: "v3".into(),
                module,
            }),
        ),
        (
            Capability::Lower,
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
    assert!(!Answer::Encoded([0; 64]).answers(Capability::Decode));
    // Requests of every operation read back as written.
    let b = [3u8; 64];
    for r in [
        Request::Validate(Validator::Header, b),
        Request::Validate(Validator::Payload, b),
        Request::Decode(b),
        Request::Encode {
            opcode: 0xD9,
            fields: vec![("src".into(), crate::subjects::Value::Bytes(vec![1]))],
        },
        Request::Lut {
            table: LutTable::Dge,
            input: 70_000,
        },
        Request::ValidateStream(vec![0x85, 1, 2].into()),
        Request::Lower("{}".to_string().into()),
    ] {
        let (head, tail) = request_parts(&r);
        assert_eq!(get_request(&[head, tail.to_vec()].concat()), Ok(r));
    }
    assert!(get_request(&[REQ_DECODE, 0]).is_err());
    // A stream or IR document is read where it lies; an IR document that
    // is not UTF-8 is refused by both readings.
    assert!(matches!(
        in_place(&[REQ_STREAM, 1, 2]),
        Ok(Some(InPlace::Stream([1, 2])))
    ));
    assert!(matches!(
        in_place(&[REQ_LOWER, b'{', b'}']),
        Ok(Some(InPlace::Lower("{}")))
    ));
    assert!(matches!(in_place(&[REQ_DECODE, 0]), Ok(None)));
    assert_eq!(
        in_place(&[REQ_LOWER, 0xFF]).err().as_deref(),
        Some("IR not UTF-8")
    );
    assert_eq!(
        get_request(&[REQ_LOWER, 0xFF]),
        Err("IR not UTF-8".to_string())
    );
    // Every stream the gate reads (a corpus file) fits one hand-off.
    let big = Request::ValidateStream(vec![0x86; MAX_STREAM].into());
    assert!(super::super::shm::request_len(&big) + 8 <= super::super::shm::REQ);
}

#[test]
fn a_stored_request_is_found_for_its_question_only() {
    let gen = Generation::V3;
    let doc = r#"{"generation":"v3","instructions":[{"op":"send","tensor_id":4096,"tensor_base":0,"num_elements_per_partition":64,"peer":1}]}"#;
    let (_, insns) = crate::lower_input::parse_program(&crate::strict_json::parse(doc).unwrap())
        .expect("a valid program");
    let other = crate::lower_input::parse_program(
        &crate::strict_json::parse(&doc.replace("\"peer\":1", "\"peer\":2")).unwrap(),
    )
    .expect("a valid program")
    .1;
    let b = parse_bundle_hex(HEADER_HEX).unwrap();
    let mut b2 = b;
    b2[63] ^= 1;
    let fields: Vec<(FieldName, crate::subjects::Value)> =
        vec![("opcode".into(), crate::subjects::Value::Int(0x85))];
    let stream = [b, b2].concat();
    let questions = [
        Question::Decode(&b),
        Question::Encode(0x85, &fields),
        Question::ValidateStream(&stream),
        Question::LowerModule(&insns),
    ];
    let others = [
        Question::Decode(&b2),
        Question::Encode(0x86, &fields),
        Question::ValidateStream(&stream[..64]),
        Question::LowerModule(&other),
    ];
    for (i, q) in questions.iter().enumerate() {
        let r = request_of(*q, gen).expect("sent");
        for (j, p) in questions.iter().enumerate() {
            assert_eq!(asks(*p, &r, gen), i == j, "{q:?} asked as {p:?}");
        }
        assert!(!asks(others[i], &r, gen), "{:?} is not {q:?}", others[i]);
    }
    // A batch's own stream, shared with its request, is found as itself;
    // its first bundle alone (same address, shorter) is not it.
    let shared = std::sync::Arc::new(stream.clone());
    let r = stream_request(shared.clone()).expect("sent");
    assert!(asks(Question::ValidateStream(&shared), &r, gen));
    assert!(!asks(Question::ValidateStream(&shared[..64]), &r, gen));
    assert!(!asks(Question::ValidateStream(&stream[..64]), &r, gen));
    // A batch's own module likewise; an equal copy by its document.
    let module = std::sync::Arc::new(insns.clone());
    let r = lower_request(module.clone(), gen);
    assert_eq!(r, request_of(Question::LowerModule(&insns), gen).unwrap());
    assert!(asks(Question::LowerModule(&module), &r, gen));
    assert!(asks(Question::LowerModule(&insns), &r, gen));
    assert!(!asks(Question::LowerModule(&other), &r, gen));
    assert!(!asks(Question::LowerModule(&module[..0]), &r, gen));
    // By address first: a request holding the module is found through it
    // even when its text is not that module's document (never so in the
    // harness; it shows the address is what is compared).
    let by_address = Request::Lower(IrDocument {
        text: "{}".into(),
        module: Some(module.clone()),
    });
    assert!(asks(Question::LowerModule(&module), &by_address, gen));
    assert!(!asks(Question::LowerModule(&insns), &by_address, gen));
}

/// The keys of an answer without its `"id"`: the object a C ABI library's
/// `tpb_decode` writes (include/tpb_subject.h).
pub(crate) fn answer_object(a: &Answer) -> Map<String, Value> {
    let mut m = Map::new();
    match a {
        Answer::Verdict(v) => {
            m.insert(
                "failed".into(),
                v.clone().map_or(Value::Null, Value::String),
            );
        }
        Answer::Decoded { opcode, fields } => {
            m.insert("opcode".into(), Value::String(opcode_str(*opcode)));
            m.insert("fields".into(), Value::Object(fields_json(fields)));
        }
        Answer::DecodeError { field, offset } => {
            m.insert(
                "error".into(),
                serde_json::json!({"field": field, "offset": offset}),
            );
        }
        Answer::Encoded(b) => {
            m.insert("hex".into(), Value::String(crate::subjects::hex(b)));
        }
        Answer::Refused(r) => {
            m.insert("refused".into(), Value::String(r.clone()));
        }
        Answer::Wire(w) => {
            m.insert("wire".into(), Value::from(*w));
        }
        Answer::Stream(None) => {
            m.insert("valid".into(), Value::Bool(true));
        }
        Answer::Stream(Some((e, index))) => {
            m.insert("stream_error".into(), Value::String(e.clone()));
            m.insert("index".into(), Value::from(*index));
        }
        Answer::Lowered { generation, module } => {
            m.extend(module_json(generation, module));
        }
        Answer::LowerRejected { error, instruction } => {
            m.insert("error".into(), Value::String(error.clone()));
            m.insert("instruction".into(), Value::from(*instruction));
        }
        Answer::Unsupported => {
            m.insert("unsupported".into(), Value::Bool(true));
        }
    }
    m
}

/// The answer object [`module_from_json`] reads (without its `id`).
pub(crate) fn module_json(generation: &str, m: &LoweredModule) -> Map<String, Value> {
    let instructions: Vec<Value> = m
        .instrs
        .iter()
        .map(|l| {
            let (records, side) = l.as_ref().map_or((&[][..], &[][..]), |l| (&l.records, &l.side));
            json!({
                "records": records.iter().map(|r| crate::subjects::hex(r)).collect::<Vec<_>>(),
                "side": side.iter().map(|(t, id)| json!({"table": t, "id": id})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let rows = |name: &str, vs: Vec<Value>| -> Vec<Value> {
        vs.into_iter()
            .enumerate()
            .map(|(id, v)| json!({"id": id, name: v}))
            .collect()
    };
    let groups = m.replica_groups.iter().map(|g| json!(g)).collect();
    let pairs = m
        .source_target_pairs
        .iter()
        .map(|ps| json!(ps.iter().map(|(s, t)| [*s, *t]).collect::<Vec<_>>()))
        .collect();
    let attributes: Vec<Value> = m
        .attributes
        .iter()
        .enumerate()
        .map(|(id, (kind, direction, peer))| {
            json!({"id": id, "kind": kind, "direction": direction, "peer": peer})
        })
        .collect();
    let mut o = Map::new();
    o.insert("generation".into(), Value::from(generation));
    o.insert("instructions".into(), Value::Array(instructions));
    o.insert(
        "replica_groups".into(),
        Value::Array(rows("groups", groups)),
    );
    o.insert(
        "source_target_pairs".into(),
        Value::Array(rows("pairs", pairs)),
    );
    o.insert("attributes".into(), Value::Array(attributes));
    o
}
