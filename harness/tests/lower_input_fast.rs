//! `lower_input::parse_program_text`, the IR document read straight from its
//! text, against `parse_program` on the tree: on the documents lowering cases
//! send it must read each one, and on any text it reads a program
//! `parse_program` reads the same program.

use tpbconform::external::lower_json::ir_document;
use tpbconform::generators::lowering_module::build_case;
use tpbconform::generators::rng::SplitMix64;
use tpbconform::lower_input::{parse_program, parse_program_text};
use tpbconform::strict_json::parse;

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
                let f = rng.pick(&FRAGMENTS);
                b.splice(at..at, f.bytes());
            }
            _ => {
                let f = rng.pick(&FRAGMENTS);
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
