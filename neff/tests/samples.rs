//! The committed sample NEFFs (`examples/neff/`) are what the builder makes now.

use std::path::Path;

#[test]
fn the_sample_neffs_are_up_to_date() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let program = std::fs::read_to_string(repo.join("examples/samples/program.hex")).unwrap();
    let (files, unpacked) = tpb_neff::build::samples(&tpb_neff::build::parse_hex_lines(&program));
    let out = repo.join("examples/neff");
    let fix = "rebuild with: cargo run -p tpb-neff --example build_samples";
    for (name, bytes) in files.into_iter().chain(tpb_neff::build::sync_samples()) {
        let have = std::fs::read(out.join(name)).unwrap_or_default();
        assert!(have == bytes, "examples/neff/{name} is stale; {fix}");
    }
    for (name, bytes) in unpacked {
        let have = std::fs::read(out.join("unpacked").join(name)).unwrap_or_default();
        assert!(
            have == bytes,
            "examples/neff/unpacked/{name} is stale; {fix}"
        );
    }
}
