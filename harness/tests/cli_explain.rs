//! `tpbconform explain` marks exactly the bytes that made the first failing
//! predicate fail (issue 21 item 3), and `--color` / `NO_COLOR`.
//! Expected offsets are SPEC's (§3 #3, #5), not the renderer's output.

mod common;

use common::{bundle_with, stdout, valid_header, BIN};
use std::path::PathBuf;
use std::process::{Command, Output};

const RED: &str = "\x1b[1;31m";
const RESET: &str = "\x1b[0m";

fn input(name: &str, b: &[u8; 64]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tpbconform-cli-explain-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::write(&p, b).unwrap();
    p
}

fn explain(args: &[&str], b: &[u8; 64], name: &str) -> Output {
    let p = input(name, b);
    Command::new(BIN)
        .arg("explain")
        .args(args)
        .arg(&p)
        .env_remove("NO_COLOR")
        .output()
        .expect("run tpbconform")
}

/// The offsets a plain (`--color never`) explanation marks: each `^^` under a
/// byte column of the row above it. Checks that every marked row, and only
/// those, ends with `<== FAILED: <reason>`.
fn marked(t: &str, reason: &str) -> Vec<usize> {
    let lines: Vec<&str> = t.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let is_row = l.starts_with("  0x");
        let next_carets = lines
            .get(i + 1)
            .is_some_and(|n| n.starts_with("        ") && n.contains("^^"));
        if is_row {
            assert_eq!(
                l.ends_with(&format!("<== FAILED: {reason}")),
                next_carets,
                "a row is marked iff it has carets: {l:?}\n{t}"
            );
        }
        if is_row && next_carets {
            let row = usize::from_str_radix(&l[4..6], 16).unwrap();
            for (col, _) in lines[i + 1].match_indices("^^") {
                assert_eq!((col - 8) % 3, 0, "caret under a byte column: {t}");
                out.push(row + (col - 8) / 3);
            }
        }
    }
    out
}

/// The offsets painted red in a `--color always` explanation (the byte
/// columns only), with each row's offset.
fn red_bytes(t: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for l in t.lines().filter(|l| l.starts_with("  0x")) {
        let row = usize::from_str_radix(&l[4..6], 16).unwrap();
        // The byte column: escapes removed, bytes at 8 + 3k.
        let mut col = 0usize;
        let mut red = false;
        let mut rest = l;
        while let Some(c) = rest.chars().next() {
            if rest.starts_with('\x1b') {
                let end = rest.find('m').unwrap() + 1;
                red = &rest[..end] == RED;
                rest = &rest[end..];
                continue;
            }
            if red && col >= 8 && (col - 8).is_multiple_of(3) && col < 8 + 47 {
                out.push(row + (col - 8) / 3);
            }
            col += 1;
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

#[test]
fn byte_0x3f_alone_marks_byte_0x3f_alone() {
    let mut b = valid_header();
    b[0x3F] = 0x01;
    let o = explain(&["--color", "never"], &b, "h3f.bin");
    assert_eq!(o.status.code(), Some(1));
    let t = stdout(&o);
    assert!(!t.contains('\x1b'), "{t}");
    assert_eq!(
        marked(&t, "custom_op_header_reserved_zero"),
        vec![0x3F],
        "{t}"
    );
    assert!(
        t.contains(
            "custom_op_header_reserved_zero: reserved byte 0x3F is 0x01, not zero (byte 0x3F)"
        ),
        "{t}"
    );
    let o = explain(&["--color", "always"], &b, "h3f.bin");
    assert_eq!(red_bytes(&stdout(&o)), vec![0x3F], "{}", stdout(&o));
}

#[test]
fn wait_mode_0x80_marks_byte_0x04_alone() {
    let mut b = valid_header();
    b[4] = 0x80;
    b[0x3F] = 0x01; // a later predicate's byte
    let o = explain(&["--color", "never"], &b, "w80.bin");
    assert_eq!(o.status.code(), Some(1));
    let t = stdout(&o);
    assert_eq!(marked(&t, "has_valid_neuron_events"), vec![0x04], "{t}");
    let o = explain(&["--color", "always"], &b, "w80.bin");
    assert_eq!(red_bytes(&stdout(&o)), vec![0x04], "{}", stdout(&o));
}

#[test]
fn several_bad_bytes_are_each_marked() {
    let mut b = valid_header();
    for (at, v) in [(0x12, 0x02), (0x21, 0x03), (0x3E, 0x04)] {
        b[at] = v;
    }
    let t = stdout(&explain(&["--color", "never"], &b, "multi.bin"));
    assert_eq!(
        marked(&t, "custom_op_header_reserved_zero"),
        vec![0x12, 0x21, 0x3E],
        "{t}"
    );
}

#[test]
fn names_stay_readable_on_an_invalid_bundle() {
    // 0xD9 with a bad dtype (SPEC §5: 0x0D); cce_op 0x00 bypass, kind 0x03.
    let b = bundle_with(&[
        (0, 0xD9),
        (1, 0x10),
        (0x0D, 0xFF),
        (0x0E, 0x03),
        (0x0C, 0x04),
    ]);
    let valid = {
        let mut v = b;
        v[0x0D] = 0x03;
        stdout(&explain(&["--color", "never"], &v, "d9ok.bin"))
    };
    let t = stdout(&explain(&["--color", "never"], &b, "d9bad.bin"));
    assert!(!t.contains("(raw)"), "{t}");
    assert_eq!(marked(&t, "dtype"), vec![0x0D], "{t}");
    // Every field line other than dtype reads as it does on the valid twin.
    let rows = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.starts_with("  0x") && !l.contains("dtype"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(rows(&t), rows(&valid), "invalid:\n{t}\nvalid:\n{valid}");
}

#[test]
fn color_modes_and_no_color() {
    let mut b = valid_header();
    b[4] = 0x80;
    let p = input("color.bin", &b);
    let run = |args: &[&str], no_color: Option<&str>| {
        let mut c = Command::new(BIN);
        c.arg("explain").args(args).arg(&p).env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        stdout(&c.output().unwrap())
    };
    // Piped: auto is plain, NO_COLOR or not; always colours even with NO_COLOR.
    assert!(!run(&[], None).contains('\x1b'));
    assert!(!run(&["--color", "never"], None).contains('\x1b'));
    let always = run(&["--color", "always"], Some("1"));
    assert!(always.contains(RED), "{always}");
    // Every line that colours ends its colour before the newline.
    for l in always.lines().filter(|l| l.contains('\x1b')) {
        assert!(
            !l.starts_with(RESET),
            "reset after the previous newline: {l:?}"
        );
        let last = l.rfind('\x1b').unwrap();
        assert!(
            l[last..].starts_with(RESET),
            "colour open at end of line: {l:?}"
        );
    }
    // Without escapes, `always` prints the same text as `never`.
    let stripped = {
        let mut s = always.clone();
        for e in [RED, RESET, "\x1b[2m"] {
            s = s.replace(e, "");
        }
        s
    };
    assert_eq!(stripped, run(&["--color", "never"], None));
    // On a terminal (util-linux `script` gives one): auto colours unless NO_COLOR.
    if Command::new("script").arg("--version").output().is_err() {
        println!("SKIPPED: no `script` to run explain on a terminal");
        return;
    }
    let tty = |no_color: Option<&str>| {
        let mut c = Command::new("script");
        c.args([
            "-qec",
            &format!("'{BIN}' explain '{}'", p.display()),
            "/dev/null",
        ])
        .env_remove("NO_COLOR");
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        stdout(&c.output().unwrap())
    };
    assert!(tty(None).contains(RED), "{}", tty(None));
    assert!(
        tty(Some("")).contains(RED),
        "an empty NO_COLOR counts as unset"
    );
    let t = tty(Some("1"));
    assert!(t.contains("wait_mode") && !t.contains('\x1b'), "{t}");
}

#[test]
fn bad_color_value_is_a_usage_error() {
    let o = explain(&["--color", "sometimes"], &valid_header(), "bad.bin");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--color"));
}
