//! Input mistakes get a hint (issue 32 item 4): hex text given without `--hex` is refused (exit
//! 2, nothing on stdout) naming the file, whatever its length, by every bundle reader.

mod common;

use common::{code, stderr, tmp, tpb, valid_header};

#[test]
fn hex_text_without_hex_is_refused_with_a_hint() {
    let dir = tmp("input_hints", "hex");
    let line = common::hexline(&valid_header());
    let cases = [
        ("line.hex", format!("{line}\n")), // 129 bytes
        ("bare.hex", line.clone()),        // 128: a multiple of 64
        (
            "commented.hex",
            format!("# a program\n{line}\n\n{line}  # two\n"),
        ),
        ("short.hex", "8510\n".to_string()),
    ];
    for (name, text) in cases {
        let p = dir.join(name);
        std::fs::write(&p, &text).unwrap();
        let p = p.to_str().unwrap();
        for cmd in ["check", "decode", "explain"] {
            let o = tpb(&[cmd, p]);
            assert_eq!(code(&o), 2, "{cmd} {name}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{cmd} {name}: nothing printed");
            assert!(
                stderr(&o).contains(&format!("{p}: looks like hex text: did you mean --hex?")),
                "{cmd} {name}: {}",
                stderr(&o)
            );
            // With --hex the same file reads (or fails on its own terms, never with the hint).
            let o = tpb(&[cmd, "--hex", p]);
            assert!(!stderr(&o).contains("did you mean --hex"), "{}", stderr(&o));
        }
    }
    // A raw bundle is read as before (a lone header is a short group: exit 1 for check).
    let p = dir.join("raw.bin");
    std::fs::write(&p, valid_header()).unwrap();
    for cmd in ["check", "decode", "explain"] {
        let o = tpb(&[cmd, p.to_str().unwrap()]);
        assert!(code(&o) < 2, "{cmd}: {}", stderr(&o));
    }
}
