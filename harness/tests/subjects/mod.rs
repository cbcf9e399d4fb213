//! Support for the tests that drive external subjects: paths of the example
//! and misbehaving subjects, and building a C subject into a shared library
//! with the system C compiler (found by the `cc` crate).
#![allow(dead_code)]

use crate::common::{repo_root, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tpbconform::external::Supervisor;
use tpbconform::subjects::Fault;

/// Why `s` gave the subject up as a whole, else on its first operation.
pub fn given_up(s: &Supervisor) -> Option<&str> {
    (s.given_up_whole()).or_else(|| s.given_up_ops().next().map(|(_, why)| why))
}

/// A transport's fault by class, `not sent` apart from `crash` (the judge reads both as a crash).
pub fn class_of(f: &Fault) -> &'static str {
    match f {
        Fault::Unsupported => "unsupported",
        Fault::Crash(_) => "crash",
        Fault::Timeout(_) => "timeout",
        Fault::Protocol(_) => "protocol",
        Fault::Harness(_) => "harness",
        Fault::NotSent(_) => "not sent",
    }
}

/// `examples/subjects/<name>`.
pub fn example(name: &str) -> PathBuf {
    repo_root().join("examples/subjects").join(name)
}

/// `harness/tests/subjects/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("harness/tests/subjects").join(name)
}

/// A small `gate` of `cases` cases on `targets` with `subject`, in the
/// repository root, its report in a fresh `dir/report-N`: the output and
/// that folder.
pub fn gate_with(
    dir: &Path,
    subject: &str,
    targets: &str,
    cases: &str,
    extra: &[&str],
) -> (Output, PathBuf) {
    let report = dir.join(format!("report-{}", dir.read_dir().unwrap().count()));
    let o = Command::new(BIN)
        .current_dir(repo_root())
        .args(["gate", "--quiet", "--cases", cases, "--targets", targets])
        .args(["--subject", subject])
        .arg("--report-dir")
        .arg(&report)
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (o, report)
}

/// `dir/tiny_<name>.py`: a Python subject of every generation whose hello
/// declares `ops` (a Python list) and that answers every other request
/// with `answer` (a Python expression over the request `req`).
pub fn tiny_py(dir: &Path, name: &str, ops: &str, answer: &str) -> PathBuf {
    let p = dir.join(format!("tiny_{name}.py"));
    std::fs::write(
        &p,
        format!(
            "import json, sys\n\
             for line in sys.stdin:\n\
             \x20   req = json.loads(line)\n\
             \x20   if req['op'] == 'hello':\n\
             \x20       out = {{'protocol': 1, 'name': 'tiny-{name}', 'ops': {ops}}}\n\
             \x20   else:\n\
             \x20       out = {answer}\n\
             \x20   print(json.dumps(out), flush=True)\n"
        ),
    )
    .unwrap();
    p
}

/// `lib:` spec of `misbehave.c` built into `dir` with `defines`
/// (`MISBEHAVE_CRASH`, `_HANG`, `_ERROR`, `_ALWAYS`, `MISBEHAVE_AT=off`
/// with `MISBEHAVE_IS=value`).
pub fn misbehave_lib(dir: &Path, stem: &str, defines: &[&str]) -> String {
    let lib = build_c(dir, stem, &fixture("misbehave.c"), defines);
    format!("lib:{}", lib.display())
}

/// `cmd:python3 <example custom_op.py> <args>`.
pub fn python_spec(args: &str) -> String {
    format!("cmd:python3 {} {args}", example("custom_op.py").display())
        .trim_end()
        .to_string()
}

/// `cmd:python3 <misbehave.py> <mode>`.
pub fn misbehave_py(mode: &str) -> String {
    format!("cmd:python3 {} {mode}", fixture("misbehave.py").display())
}

/// Builds `src` into `<dir>/<stem>.so` with the given `-D` defines.
pub fn build_c(dir: &Path, stem: &str, src: &Path, defines: &[&str]) -> PathBuf {
    let triple = format!(
        "{}-unknown-{}-gnu",
        std::env::consts::ARCH,
        std::env::consts::OS
    );
    let mut b = cc::Build::new();
    b.target(&triple)
        .host(&triple)
        .opt_level(1)
        .cargo_metadata(false)
        .emit_rerun_if_env_changed(false)
        .pic(true)
        .warnings(true)
        .extra_warnings(true)
        .include(repo_root().join("include"));
    for d in defines {
        // `NAME` or `NAME=VALUE`.
        match d.split_once('=') {
            Some((n, v)) => b.define(n, Some(v)),
            None => b.define(d, None),
        };
    }
    let out = dir.join(format!("{stem}.so"));
    let mut cmd: Command = b.get_compiler().to_command();
    cmd.arg("-shared")
        .arg("-Werror")
        .arg("-o")
        .arg(&out)
        .arg(src);
    let o = cmd.output().expect("run the C compiler");
    assert!(
        o.status.success(),
        "C compiler failed: {cmd:?}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Both examples as subject specs: the C library (built into `dir`) and the
/// Python command.
pub fn both_examples(dir: &Path) -> [String; 2] {
    [lib_spec(&c_example(dir, false)), python_spec("")]
}

/// The `lib:` subject spec of the library at `p`.
pub fn lib_spec(p: &Path) -> String {
    format!("lib:{}", p.display())
}

/// The example C subject built into `dir` (planted bug with `planted`).
pub fn c_example(dir: &Path, planted: bool) -> PathBuf {
    let defines: &[&str] = if planted { &["TPB_PLANTED_BUG"] } else { &[] };
    build_c(
        dir,
        if planted {
            "custom_op_planted"
        } else {
            "custom_op"
        },
        &example("custom_op.c"),
        defines,
    )
}

/// `cmd:python3 <hostile.py> <mode>` (faults on every request, see the
/// script); `pids` (if given) collects the pids of the children it forks.
pub fn hostile_py(mode: &str, pids: Option<&Path>) -> String {
    let env = pids.map_or(String::new(), |p| format!("HOSTILE_PIDS={} ", p.display()));
    format!(
        "cmd:{env}python3 {} {mode}",
        fixture("hostile.py").display()
    )
}

/// True while process `pid` exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The pids a hostile subject wrote to `path` (one per line).
pub fn pids_in(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Pids of running processes whose command line contains `mark`.
pub fn processes_with(mark: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me && alive(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(mark))
        })
        .collect()
}

/// A `cmd:` subject in plain `sh` (starts in a millisecond) that answers
/// the hello, then kills itself with SIGSEGV on its first request; with
/// `pids`, it first starts a `setsid` child that keeps its stdout open and
/// writes that child's pid there. `mark` goes into its command line.
pub fn sh_segv(mark: &str, pids: Option<&Path>) -> String {
    let hello = r#"{"protocol":1,"name":"segv","ops":["validate_header","validate_payload"]}"#;
    let child = pids.map_or(String::new(), |p| {
        format!("setsid sleep 3600 & echo $! >> {}; ", p.display())
    });
    format!("cmd:: {mark}; read h; echo '{hello}'; {child}read r; kill -SEGV $$")
}
