//! Regenerates the seed corpus: `cargo run -p tpbconform --example gen_corpus`.
//!
//! Writes `corpus/<target>/<fnv1a64-hex>` for every fuzz target (deleting the
//! folder's previous files first) and `corpus/VERSION`, except the folders in
//! [`HAND_WRITTEN`], whose seeds were written by hand and are left as they are. Deterministic: fixed
//! seeds, generators from `tpbconform::generators`. Seeds are inputs, not
//! expectations: a seed on which core and oracle disagree is still written
//! (and reported), so the replay test keeps failing until the bug is fixed.

use arbitrary::Unstructured;
use std::fs;
use std::path::Path;
use tpbconform::atomic::write_atomic;
use tpbconform::fuzz_entry::{self, fnv1a64, fuzz_targets, CORPUS_VERSION};
use tpbconform::generators::{self as gen, Config, SplitMix64};

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    SplitMix64(seed).bytes(n)
}

fn only(op: u8) -> Config {
    let mut weights = [0u8; tpbconform::layout::OPCODES.len()];
    if let Some(i) = tpbconform::layout::OPCODES.iter().position(|&o| o == op) {
        weights[i] = 1;
    }
    Config {
        weights,
        ..Config::default()
    }
}

/// `n` bundles: valid and near-valid (k = 1) cases under `cfg`.
fn bundles(seed: u64, n: u64, cfg: &Config) -> Vec<Vec<u8>> {
    (0..n)
        .filter_map(|i| {
            let d = bytes(seed + i, 256);
            let u = &mut Unstructured::new(&d);
            let c = if i % 3 == 0 {
                gen::valid_case(u, cfg)
            } else {
                gen::near_valid_case(u, cfg)
            };
            c.ok().map(|c| c.bundle.to_vec())
        })
        .collect()
}

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let all = Config::default();
    match target {
        "validate_header" => [bundles(100, 30, &only(0x85)), bundles(200, 6, &all)].concat(),
        "validate_payload" => [bundles(300, 24, &only(0x86)), bundles(400, 6, &all)].concat(),
        "decode_any" => bundles(500, 44, &all),
        "structured_diff" => (0..30)
            .map(|i| bytes(600 + i, 64 + 16 * i as usize))
            .collect(),
        "custom_op_stream" => (0..30)
            .filter_map(|i| {
                let d = bytes(700 + i, 512);
                gen::stream(&mut Unstructured::new(&d), &all).ok()
            })
            .collect(),
        "luts" => gen::lut_edge_ordinals()
            .iter()
            .map(|v| v.to_le_bytes().to_vec())
            .collect(),
        "ir_gates" => (0..30u64)
            .map(|i| {
                let mut d = bytes(800 + i, 24);
                d[0] = (i % 6) as u8;
                d
            })
            .collect(),
        // Generator byte programs (generators::lowering_module::build_case): generation,
        // count, then per instruction valid / near-valid / raw choices.
        "collective_lowering" => (0..40)
            .map(|i| bytes(1000 + i, 48 + 24 * i as usize))
            .collect(),
        _ => (0..20)
            .map(|i| bytes(900 + i, 32 + 12 * i as usize))
            .collect(),
    }
}

/// Seed folders written by hand (corpus/README.md): never regenerated here.
const HAND_WRITTEN: &[&str] = &["stream_lint"];

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    fs::create_dir_all(&root)?;
    write_atomic(
        root.join("VERSION"),
        format!("{CORPUS_VERSION}\n").as_bytes(),
    )?;
    for name in fuzz_targets() {
        if HAND_WRITTEN.contains(&name) {
            println!("{name}: hand-written seeds, kept");
            continue;
        }
        let dir = root.join(name);
        if dir.exists() {
            fs::remove_dir_all(&dir)?;
        }
        fs::create_dir_all(&dir)?;
        let mut diverging = 0;
        let s = seeds(name);
        for d in &s {
            write_atomic(dir.join(format!("{:016x}", fnv1a64(d))), d)?;
            diverging += usize::from(fuzz_entry::check(name, d).is_err());
        }
        println!("{name}: {} seeds, {diverging} diverging", s.len());
    }
    Ok(())
}
