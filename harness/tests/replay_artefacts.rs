//! Replay takes what the fuzzer takes (issue 32 item 2): `replay --target T FILE` accepts every
//! fuzz target name (fuzz/fuzz_targets/*.rs) and every registry target name, and reads a file of
//! any length as the fuzz target reads its input: its verdict is the fuzz entry's
//! (`fuzz_entry::check`, what the fuzz binary runs) on the same bytes.

mod common;

use common::{code, repo_root, stderr, stdout, tmp, tpb};
use tpbconform::fuzz_entry;
use tpbconform::generators::SplitMix64;
use tpbconform::targets::Target;

/// The fuzz target names, from the folder cargo-fuzz builds.
fn fuzz_targets() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo_root().join("fuzz/fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .collect();
    v.sort();
    assert!(v.len() >= 10, "{v:?}");
    v
}

#[test]
fn every_fuzz_target_replays_artefacts_of_any_length() {
    let dir = tmp("replay_artefacts", "any_length");
    let mut r = SplitMix64(0x32_0002);
    for t in fuzz_targets() {
        for n in [0usize, 1, 33, 64, 65, 4096] {
            let data = r.bytes(n);
            let p = dir.join(format!("crash-{t}-{n}"));
            std::fs::write(&p, &data).unwrap();
            let o = tpb(&["replay", "--target", &t, p.to_str().unwrap()]);
            let c = code(&o);
            assert!(
                c == 0 || c == 1,
                "{t}, {n} bytes: exit {c}: {}{}",
                stderr(&o),
                stdout(&o)
            );
            // The same verdict as the fuzz binary on the same bytes.
            let fuzz = if fuzz_entry::BASELINES.contains(&t.as_str()) {
                Ok(())
            } else {
                fuzz_entry::check(&t, &data)
            };
            assert_eq!(c == 1, fuzz.is_err(), "{t}, {n} bytes: {}", stdout(&o));
        }
    }
}

/// A 33-byte header artefact (what `cargo fuzz tmin` leaves) reads as its zero-padded bundle:
/// replay says what the 64-byte bundle says.
#[test]
fn a_short_artefact_reads_as_its_zero_padded_bundle() {
    let dir = tmp("replay_artefacts", "short");
    let mut b = [0u8; 64];
    b[0] = 0x85;
    b[1] = 0x10;
    b[0x20] = 0x01; // reserved (SPEC §3 #5)
    let short = dir.join("crash-33");
    std::fs::write(&short, &b[..33]).unwrap();
    let o = tpb(&[
        "replay",
        "--target",
        "validate_header",
        short.to_str().unwrap(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&tpbconform::subjects::hex(&b[..33])),
        "{}",
        stdout(&o)
    );
    // Every name of the registry is taken too (gate targets such as `alu_lut`).
    for t in Target::all() {
        let o = tpb(&["replay", "--target", t.name(), short.to_str().unwrap()]);
        assert!(code(&o) < 2, "{}: {}", t.name(), stderr(&o));
    }
    // A name that is neither is a usage error naming the choices.
    let o = tpb(&["replay", "--target", "lutz", short.to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("luts"), "{}", stderr(&o));
}

/// A reproduced bundle divergence names what each refusing side's verdict is about: the field,
/// its value and the byte, as the report does (the walkthrough of issue 32: replay printed only
/// `core: custom_op_header_reserved_zero`).
#[test]
fn a_reproduced_divergence_names_the_field_value_and_byte() {
    let spec = format!(
        "cmd:python3 {} --planted-bug",
        repo_root().join("examples/subjects/custom_op.py").display()
    );
    let mut hex = String::from("8510");
    hex.push_str(&"00".repeat(61));
    hex.push_str("01");
    let o = tpb(&[
        "replay",
        "--subject",
        &spec,
        "--target",
        "validate_header",
        "--hex",
        &hex,
    ]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("core refuses: reserved byte 0x3F is 0x01, not zero (byte 0x3F)"),
        "{out}"
    );
}
