//! Writes the sample NEFFs of `examples/neff/` from `examples/samples/program.hex` (the
//! project's own valid stream): `cargo run -p tpb-neff --example build_samples`.
//! `neff/tests/samples.rs` rebuilds them and fails when the committed ones differ.

use std::path::Path;

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let program = std::fs::read_to_string(repo.join("examples/samples/program.hex"))
        .expect("examples/samples/program.hex");
    let (files, unpacked) = tpb_neff::build::samples(&tpb_neff::build::parse_hex_lines(&program));
    let out = repo.join("examples/neff");
    // The engine-model samples (SPEC §11, issue 34).
    let files = files.into_iter().chain(tpb_neff::build::sync_samples());
    for (name, bytes) in files {
        std::fs::create_dir_all(&out).expect("examples/neff");
        std::fs::write(out.join(name), bytes).expect("write");
    }
    for (name, bytes) in unpacked {
        let p = out.join("unpacked").join(name);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("folder");
        std::fs::write(p, bytes).expect("write");
    }
}
