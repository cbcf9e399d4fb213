//! The `tpb_verdict` block of include/tpb_subject.h has one source: the
//! SPEC.md §3 / §4 predicate tables, which must also be core's and the
//! harness's predicate list in the same order. This test fails when the
//! header block drifts from what `external::verdict::header_block` makes of
//! SPEC.md; `TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids`
//! rewrites the block (and only the block) in place.

use std::path::PathBuf;
use tpbconform::external::verdict::{block_in, header_block, spec_predicates};
use tpbconform::subjects::Predicate;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

#[test]
fn spec_tables_core_and_harness_list_the_same_predicates_in_order() {
    let spec = std::fs::read_to_string(root().join("SPEC.md")).expect("SPEC.md");
    let from_spec: Vec<String> = spec_predicates(&spec)
        .expect("tables")
        .into_iter()
        .map(|p| p.name)
        .collect();
    let core: Vec<String> = tpb_core::validate::Predicate::ALL
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    let harness: Vec<String> = Predicate::KNOWN
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    assert_eq!(from_spec, core, "SPEC §3/§4 tables vs core Predicate::ALL");
    assert_eq!(harness, core, "harness Predicate::KNOWN vs core");
}

#[test]
fn the_header_block_is_generated_from_the_spec() {
    let spec = std::fs::read_to_string(root().join("SPEC.md")).expect("SPEC.md");
    let want = header_block(&spec_predicates(&spec).expect("tables"));
    let path = root().join("include/tpb_subject.h");
    let header = std::fs::read_to_string(&path).expect("header");
    let have = block_in(&header).expect("BEGIN/END GENERATED markers in tpb_subject.h");
    if have != want && std::env::var_os("TPB_BLESS").is_some() {
        let fixed = header.replacen(have, &want, 1);
        std::fs::write(&path, fixed).expect("rewrite the header");
        return;
    }
    assert_eq!(
        have, want,
        "include/tpb_subject.h verdict block drifted from SPEC.md; regenerate with \
         TPB_BLESS=1 cargo test -p tpbconform --test verdict_ids"
    );
}

#[test]
fn the_block_holds_every_predicate_with_its_id() {
    // Independent of the renderer: each predicate's C name and id appear.
    let header = std::fs::read_to_string(root().join("include/tpb_subject.h")).expect("header");
    let block = block_in(&header).expect("markers");
    assert!(block.contains("TPB_VERDICT_VALID = 0,"));
    for (i, p) in Predicate::KNOWN.iter().enumerate() {
        let row = format!("TPB_PRED_{} = {}", p.name().to_ascii_uppercase(), i + 1);
        assert!(block.contains(&row), "missing `{row}`");
    }
}
