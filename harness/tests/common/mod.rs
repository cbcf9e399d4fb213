//! The one set of helpers the harness integration tests share: where the
//! repository and the binary are, fresh scratch folders, running
//! `tpbconform` (with or without stdin), exit codes and captured text, and
//! child processes that never outlive a failing test.
//!
//! A test file declares `mod common;` and imports what it uses; fixtures of
//! one area live beside it (`subjects/`, `report_support/`, `images/`).
#![allow(dead_code)]

pub mod browser;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `tpbconform` binary under test (also the `lib:` worker).
pub const BIN: &str = env!("CARGO_BIN_EXE_tpbconform");

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness/ has a parent")
        .to_path_buf()
}

/// The repository's `corpus/`.
pub fn repo_corpus() -> PathBuf {
    repo_root().join("corpus")
}

/// A fresh, empty scratch folder `tpb-<test>-<pid>-<name>` under the temp
/// dir (`test` keeps test binaries running in parallel apart).
pub fn tmp(test: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tpb-{test}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch folder");
    d
}

/// A new folder `parent/name` (and any missing parents).
pub fn mkdir(parent: &Path, name: &str) -> PathBuf {
    let d = parent.join(name);
    std::fs::create_dir_all(&d).expect("create folder");
    d
}

/// Runs `tpbconform args` with stdin closed, in the current directory.
pub fn tpb(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tpbconform")
}

/// Runs `tpbconform gate args --corpus corpus --report-dir report` with stdin closed.
pub fn gate_over(args: &[&str], corpus: &Path, report: &Path) -> Output {
    let mut all = vec!["gate"];
    all.extend(args);
    all.extend(["--corpus", corpus.to_str().expect("UTF-8 path")]);
    all.extend(["--report-dir", report.to_str().expect("UTF-8 path")]);
    tpb(&all)
}

/// Asserts `o` (a gate or merge writing `report`) exited with `want`, its
/// stderr shown otherwise; the report's summary.md.
pub fn summary_of(o: &Output, want: i32, report: &Path) -> String {
    assert_eq!(code(o), want, "{}", stderr(o));
    std::fs::read_to_string(report.join("summary.md")).expect("summary.md")
}

/// Makes a FIFO at `path` (`mkfifo`).
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// The records of `report/divergences.jsonl`, one JSON value a line (blank
/// lines skipped).
pub fn divergences(report: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(report.join("divergences.jsonl"))
        .expect("read divergences.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The strings of the JSON array `v`: each item, or each item's field `key`.
pub fn strs<'a>(v: &'a serde_json::Value, key: Option<&str>) -> Vec<&'a str> {
    v.as_array()
        .expect("a JSON array")
        .iter()
        .map(|x| key.map_or(x, |k| &x[k]).as_str().expect("a JSON string"))
        .collect()
}

/// Starts `tpbconform args` with the given standard input, output and error.
pub fn start<S: AsRef<std::ffi::OsStr>>(
    args: &[S],
    stdin: Stdio,
    stdout: Stdio,
    stderr: Stdio,
) -> Child {
    Command::new(BIN)
        .args(args)
        .stdin(stdin)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .expect("spawn tpbconform")
}

/// Runs `tpbconform args` with stdin closed, in `cwd`.
pub fn tpb_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(cwd)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run tpbconform")
}

/// `sh -c LINE` in `cwd` (a command line as a report quotes it), the binary
/// under test standing in for `tpbconform`.
pub fn sh_in(cwd: &Path, line: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(line.replacen("tpbconform", BIN, 1))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs `tpbconform args` with `stdin` on its standard input (written from
/// a thread, so a large input cannot deadlock against a full stdout). A
/// command that exits without reading all of it closes the pipe: that is
/// not an error; any other write error is.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tpbconform");
    let mut pipe = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&data));
    let o = child.wait_with_output().expect("wait");
    if let Err(e) = writer.join().expect("stdin writer") {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    o
}

/// The exit code; -1 when a signal ended the process.
pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// The command was refused (exit 2) with a message that says `says`.
pub fn refused(o: &Output, says: &str) {
    assert_eq!(code(o), 2, "{}", stderr(o));
    assert!(stderr(o).contains(says), "{}", stderr(o));
}

/// Bytes as text (lossy).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Stdout as text.
pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// Stderr as text.
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// Lower-case hex of `b`, no separators.
pub fn hexline(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A bundle that is zero but for the `(offset, value)` pairs.
pub fn bundle_with(set: &[(usize, u8)]) -> [u8; 64] {
    let mut b = [0u8; 64];
    for &(at, v) in set {
        b[at] = v;
    }
    b
}

/// The smallest valid header bundle (SPEC §3: opcode 0x85, version 0x10,
/// everything else zero).
pub fn valid_header() -> [u8; 64] {
    let mut h = [0u8; 64];
    h[0] = 0x85;
    h[1] = 0x10;
    h
}

/// Kills and reaps a child on drop, so a failing test leaves no process.
pub struct Reap(pub Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Sends `sig` to the child (it may already have exited).
pub fn signal(c: &Child, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(c.id()).expect("pid fits i32"));
    let _ = nix::sys::signal::kill(pid, sig);
}

/// Waits up to `limit` for the child to exit: its exit code (-1 for a
/// signal) and how long it took.
pub fn exit_within(c: &mut Child, limit: Duration) -> Option<(i32, Duration)> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some(s) = c.try_wait().expect("try_wait") {
            return Some((s.code().unwrap_or(-1), t0.elapsed()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

/// Polls `f` every 10 ms for up to `limit`; whether it became true.
pub fn wait_until(limit: Duration, f: impl Fn() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Copies a folder tree (regular files and folders).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy");
    for e in std::fs::read_dir(from).expect("read folder").flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy file");
        }
    }
}

/// Writes `data` to `dir/name`; the path as a string (a CLI argument).
pub fn write_file(dir: &Path, name: &str, data: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, data).expect("write file");
    p.to_string_lossy().into_owned()
}

/// Fails when stderr shows a panic or a backtrace.
pub fn no_panic(o: &Output) {
    let e = stderr(o);
    assert!(
        !e.contains("panicked") && !e.contains("backtrace"),
        "panic/backtrace in stderr: {e}"
    );
}
