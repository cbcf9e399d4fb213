//! Generates the opcode roster from `isa/opcodes.tsv` (FACTS §1 [H]), the one source of the
//! per-generation `NEURON_ISA_TPB_OPCODE` membership. Output: `$OUT_DIR/opcodes.rs` with
//! `OPCODE_ROWS: [(u8, &str, u8); N]` = (opcode, header name, generation bit set: bit 0 = v2,
//! bit 1 = v3, bit 2 = v4, bit 3 = v5). A malformed file fails the build naming the line.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let tsv = manifest.join("..").join("isa").join("opcodes.tsv");
    println!("cargo:rerun-if-changed={}", tsv.display());
    let text = std::fs::read_to_string(&tsv)
        .unwrap_or_else(|e| panic!("{}: cannot read: {e}", tsv.display()));
    let mut rows = String::new();
    let mut n = 0usize;
    let mut header_seen = false;
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        if !header_seen {
            assert_eq!(
                cols,
                ["opcode", "name", "v2", "v3", "v4", "v5"],
                "{}:{lineno}: expected the column header line",
                tsv.display()
            );
            header_seen = true;
            continue;
        }
        assert_eq!(
            cols.len(),
            6,
            "{}:{lineno}: expected 6 tab-separated columns",
            tsv.display()
        );
        let op = cols[0]
            .strip_prefix("0x")
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .unwrap_or_else(|| panic!("{}:{lineno}: bad opcode {:?}", tsv.display(), cols[0]));
        let name = cols[1];
        assert!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_'),
            "{}:{lineno}: bad name {name:?}",
            tsv.display()
        );
        let mut mask = 0u8;
        for (g, c) in cols[2..].iter().enumerate() {
            match *c {
                "1" => mask |= 1 << g,
                "0" => {}
                other => panic!(
                    "{}:{lineno}: membership must be 0 or 1, got {other:?}",
                    tsv.display()
                ),
            }
        }
        writeln!(rows, "    (0x{op:02X}, \"{name}\", 0b{mask:04b}),").expect("write to String");
        n += 1;
    }
    assert!(header_seen && n > 0, "{}: no rows", tsv.display());
    let out = format!(
        "/// Rows of `isa/opcodes.tsv`: (opcode, header name, generation bits v2=1 v3=2 v4=4 v5=8).\n\
         pub(crate) const OPCODE_ROWS: [(u8, &str, u8); {n}] = [\n{rows}];\n"
    );
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("opcodes.rs");
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("{}: {e}", dest.display()));
}
