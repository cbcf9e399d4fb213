//! Hostile filesystems and signals against the promises of
//! docs/guarantees.md (issue 22, items 3 and 4): nothing outside what we
//! own is read, replaced or deleted, no temporary file or staging folder
//! survives any exit path, and vector files are read like every other
//! input (special files skipped, a size cap, bounded memory).

mod common;

use common::{code, exit_within, hexline, signal, stderr, valid_header, wait_until, Reap, BIN};
use std::io::Write;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn tmp(name: &str) -> PathBuf {
    common::tmp("hostile-io", name)
}

/// The JSONL record `decode` prints for [`header`] (what `encode` reads).
fn header_record() -> Vec<u8> {
    let mut c = Command::new(BIN)
        .args(["decode", "--hex"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let hex = hexline(&valid_header());
    c.stdin.take().unwrap().write_all(hex.as_bytes()).unwrap();
    c.wait_with_output().unwrap().stdout
}

/// Every entry of `dir` whose name contains `part`.
fn names_with(dir: &Path, part: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(part))
        .collect()
}

/// A corpus root with `validate_header/` (two equal inputs: one is
/// redundant) and `vectors/`.
fn corpus(root: &Path) -> PathBuf {
    let c = root.join("corpus");
    std::fs::create_dir_all(c.join("validate_header")).unwrap();
    std::fs::write(c.join("validate_header/a"), valid_header()).unwrap();
    std::fs::write(c.join("validate_header/b"), valid_header()).unwrap();
    std::fs::create_dir_all(c.join("vectors")).unwrap();
    c
}

/// Item 3: minimize never follows a symlink out of the corpus. A target
/// folder that is a symlink to a folder outside, and a symlinked file, are
/// skipped and named; nothing outside is deleted; a symlink given as
/// CORPUS_DIR is refused (exit 2).
#[test]
fn minimize_never_follows_symlinks_out_of_the_corpus() {
    let root = tmp("min-links");
    let c = corpus(&root);
    let outside = common::mkdir(&root, "outside");
    for i in 0..7 {
        std::fs::write(outside.join(format!("f{i}")), valid_header()).unwrap();
    }
    symlink(&outside, c.join("validate_payload")).unwrap();
    std::fs::write(root.join("lone"), valid_header()).unwrap();
    symlink(root.join("lone"), c.join("validate_header/link")).unwrap();
    let o = Command::new(BIN)
        .args(["minimize", c.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        names_with(&outside, "f").len(),
        7,
        "files outside were deleted"
    );
    assert!(root.join("lone").exists());
    assert!(std::fs::symlink_metadata(c.join("validate_header/link")).is_ok());
    let e = stderr(&o);
    assert!(
        e.contains("validate_payload: symlink to a directory, not followed"),
        "{e}"
    );
    assert!(
        e.contains("link: symlink to a regular file, not followed"),
        "{e}"
    );
    // The redundant real input went.
    assert_eq!(
        names_with(&c.join("validate_header"), "a").len()
            + names_with(&c.join("validate_header"), "b").len(),
        1
    );
    // The symlinked folder named directly is refused.
    let o = Command::new(BIN)
        .args(["minimize", c.join("validate_payload").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("is a symlink"), "{}", stderr(&o));
    assert_eq!(names_with(&outside, "f").len(), 7);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 3: the gate's corpus walk does not follow symlinks either: a
/// symlinked folder or file is refused before the run (exit 2, named, no
/// report), never followed nor skipped quietly (issue 35).
#[test]
fn gate_corpus_walk_refuses_symlinks_and_names_them() {
    let root = tmp("gate-links");
    let c = corpus(&root);
    std::fs::write(
        c.join("vectors/v.txt"),
        format!("{} header valid -\n", hexline(&valid_header())),
    )
    .unwrap();
    let outside = common::mkdir(&root, "outside");
    std::fs::write(outside.join("x"), valid_header()).unwrap();
    let r = root.join("r");
    let gate = || {
        Command::new(BIN)
            .args(["gate", "--quiet", "--threads", "1", "--cases", "50"])
            .args([
                "--targets",
                "validate_header",
                "--corpus",
                c.to_str().unwrap(),
            ])
            .args(["--report-dir", r.to_str().unwrap()])
            .output()
            .unwrap()
    };
    for (link, to, says) in [
        (
            "sub",
            outside.clone(),
            "sub: symlink to a directory, not followed",
        ),
        (
            "file",
            outside.join("x"),
            "file: symlink to a regular file, not followed",
        ),
    ] {
        let at = c.join("validate_header").join(link);
        symlink(&to, &at).unwrap();
        let o = gate();
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!r.exists(), "a refused gate writes no report");
        std::fs::remove_file(&at).unwrap();
    }
    assert_eq!(code(&gate()), 0);
    std::fs::remove_dir_all(&root).unwrap();
}

const NOBODY: u32 = 65534;

/// Runs `tpbconform ARGS` as uid/gid `nobody` (setpriv), stdin = `input`.
fn as_nobody(args: &[&str], input: &[u8]) -> Option<Output> {
    let mut c = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    c.stdin.take().unwrap().write_all(input).unwrap();
    c.wait_with_output().ok()
}

/// Item 3: `encode -o` replaces only a regular file the running user
/// owns: a file of another uid in a world-writable folder (plain and
/// sticky) is refused with exit 2, untouched (content and owner), and no
/// temporary file is left.
#[test]
fn encode_output_refuses_a_file_owned_by_another_user() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: needs root to chown");
        return;
    }
    let root = tmp("owner");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rec = header_record();
    for mode in [0o777, 0o1777] {
        let d = root.join(format!("d{mode:o}"));
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
        // Owned by nobody, written by root.
        let theirs = d.join("theirs");
        std::fs::write(&theirs, b"not yours").unwrap();
        std::os::unix::fs::chown(&theirs, Some(NOBODY), Some(NOBODY)).unwrap();
        // (It may refuse before reading its input: `run` allows the closed pipe.)
        let o = common::run(&["encode", "-o", theirs.to_str().unwrap()], &rec);
        assert_eq!(code(&o), 2, "{mode:o}: {}", stderr(&o));
        assert!(stderr(&o).contains("owned by uid 65534"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&theirs).unwrap(), b"not yours");
        assert_eq!(std::fs::metadata(&theirs).unwrap().uid(), NOBODY);
        // Owned by root, written by nobody.
        let mine = d.join("mine");
        std::fs::write(&mine, b"root's").unwrap();
        std::fs::set_permissions(&mine, std::fs::Permissions::from_mode(0o666)).unwrap();
        if let Some(o) = as_nobody(&["encode", "-o", mine.to_str().unwrap()], &rec) {
            assert_eq!(code(&o), 2, "{mode:o}: {}", stderr(&o));
            assert_eq!(std::fs::read(&mine).unwrap(), b"root's");
            assert_eq!(std::fs::metadata(&mine).unwrap().uid(), 0);
        }
        assert!(
            names_with(&d, ".tmp").is_empty(),
            "{:?}",
            names_with(&d, "")
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 3: SIGINT or SIGTERM while `encode -o` is writing removes its
/// temporary file; the target keeps its old content.
#[test]
fn a_signal_during_encode_output_leaves_no_temporary_file() {
    use nix::sys::signal::Signal;
    let rec = header_record();
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        let d = tmp(&format!("enc-{sig}"));
        let out = d.join("out.bin");
        std::fs::write(&out, b"old").unwrap();
        let mut c = Reap(
            Command::new(BIN)
                .args(["encode", "-o", out.to_str().unwrap()])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let mut stdin = c.0.stdin.take().unwrap();
        stdin.write_all(&rec).unwrap();
        stdin.flush().unwrap();
        assert!(
            wait_until(Duration::from_secs(20), || !names_with(&d, ".tmp")
                .is_empty()),
            "encode never created its temporary file"
        );
        signal(&c.0, sig);
        let st = exit_within(&mut c.0, Duration::from_secs(5)).map(|(code, _)| code);
        assert_eq!(st, Some(130), "{sig}");
        assert!(
            names_with(&d, ".tmp").is_empty(),
            "{sig}: {:?}",
            names_with(&d, "")
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        drop(stdin);
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// Item 3: SIGINT late in `minimize --output` (the staging folder filled,
/// not yet renamed) removes the hidden `.NAME.min-<pid>` staging folder.
#[test]
fn sigint_late_in_minimize_output_leaves_no_staging_folder() {
    let root = tmp("min-stage");
    let c = corpus(&root);
    let out = root.join("m");
    let mut child = Reap(
        Command::new(BIN)
            .args(["minimize", c.to_str().unwrap(), "--output"])
            .arg(&out)
            .env("TPB_MINIMIZE_DEBUG_PAUSE_MS", "20000")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let staged = root.join(format!(".m.min-{}/validate_header", child.0.id()));
    assert!(wait_until(Duration::from_secs(20), || std::fs::read_dir(
        &staged
    )
    .map_or(0, Iterator::count)
        == 1));
    signal(&child.0, nix::sys::signal::Signal::SIGINT);
    assert_eq!(
        exit_within(&mut child.0, Duration::from_secs(2)).map(|(code, _)| code),
        Some(130)
    );
    assert!(
        names_with(&root, ".min-").is_empty(),
        "{:?}",
        names_with(&root, "")
    );
    assert!(!out.exists());
    std::fs::remove_dir_all(&root).unwrap();
}

/// Item 4: vector files like every other input. A FIFO, a symlink to
/// /dev/zero and a file over the size cap in `corpus/vectors/` are each
/// refused before the run, named (issue 35: they were skipped with a
/// warning and the gate passed); the gate neither blocks nor reads without
/// bound (it runs under a 1 GiB address-space cap), and an endless line is
/// refused at the line cap naming the file and line.
#[test]
fn vector_files_refuse_special_files_and_stream_within_a_memory_cap() {
    let root = tmp("vectors");
    let c = corpus(&root);
    let v = c.join("vectors");
    std::fs::write(
        v.join("a.txt"),
        format!("{} header valid -\n", hexline(&valid_header())),
    )
    .unwrap();
    let r = root.join("r");
    let gate = |r: &Path| {
        let cmd = format!(
            "ulimit -v 1048576; exec {BIN} gate --quiet --threads 1 --cases 50 --targets \
             validate_header --corpus {} --report-dir {}",
            c.display(),
            r.display()
        );
        let mut child = Reap(
            Command::new("sh")
                .args(["-c", &cmd])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let st = exit_within(&mut child.0, Duration::from_secs(60)).map(|(code, _)| code);
        let mut e = String::new();
        if st.is_some() {
            use std::io::Read;
            let _ = child.0.stderr.take().unwrap().read_to_string(&mut e);
        }
        (st, e)
    };
    let plant = |what: &str| match what {
        "fifo" => common::mkfifo(&v.join("fifo")),
        "zero" => symlink("/dev/zero", v.join("zero")).unwrap(),
        // 3 GiB, sparse.
        _ => std::fs::File::create(v.join("big"))
            .unwrap()
            .set_len(3 << 30)
            .unwrap(),
    };
    for (what, says) in [
        ("fifo", "fifo: FIFO, not a regular file"),
        (
            "zero",
            "zero: device, not a regular file (through a symlink)",
        ),
        (
            "big",
            "big: 3221225472 bytes, over the cap of 16777216 bytes",
        ),
    ] {
        plant(what);
        let (st, e) = gate(&r);
        assert_eq!(
            st,
            Some(2),
            "{what}: the gate blocked or did not refuse: {e}"
        );
        assert!(e.contains(says), "{what}: {e}");
        assert!(!r.exists(), "{what}: a refused gate writes no report");
        std::fs::remove_file(v.join(what)).unwrap();
    }
    let (st, e) = gate(&r);
    assert_eq!(st, Some(0), "{e}");
    // A line without end, under the file cap: refused at the line cap.
    std::fs::write(v.join("long"), vec![b'0'; 3 << 20]).unwrap();
    let (st, e) = gate(&root.join("r2"));
    assert_eq!(st, Some(2), "{e}");
    assert!(e.contains("long:1: line longer than"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}
