//! The readers straight from the text against the tree readers they stand
//! in front of: `lower_input::parse_program_text` against `parse_program`,
//! `protocol::decode_answer_text` against `answer_of`. On the texts the
//! gate's cases make each must read every one, and on any text it reads a
//! value the tree reader reads the same value.

use tpbconform::external::lower_json::ir_document;
use tpbconform::external::protocol::{answer_of, decode_answer_text};
use tpbconform::fields_json::{decode_error_text, fields_text};
use tpbconform::generators::images::valid_image_for;
use tpbconform::generators::lowering_module::build_case;
use tpbconform::generators::rng::SplitMix64;
use tpbconform::layout::OPCODES;
use tpbconform::lower_input::{parse_program, parse_program_text};
use tpbconform::strict_json::{parse, Json};
use tpbconform::subjects::Capability;
use tpbconform::subjects::{registry, Generation};

/// What the tree reader makes of `text` (`None`: an error).
fn tree(text: &str) -> Option<String> {
    let doc = parse(text).ok()?;
    parse_program(&doc).ok().map(|p| format!("{p:?}"))
}

/// Fragments a mutation inserts: keys of every level, each in the wrong
/// place somewhere (`debug_cmd` is a sync field of the wire but not of the
/// document), nulls, escapes, numbers out of range.
const FRAGMENTS: [&str; 16] = [
    r#""debug_cmd":0,"#,
    r#""wait_mode":300,"#,
    r#""sync":null,"#,
    r#""src2":null,"#,
    r#""peer":1,"#,
    r#""tensor_id":5,"#,
    r#""kind":"AllReduce","#,
    r#""extra":1,"#,
    r#""op":"send","#,
    r#""cc_dim":4294967296,"#,
    r#""channel_id":65536,"#,
    "null",
    " ",
    "\\u0041",
    "18446744073709551616",
    r#""dtype":"bfloat16","#,
];

/// Bytes a mutation writes over one byte.
const BYTES: &[u8] = b"\"{}[],:0123456789-.eE\\ nulltrfa";

fn mutate(doc: &str, rng: &mut SplitMix64) -> String {
    mutate_with(doc, rng, &FRAGMENTS)
}

fn mutate_with(doc: &str, rng: &mut SplitMix64, fragments: &[&str]) -> String {
    let mut b = doc.as_bytes().to_vec();
    for _ in 0..1 + rng.index(2) {
        let at = rng.index(b.len());
        match rng.index(4) {
            0 => b[at] = rng.pick(BYTES),
            1 => {
                b.remove(at);
            }
            2 => {
                // After an opening brace: a key at the start of an object.
                let brace = (0..b.len()).filter(|&i| b[i] == b'{').nth(rng.index(8));
                let at = brace.map_or(at, |i| i + 1);
                let f = rng.pick(fragments);
                b.splice(at..at, f.bytes());
            }
            _ => {
                let f = rng.pick(fragments);
                b.splice(at..at, f.bytes());
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn the_text_reader_reads_what_the_tree_reader_reads() {
    let mut rng = SplitMix64(0x1a2b_3c4d);
    let (mut docs, mut accepted) = (0, 0);
    for _ in 0..3000 {
        let case = build_case(&rng.bytes(256), None);
        let doc = ir_document(case.gen, &case.insns);
        docs += 1;
        let fast = parse_program_text(&doc).map(|p| format!("{p:?}"));
        assert!(fast.is_some(), "a lowering case's document: {doc}");
        assert_eq!(fast, tree(&doc), "{doc}");
        for _ in 0..12 {
            let m = mutate(&doc, &mut rng);
            if let Some(p) = parse_program_text(&m) {
                accepted += 1;
                assert_eq!(Some(format!("{p:?}")), tree(&m), "{m}");
            }
        }
    }
    // Mutations it still reads (whitespace, a null, a key in place): the
    // comparison above ran on more than the generated documents.
    assert!(
        accepted > 1000,
        "{accepted} mutants read of {docs} documents"
    );
}

#[test]
fn keys_in_another_order_read_the_same_and_op_not_first_is_left_to_the_tree() {
    let doc = r#"{"instructions":[{"op":"send","peer":1,"sync":{"wait_idx":2},
        "num_elements_per_partition":64,"tensor_base":0,"tensor_id":4096}],
        "generation":"v3"}"#;
    let fast = parse_program_text(doc).map(|p| format!("{p:?}"));
    assert!(fast.is_some());
    assert_eq!(fast, tree(doc));
    let late = doc.replace(r#""op":"send","peer":1"#, r#""peer":1,"op":"send""#);
    assert_eq!(parse_program_text(&late), None);
    assert!(tree(&late).is_some(), "the tree reads it");
}

/// What `answer_of` makes of a decode answer text (`None`: an error).
fn decode_tree(text: &str) -> Option<String> {
    match parse(text).ok()? {
        Json::Object(m) => answer_of(&m, Capability::Decode)
            .ok()
            .map(|a| format!("{a:?}")),
        _ => None,
    }
}

/// Fragments of decode answers: keys of both levels and of both answers,
/// a field of each value kind given a value of another, a key twice.
const DECODE_FRAGMENTS: [&str; 14] = [
    r#""opcode":"0x85","#,
    r#""fields":{},"#,
    r#""error":{"field":"kind","offset":1},"#,
    r#""offset":3,"#,
    r#""unsupported":true,"#,
    r#""cce_op":5,"#,
    r#""cce_op":"add","#,
    r#""wait_mode":"add","#,
    r#""scratch_space_addr":"0a","#,
    r#""scratch_space_addr":"0a0","#,
    r#""no_such_field":7,"#,
    r#""wait_idx":-1,"#,
    "1.5",
    "\\n",
];

#[test]
fn the_decode_answer_text_reader_reads_what_answer_of_reads() {
    let core = registry::core();
    let mut rng = SplitMix64(0x5eed_dec0);
    let (mut decoded, mut failed, mut accepted) = (0, 0, 0);
    for _ in 0..4000 {
        let mut b = [0u8; 64];
        if rng.index(4) == 0 {
            rng.fill(&mut b);
        } else {
            let (op, arch) = (rng.pick(&OPCODES), rng.pick(&Generation::ALL));
            valid_image_for(&mut rng, op, arch, &mut b);
        }
        // The text the reference library writes for this bundle.
        let text = match core.decode(&b).expect("core answers") {
            Ok(d) => {
                decoded += 1;
                format!(
                    r#"{{"opcode":"0x{:02X}","fields":{}}}"#,
                    d.opcode,
                    fields_text(&d.fields)
                )
            }
            Err(e) => {
                failed += 1;
                decode_error_text(e.field.as_str(), e.offset as u64)
            }
        };
        let fast = decode_answer_text(&text).map(|a| format!("{a:?}"));
        assert!(fast.is_some(), "a decode answer: {text}");
        assert_eq!(fast, decode_tree(&text), "{text}");
        for _ in 0..8 {
            let m = mutate_with(&text, &mut rng, &DECODE_FRAGMENTS);
            if let Some(a) = decode_answer_text(&m) {
                accepted += 1;
                assert_eq!(Some(format!("{a:?}")), decode_tree(&m), "{m}");
            }
        }
    }
    assert!(
        decoded > 1000 && failed > 200,
        "{decoded} decoded, {failed} failed"
    );
    assert!(accepted > 1000, "{accepted} mutants read");
}
