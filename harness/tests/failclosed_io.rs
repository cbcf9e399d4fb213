//! Regression tests of issue 11 for the CLI readers and writers: streaming
//! with bounded memory, broken pipes, strict `encode`, `replay` lengths and
//! stdin, `encode -o` and `minimize` replacing only what they own.
//! Each test names the promise of docs/guarantees.md it holds.

mod common;

use common::{code, hexline, refused, run, start, stderr, valid_header, Reap, BIN};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn tmp(name: &str) -> PathBuf {
    common::tmp("fc-io", name)
}

/// Starts `args`, writes `first` to its stdin and keeps stdin open; returns
/// the first stdout line if it arrives within 20 s. A reader that slurps
/// its input before printing never answers.
fn first_line_before_eof(args: &[&str], first: &[u8]) -> Option<String> {
    let mut c = Reap(start(args, Stdio::piped(), Stdio::piped(), Stdio::null()));
    let mut stdin = c.0.stdin.take().unwrap();
    stdin.write_all(first).unwrap();
    stdin.flush().unwrap();
    let out = c.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut l = String::new();
        let _ = BufReader::new(out).read_line(&mut l);
        let _ = tx.send(l);
    });
    let got = rx.recv_timeout(Duration::from_secs(20)).ok();
    drop(stdin);
    got.filter(|l| !l.is_empty())
}

/// Guarantee R1: every reader streams; output starts before the input ends.
#[test]
fn readers_print_before_the_input_ends() {
    // Enough bundles to fill the stdout buffer (BufWriter flushes at 8 KiB).
    let bin: Vec<u8> = valid_header().repeat(400);
    let hex: String = (0..400).map(|_| hexline(&valid_header()) + "\n").collect();
    let jsonl = {
        let o = run(&["decode"], &valid_header());
        String::from_utf8(o.stdout).unwrap().repeat(400)
    };
    for (args, input) in [
        (vec!["check"], bin.clone()),
        (vec!["check", "--hex"], hex.clone().into_bytes()),
        (vec!["decode"], bin.clone()),
        (vec!["explain"], bin.clone()),
        (vec!["encode", "--hex"], jsonl.clone().into_bytes()),
        (
            vec!["replay", "--target", "validate_header", "--hex-file", "-"],
            hex.clone().into_bytes(),
        ),
    ] {
        assert!(
            first_line_before_eof(&args, &input).is_some(),
            "{args:?}: no output before end of input (not streaming)"
        );
    }
}

/// Spawns `sh -c 'ulimit -v KB; exec BIN args'`.
fn capped(kb: u64, args: &[&str], stdin: Stdio) -> Reap {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kb} && exec \"$0\" \"$@\""))
        .arg(BIN)
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Reap(cmd.spawn().unwrap())
}

/// Guarantee R2: memory does not grow with the input. `check /dev/zero`
/// under a 256 MiB address-space cap keeps printing verdicts (a reader that
/// slurps dies without output).
#[test]
fn check_dev_zero_streams_within_a_memory_cap() {
    let mut c = capped(
        256 * 1024,
        &["check", "--format", "jsonl", "/dev/zero"],
        Stdio::null(),
    );
    let out = BufReader::new(c.0.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // 300k bundles = 19 MB of input, far past any fixed buffer.
        let n = out.lines().take(300_000).filter(|l| l.is_ok()).count();
        let _ = tx.send(n);
    });
    let n = rx.recv_timeout(Duration::from_secs(240)).unwrap_or(0);
    assert_eq!(n, 300_000, "verdicts printed under the memory cap");
}

/// Guarantee R3: a hex line is capped (1 MiB): an endless line is an error
/// naming the line, not an unbounded buffer.
#[test]
fn endless_hex_line_is_refused_at_the_cap() {
    for args in [
        vec!["check", "--hex"],
        vec!["decode", "--hex"],
        vec!["explain", "--hex"],
        vec!["encode"],
        vec!["replay", "--target", "alu_lut", "--hex-file", "-"],
    ] {
        let mut c = capped(256 * 1024, &args, Stdio::piped());
        let mut stdin = c.0.stdin.take().unwrap();
        // 64 MiB of digits and no newline; the writer stops at EPIPE.
        let w = std::thread::spawn(move || {
            let chunk = vec![b'0'; 1 << 16];
            for _ in 0..1024 {
                if stdin.write_all(&chunk).is_err() {
                    break;
                }
            }
        });
        let mut e = String::new();
        c.0.stderr.take().unwrap().read_to_string(&mut e).unwrap();
        let status = c.0.wait().unwrap();
        let _ = w.join();
        assert_eq!(status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("<stdin>:1: line longer than"), "{args:?}: {e}");
    }
}

/// Guarantee X4: a closed stdout ends the run quietly with exit 141.
#[test]
fn broken_pipe_exits_141_quietly() {
    let dir = tmp("pipe");
    let input = dir.join("many.bin");
    std::fs::write(&input, valid_header().repeat(20_000)).unwrap();
    let path = input.to_str().unwrap();
    for args in [
        vec!["check", path],
        vec!["decode", path],
        vec!["explain", path],
    ] {
        let mut c = start(&args, Stdio::null(), Stdio::piped(), Stdio::piped());
        let mut out = c.stdout.take().unwrap();
        let mut first = [0u8; 16];
        out.read_exact(&mut first).unwrap();
        drop(out);
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(141), "{args:?}: {}", stderr(&o));
        assert!(o.stderr.is_empty(), "{args:?}: quiet, got {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Guarantee X5: `replay` of a bundle target takes exactly 64 bytes of typed
/// hex, a raw FILE of any length (read as the fuzz target reads it); `replay -`
/// reads stdin.
#[test]
fn replay_file_length_and_stdin() {
    let dir = tmp("replay");
    for n in [63usize, 65] {
        let p = dir.join(format!("b{n}"));
        let mut data = valid_header().to_vec();
        data.resize(n, 0);
        std::fs::write(&p, &data).unwrap();
        let o = run(
            &["replay", "--target", "validate_header", p.to_str().unwrap()],
            b"",
        );
        assert_eq!(code(&o), 0, "{n} bytes: {}", stderr(&o));
        let h = p.with_extension("hex");
        std::fs::write(&h, common::hexline(&data)).unwrap();
        let o = run(
            &[
                "replay",
                "--target",
                "validate_header",
                "--hex-file",
                h.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(code(&o), 2, "{n} bytes: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{n} bytes")), "{}", stderr(&o));
    }
    let o = run(
        &["replay", "--target", "validate_header", "-"],
        &valid_header(),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("<stdin>: agree"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

fn decoded_header() -> serde_json::Value {
    let o = run(&["decode"], &valid_header());
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Guarantee E1: `encode` takes only records `decode` could print.
#[test]
fn encode_rejects_bad_mnemonics_unknown_and_duplicate_keys() {
    let good = decoded_header();
    let good_s = good.to_string();
    let mut cases: Vec<(String, &str)> = Vec::new();
    let mut m = good.clone();
    m["mnemonic"] = "NoSuchOp".into();
    cases.push((m.to_string(), "\"NoSuchOp\" is not the mnemonic"));
    let mut m = good.clone();
    m["mnemonic"] = "CustomOpPayload".into();
    cases.push((m.to_string(), "not the mnemonic of opcode 0x85"));
    let mut m = good.clone();
    m["extra"] = 1.into();
    cases.push((m.to_string(), "unknown key \"extra\""));
    // Duplicate keys at top level and inside "fields".
    cases.push((
        good_s.replacen("{\"index\":0,", "{\"index\":0,\"index\":1,", 1),
        "duplicate key \"index\"",
    ));
    cases.push((
        good_s.replacen(
            "\"fields\":{",
            "\"fields\":{\"opcode\":133,\"opcode\":133,",
            1,
        ),
        "duplicate key \"opcode\"",
    ));
    for (line, what) in &cases {
        let o = run(&["encode"], format!("{line}\n").as_bytes());
        assert_eq!(code(&o), 2, "{line}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("<stdin>:1") && stderr(&o).contains(what),
            "{line}: {}",
            stderr(&o)
        );
    }
    // An unknown field is named by its name.
    let mut m = good.clone();
    m["fields"]["bogus_field"] = 0.into();
    let o = run(&["encode"], m.to_string().as_bytes());
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("bad field `bogus_field`"),
        "{}",
        stderr(&o)
    );
    // The good record still encodes.
    let o = run(&["encode"], good_s.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(o.stdout, valid_header().to_vec());
}

/// Guarantee W1/W2: `encode -o` replaces only a regular file, keeps its
/// permissions, and leaves it as it was on exit 2 or when nothing encoded.
#[cfg(unix)]
#[test]
fn encode_output_replaces_only_regular_files_it_owns() {
    use std::os::unix::fs::{symlink, FileTypeExt, PermissionsExt};
    let dir = tmp("enc-out");
    let good = decoded_header().to_string() + "\n";
    // 0600 file: replaced, mode kept.
    let f = dir.join("out.bin");
    std::fs::write(&f, b"old").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = run(&["encode", "-o", f.to_str().unwrap()], good.as_bytes());
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), valid_header().to_vec());
    let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Every record skipped: the file is left as it was.
    let error_rec = "{\"index\":0,\"opcode\":\"0x00\",\"mnemonic\":null,\"error\":\"x\",\"field\":\"opcode\",\"offset\":0}\n";
    let o = run(&["encode", "-o", f.to_str().unwrap()], error_rec.as_bytes());
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&f).unwrap(),
        valid_header().to_vec(),
        "not emptied"
    );
    // Exit 2 (bad line after a good one): unchanged.
    std::fs::write(&f, b"keep").unwrap();
    let o = run(
        &["encode", "-o", f.to_str().unwrap()],
        format!("{good}{{bad\n").as_bytes(),
    );
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(std::fs::read(&f).unwrap(), b"keep");
    // A symlink, a FIFO and a device are refused and stay what they were.
    let target = dir.join("target");
    std::fs::write(&target, b"precious").unwrap();
    let link = dir.join("link");
    symlink(&target, &link).unwrap();
    let fifo = dir.join("fifo");
    common::mkfifo(&fifo);
    for p in [link.as_path(), fifo.as_path(), Path::new("/dev/null")] {
        let o = run(&["encode", "-o", p.to_str().unwrap()], good.as_bytes());
        assert_eq!(code(&o), 2, "{}: {}", p.display(), stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"precious");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    let stray: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A corpus root with two target folders holding duplicates.
fn corpus(root: &Path) -> PathBuf {
    let c = root.join("corpus");
    for t in ["validate_header", "alu_lut"] {
        std::fs::create_dir_all(c.join(t)).unwrap();
    }
    std::fs::write(c.join("validate_header/a"), valid_header()).unwrap();
    std::fs::write(c.join("validate_header/b"), valid_header()).unwrap();
    std::fs::write(c.join("alu_lut/x"), [24u8]).unwrap();
    std::fs::write(c.join("alu_lut/y"), [24u8]).unwrap();
    std::fs::write(c.join("README.md"), b"readme").unwrap();
    std::fs::create_dir_all(c.join("vectors")).unwrap();
    std::fs::write(c.join("vectors/v.txt"), b"vec").unwrap();
    c
}

/// Every path under `dir` with its content (files) or kind, sorted.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            if t.is_dir() {
                out.push((name + "/", Vec::new()));
                stack.push(p);
            } else if t.is_file() {
                out.push((name, std::fs::read(&p).unwrap()));
            } else {
                out.push((name, format!("{t:?}").into_bytes()));
            }
        }
    }
    out.sort();
    out
}

/// Guarantee M1: in place, minimize deletes only the inputs it read and did
/// not keep: subfolders, FIFOs and special-file symlinks are untouched (and
/// never opened blocking).
#[cfg(unix)]
#[test]
fn minimize_in_place_touches_only_redundant_inputs() {
    let root = tmp("min-inplace");
    let c = corpus(&root);
    let vh = c.join("validate_header");
    std::fs::create_dir_all(vh.join("crashes")).unwrap();
    std::fs::write(vh.join("crashes/crash-1"), valid_header()).unwrap();
    common::mkfifo(&vh.join("fifo"));
    std::os::unix::fs::symlink("/dev/zero", vh.join("zero")).unwrap();
    let mut c2 = Command::new(BIN)
        .args(["minimize", c.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A FIFO must not hang minimize: give it 60 s.
    let mut waited = 0;
    while c2.try_wait().unwrap().is_none() && waited < 600 {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    let _ = c2.kill();
    let o = c2.wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fifo: FIFO") && stderr(&o).contains("zero: device"),
        "{}",
        stderr(&o)
    );
    let left: Vec<String> = snapshot(&c).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        left,
        [
            "README.md",
            "alu_lut/",
            "alu_lut/x",
            "validate_header/",
            "validate_header/a",
            "validate_header/crashes/",
            "validate_header/crashes/crash-1",
            "validate_header/fifo",
            "validate_header/zero",
            "vectors/",
            "vectors/v.txt",
        ]
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `tpbconform minimize INPUT --output OUT`.
fn minimize_into(input: &Path, out: &Path) -> std::process::Output {
    let (input, out) = (input.to_str().unwrap(), out.to_str().unwrap());
    run(&["minimize", input, "--output", out], b"")
}

/// Guarantee M2: `--output` must be a new folder; an existing one (even the
/// corpus root itself) is refused with exit 2 and nothing changes.
#[test]
fn minimize_output_never_overwrites() {
    let root = tmp("min-out");
    let c = corpus(&root);
    let other = common::mkdir(&root, "other");
    std::fs::write(other.join("keep"), b"k").unwrap();
    let before_c = snapshot(&c);
    let before_o = snapshot(&other);
    for (input, out) in [
        (c.clone(), other.clone()),
        (c.join("validate_header"), c.clone()),
        (c.join("validate_header"), other.clone()),
    ] {
        refused(&minimize_into(&input, &out), "exists already");
        assert_eq!(snapshot(&c), before_c);
        assert_eq!(snapshot(&other), before_o);
    }
    // A new folder works and the input is untouched.
    let fresh = root.join("fresh");
    let o = minimize_into(&c, &fresh);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(snapshot(&c), before_c);
    let names: Vec<String> = snapshot(&fresh).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "alu_lut/",
            "alu_lut/x",
            "validate_header/",
            "validate_header/a"
        ]
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee M3: exit 2 means nothing changed: an unreadable input in a
/// later folder stops minimize before the earlier folders are touched.
#[cfg(unix)]
#[test]
fn minimize_error_part_way_changes_nothing() {
    let root = tmp("min-err");
    let c = corpus(&root);
    // `validate_header` sorts after `alu_lut`; a dangling symlink cannot be read.
    std::os::unix::fs::symlink(root.join("gone"), c.join("validate_header/dangling")).unwrap();
    let before = snapshot(&c);
    let o = run(&["minimize", c.to_str().unwrap()], b"");
    refused(&o, "dangling");
    assert_eq!(
        snapshot(&c),
        before,
        "alu_lut/ was minimised before the error"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// `replay FILE` read a path that is not UTF-8 with its bad bytes replaced by U+FFFD, so it
/// opened another file (`a\u{FFFD}b.bin`, replayed and exit 0) or said the path did not exist;
/// now, as every other command, it refuses the argument (exit 2) and reads nothing.
#[test]
fn replay_refuses_a_path_that_is_not_utf8_rather_than_read_another_file() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tmp("replay_utf8");
    std::fs::write(dir.join("a\u{FFFD}b.bin"), valid_header()).unwrap();
    let named = dir.join(std::ffi::OsStr::from_bytes(b"a\xffb.bin"));
    let o = Command::new(BIN)
        .args(["replay", "--target", "validate_header"])
        .arg(&named)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        code(&o),
        2,
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
    assert!(stderr(&o).contains("UTF-8"), "{}", stderr(&o));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
