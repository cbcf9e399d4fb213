//! Every command of README.md and docs/*.md runs as written (issue 21 item 1).
//!
//! The test extracts every fenced `sh` block of README.md and of each
//! docs/*.md file and runs it, one `sh` per block (so a block's variables,
//! e.g. `S=$(mktemp -d)`, carry over to its later lines), in a scratch copy of
//! the repository (its tracked and untracked, not ignored files) with the
//! `tpbconform` this test was built with first on PATH (the README installs
//! it with `cargo install --path harness`) and TMPDIR inside the scratch
//! folder. Each command's exit code is checked: a trailing `# exit N`
//! comment states it, otherwise it is 0; a trailing `# prints "TEXT"` says
//! its stdout has TEXT. Afterwards nothing under the copy's `corpus/` may
//! have changed (no command of the docs says it writes there).
//!
//! Commands that cannot run here as written are listed in [`EXCEPTIONS`],
//! each with the reason and either what runs instead or why nothing does;
//! an entry whose command is no longer in its file fails the test, so the
//! list cannot go stale. Long gates run with fewer cases (the same code);
//! cargo-fuzz and nightly are not on a fresh machine, so fuzz runs are
//! listed, not run.

mod common;

use common::{repo_root, BIN};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What happens to a documented command instead of running it as written.
#[derive(Clone, Copy, Debug)]
enum Instead {
    /// Not run, for this reason.
    Skip(&'static str),
    /// This command runs in its place, for this reason.
    Run(&'static str, &'static str),
}

/// Fewer cases for the gate: about a second in a debug build instead of
/// minutes (the default is 5,000,000 cases per target, ~1 min in release).
const FEW: &str = "--cases 2000 --sync-cases 200 --lowering-cases 200";

const LONG_GATE: &str = "the default gate runs 5,000,000 cases per target (about a minute in \
     release, far longer in this debug build); the same command with fewer cases";

/// `(file, command as written, what happens instead)`.
const EXCEPTIONS: &[(&str, &str, Instead)] = &[
    (
        "README.md",
        "cargo install --locked --path harness",
        Instead::Skip(
            "installs into ~/.cargo/bin; the test puts the tpbconform it built first on PATH",
        ),
    ),
    (
        "README.md",
        "tpbconform gate",
        Instead::Run(
            "tpbconform gate --cases 2000 --sync-cases 200 --lowering-cases 200",
            LONG_GATE,
        ),
    ),
    (
        "README.md",
        "cargo test --workspace",
        Instead::Skip("the command that runs this test"),
    ),
    (
        "README.md",
        "tpbconform gate --arch v4",
        Instead::Run(
            "tpbconform gate --arch v4 --cases 2000 --sync-cases 200 --lowering-cases 200",
            LONG_GATE,
        ),
    ),
    (
        "README.md",
        "tpbconform gate --cases 10000000",
        Instead::Run(
            "tpbconform gate --cases 2000 --sync-cases 200 --lowering-cases 200",
            "10,000,000 cases per target: the throughput run; the same command with fewer cases",
        ),
    ),
    (
        "README.md",
        "tpbconform gate --subject lib:\"$S/libcustom_op.so\" --subject cmd:\"python3 \
         examples/subjects/custom_op.py\"",
        Instead::Run(
            "tpbconform gate --subject lib:\"$S/libcustom_op.so\" --subject cmd:\"python3 \
             examples/subjects/custom_op.py\" --cases 2000 --sync-cases 200 --lowering-cases 200",
            LONG_GATE,
        ),
    ),
    (
        "README.md",
        "cargo build --release -p tpb-capi",
        Instead::Run(
            "cargo build -q -p tpb-capi --manifest-path \"$TPB_REPO/Cargo.toml\" && mkdir -p \
             target/release && cp \"$(dirname \"$(command -v tpbconform)\")/libtpb_reference.so\" \
             target/release/",
            "a release build of the workspace from scratch takes minutes; the same library is \
             built (debug) in the repository this test runs from, next to the tpbconform on \
             PATH, and put where the documented command writes it",
        ),
    ),
    (
        "README.md",
        "cargo install cargo-fuzz",
        Instead::Skip("installs a cargo subcommand; cargo-fuzz is not on a fresh machine"),
    ),
    (
        "README.md",
        "cargo fuzz run -s none validate_header \"$S\" corpus/validate_header -- \
         -dict=fuzz/dict/validate_header.dict -max_total_time=60",
        Instead::Skip("needs cargo-fuzz (not on a fresh machine) and fuzzes for 60 s"),
    ),
    (
        "README.md",
        "cargo +nightly fuzz run validate_header \"$S\" corpus/validate_header -- \
         -dict=fuzz/dict/validate_header.dict -max_total_time=60",
        Instead::Skip("needs cargo-fuzz and a nightly toolchain (AddressSanitizer)"),
    ),
    (
        "README.md",
        "S=$(mktemp -d) && for i in 0 1 2 3; do tpbconform gate --shard $i/4 --report-dir \
         \"$S/shard$i\"; done",
        Instead::Run(
            "S=$(mktemp -d) && for i in 0 1 2 3; do tpbconform gate --shard $i/4 --report-dir \
             \"$S/shard$i\" --cases 2000 --sync-cases 200 --lowering-cases 200; done",
            "four default gates; the same shards with fewer cases (report merge then runs as \
             written)",
        ),
    ),
    (
        "docs/subject-protocol.md",
        "tpbconform gate --subject cmd:\"python3 examples/subjects/custom_op.py\"",
        Instead::Run(
            "tpbconform gate --subject cmd:\"python3 examples/subjects/custom_op.py\" --cases \
             2000 --sync-cases 200 --lowering-cases 200",
            LONG_GATE,
        ),
    ),
    (
        "docs/subject-protocol.md",
        "tpbconform gate --subject cmd:\"python3 examples/subjects/custom_op.py --batch64\"",
        Instead::Run(
            "tpbconform gate --subject cmd:\"python3 examples/subjects/custom_op.py --batch64\" \
             --cases 2000 --sync-cases 200 --lowering-cases 200",
            LONG_GATE,
        ),
    ),
];

/// One command of a fenced `sh` block.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DocCommand {
    /// 1-based line in its file.
    line: usize,
    /// The command (continuation lines joined), without its trailing comment.
    text: String,
    /// `# exit N`, else 0.
    exit: i32,
    /// `# prints "TEXT"`.
    prints: Vec<String>,
}

/// The byte index of the `#` that starts a trailing comment (a `#` after
/// whitespace, outside quotes), if any.
fn comment_start(s: &str) -> Option<usize> {
    let (mut single, mut double, mut prev_space) = (false, false, true);
    for (i, c) in s.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_space => return Some(i),
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    None
}

/// Parses the annotations of a trailing comment.
fn annotations(comment: &str) -> (i32, Vec<String>) {
    let mut exit = 0;
    if let Some(i) = comment.find("exit ") {
        let digits: String = comment[i + 5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(n) = digits.parse() {
            exit = n;
        }
    }
    let mut prints = Vec::new();
    let mut rest = comment;
    while let Some(i) = rest.find("prints \"") {
        let after = &rest[i + 8..];
        let Some(j) = after.find('"') else { break };
        prints.push(after[..j].to_string());
        rest = &after[j + 1..];
    }
    (exit, prints)
}

/// The fenced `sh` blocks of a Markdown text, each as its commands.
fn sh_blocks(markdown: &str) -> Vec<Vec<DocCommand>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<DocCommand>> = None;
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in markdown.lines().enumerate() {
        let line = raw.trim_end();
        let fence = line.trim_start();
        if current.is_none() {
            if matches!(fence, "```sh" | "```bash" | "```shell") {
                current = Some(Vec::new());
            }
            continue;
        }
        if fence.starts_with("```") {
            blocks.extend(current.take());
            continue;
        }
        let (start, mut text) = pending.take().unwrap_or((n + 1, String::new()));
        if text.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        if let Some(cont) = line.strip_suffix('\\') {
            text.push_str(cont);
            pending = Some((start, text));
            continue;
        }
        text.push_str(line);
        let (cmd, comment) = match comment_start(&text) {
            Some(i) => (text[..i].trim().to_string(), text[i..].to_string()),
            None => (text.trim().to_string(), String::new()),
        };
        let (exit, prints) = annotations(&comment);
        if let Some(b) = current.as_mut() {
            b.push(DocCommand {
                line: start,
                text: cmd,
                exit,
                prints,
            });
        }
    }
    blocks
}

/// README.md and every docs/*.md, sorted, as paths relative to the root.
fn doc_files(root: &Path) -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    docs.insert(0, "README.md".to_string());
    docs
}

/// Every documented command: `(file, block number, command)`.
fn doc_commands(root: &Path) -> Vec<(String, usize, DocCommand)> {
    let mut out = Vec::new();
    for f in doc_files(root) {
        let text = std::fs::read_to_string(root.join(&f)).expect("read doc");
        for (b, block) in sh_blocks(&text).into_iter().enumerate() {
            for c in block {
                out.push((f.clone(), b, c));
            }
        }
    }
    out
}

/// The files of a fresh clone: tracked plus untracked, not ignored
/// (`git ls-files`); without git, every file outside `target/` and `.git`.
fn repo_files(root: &Path) -> Vec<PathBuf> {
    let git = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output();
    if let Ok(o) = git {
        if o.status.success() && !o.stdout.is_empty() {
            return o
                .stdout
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
                .filter(|p| std::fs::symlink_metadata(root.join(p)).is_ok())
                .collect();
        }
    }
    fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(root.join(rel))
            .expect("read_dir")
            .flatten()
        {
            let name = e.file_name();
            if name == "target" || name == ".git" {
                continue;
            }
            let r = rel.join(&name);
            let md = std::fs::symlink_metadata(root.join(&r)).expect("metadata");
            if md.is_dir() {
                walk(root, &r, out);
            } else {
                out.push(r);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, Path::new(""), &mut out);
    out
}

/// Copies the repository's files into `dst` (symlinks stay symlinks).
fn scratch_copy(root: &Path, dst: &Path) {
    for rel in repo_files(root) {
        let (from, to) = (root.join(&rel), dst.join(&rel));
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        let md = std::fs::symlink_metadata(&from).expect("metadata");
        if md.file_type().is_symlink() {
            let target = std::fs::read_link(&from).expect("read_link");
            std::os::unix::fs::symlink(target, &to).expect("symlink");
        } else if md.is_file() {
            std::fs::copy(&from, &to).expect("copy");
        }
    }
}

/// Every file under `dir` (recursive, symlinks not followed) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            let md = std::fs::symlink_metadata(&p).expect("metadata");
            let rel = p.strip_prefix(base).expect("prefix").to_path_buf();
            if md.is_dir() {
                walk(base, &p, out);
            } else if md.file_type().is_symlink() {
                let t = std::fs::read_link(&p).expect("read_link");
                out.insert(rel, t.to_string_lossy().as_bytes().to_vec());
            } else {
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Runs `script` with `sh` in `cwd` (its own process group, killed after
/// `limit`); returns whether it ended in time.
fn run_script(script: &str, cwd: &Path, tmp: &Path, limit: Duration) -> bool {
    use std::os::unix::process::CommandExt;
    let bin_dir = Path::new(BIN).parent().expect("bin dir");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("PATH", path)
        .env("TMPDIR", tmp)
        .env("NO_COLOR", "1")
        // The repository this test runs from (its target folder may be
        // elsewhere: CARGO_TARGET_DIR).
        .env("TPB_REPO", Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn sh");
    let t0 = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return true;
        }
        if t0.elapsed() > limit {
            // The process group this test started (sh and every command of it).
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A shell word for `s` (single-quoted).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn every_exception_names_a_command_still_in_the_docs() {
    let root = repo_root();
    let cmds = doc_commands(&root);
    for (file, cmd, instead) in EXCEPTIONS {
        assert!(
            cmds.iter().any(|(f, _, c)| f == file && c.text == *cmd),
            "EXCEPTIONS lists `{cmd}` in {file} ({instead:?}), but {file} has no such command: \
             update the list"
        );
        if let Instead::Run(r, _) = instead {
            assert!(
                r.contains(FEW) || !r.contains("gate"),
                "a gate substitute runs with {FEW}: {r}"
            );
        }
    }
}

#[test]
fn annotations_are_read_from_trailing_comments() {
    let md = "text\n```sh\n# a comment line\ntpbconform check a.bin   # exit 1: why\n\
              tpbconform x --y \\\n  z   # prints \"#7 ok\"\ntpbconform subject-check \
              cmd:\"python3 a # b.py\"\n```\n```python\nnot = 'sh'\n```\n";
    let blocks = sh_blocks(md);
    assert_eq!(blocks.len(), 1);
    let b = &blocks[0];
    assert_eq!(b.len(), 3, "{b:?}");
    assert_eq!(
        (b[0].line, b[0].text.as_str(), b[0].exit),
        (4, "tpbconform check a.bin", 1)
    );
    assert_eq!((b[1].line, b[1].text.as_str()), (5, "tpbconform x --y   z"));
    assert_eq!(
        (b[1].exit, b[1].prints.clone()),
        (0, vec!["#7 ok".to_string()])
    );
    assert_eq!(
        b[2].text,
        "tpbconform subject-check cmd:\"python3 a # b.py\""
    );
}

#[test]
fn every_documented_command_runs_as_written() {
    let root = repo_root();
    let base = common::tmp("readme", "docs");
    // The scratch copy is about 1 GB: removed however the test ends, a failure included (a
    // failed run left it in the temp folder and filled the disk).
    struct RemoveOnDrop(std::path::PathBuf);
    impl Drop for RemoveOnDrop {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _scratch = RemoveOnDrop(base.clone());
    let (repo, tmp, out) = (base.join("repo"), base.join("tmp"), base.join("out"));
    for d in [&repo, &tmp, &out] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    scratch_copy(&root, &repo);
    let corpus_before = snapshot(&repo.join("corpus"));
    assert!(!corpus_before.is_empty(), "the scratch copy has a corpus");
    let mut by_block: BTreeMap<(String, usize), Vec<DocCommand>> = BTreeMap::new();
    for (f, b, c) in doc_commands(&root) {
        by_block.entry((f, b)).or_default().push(c);
    }
    assert!(by_block.len() >= 5, "found the README's sh blocks");
    let mut failures = Vec::new();
    let mut ran = 0;
    for ((file, b), cmds) in &by_block {
        let mut script = String::new();
        let mut planned = Vec::new();
        for (i, c) in cmds.iter().enumerate() {
            let instead = EXCEPTIONS
                .iter()
                .find(|(f, cmd, _)| f == file && *cmd == c.text)
                .map(|e| e.2);
            let run = match instead {
                Some(Instead::Skip(why)) => {
                    eprintln!("not run: {file}:{} `{}`: {why}", c.line, c.text);
                    continue;
                }
                Some(Instead::Run(r, why)) => {
                    eprintln!("run as `{r}`: {file}:{} `{}`: {why}", c.line, c.text);
                    r.to_string()
                }
                None => c.text.clone(),
            };
            let tag = format!("{}-{b}-{i}", file.replace('/', "_"));
            let (o, e) = (
                out.join(format!("{tag}.out")),
                out.join(format!("{tag}.err")),
            );
            let rc = out.join(format!("{tag}.rc"));
            script.push_str(&format!(
                "{{ {run}\n}} >{} 2>{} </dev/null; echo $? >{}\n",
                quote(&o.to_string_lossy()),
                quote(&e.to_string_lossy()),
                quote(&rc.to_string_lossy())
            ));
            planned.push((c.clone(), run, o, e, rc));
        }
        if planned.is_empty() {
            continue;
        }
        let in_time = run_script(&script, &repo, &tmp, Duration::from_secs(600));
        for (c, run, o, e, rc) in planned {
            let at = format!("{file}:{} `{}`", c.line, c.text);
            let shown = if run == c.text {
                String::new()
            } else {
                format!(" (run as `{run}`)")
            };
            let Ok(code) = std::fs::read_to_string(&rc) else {
                failures.push(format!(
                    "{at}{shown}: did not finish{}",
                    if in_time {
                        ""
                    } else {
                        " (block killed after 600 s)"
                    }
                ));
                continue;
            };
            ran += 1;
            let code: i32 = code.trim().parse().unwrap_or(-1);
            let stdout =
                String::from_utf8_lossy(&std::fs::read(&o).unwrap_or_default()).into_owned();
            let stderr =
                String::from_utf8_lossy(&std::fs::read(&e).unwrap_or_default()).into_owned();
            let tail = |s: &str| s.lines().rev().take(6).collect::<Vec<_>>().join(" | ");
            if code != c.exit {
                failures.push(format!(
                    "{at}{shown}: exit {code}, the docs say {}; stderr: {}; stdout: {}",
                    c.exit,
                    tail(&stderr),
                    tail(&stdout)
                ));
            }
            for p in &c.prints {
                if !stdout.contains(p.as_str()) {
                    failures.push(format!(
                        "{at}{shown}: stdout lacks \"{p}\" (the docs say it prints it): {}",
                        tail(&stdout)
                    ));
                }
            }
            for s in [&stdout, &stderr] {
                if s.contains("panicked") || s.contains("internal error") {
                    failures.push(format!("{at}{shown}: panic: {}", tail(s)));
                }
            }
        }
    }
    let corpus_after = snapshot(&repo.join("corpus"));
    for (p, data) in &corpus_before {
        match corpus_after.get(p) {
            None => failures.push(format!("corpus/{} was deleted", p.display())),
            Some(d) if d != data => failures.push(format!("corpus/{} was changed", p.display())),
            _ => {}
        }
    }
    for p in corpus_after
        .keys()
        .filter(|p| !corpus_before.contains_key(*p))
    {
        failures.push(format!("corpus/{} was created", p.display()));
    }
    assert!(ran >= 20, "ran {ran} documented commands");
    assert!(
        failures.is_empty(),
        "{} documented command(s) do not run as written:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// Runs the binary in `cwd`.
fn tool(cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run tpbconform")
}

#[test]
fn samples_are_what_the_tool_makes() {
    let root = repo_root();
    let s = root.join("examples/samples");
    // Every bundle of bundles.hex is a vector line of the file its comment names.
    let hex = std::fs::read_to_string(s.join("bundles.hex")).expect("bundles.hex");
    let mut bundles = 0;
    for line in hex
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let (bundle, comment) = line.split_once('#').expect("a comment naming the vector");
        let file = comment.trim().split(':').next().expect("file:");
        let vectors = std::fs::read_to_string(root.join("corpus/vectors").join(file))
            .unwrap_or_else(|e| panic!("{line}: corpus/vectors/{file}: {e}"));
        assert!(
            vectors
                .lines()
                .any(|v| v.split_whitespace().next() == Some(bundle.trim())),
            "{line}: not a bundle of corpus/vectors/{file}"
        );
        bundles += 1;
    }
    assert_eq!(bundles, 10);
    let code = |o: &std::process::Output| o.status.code().expect("exit code");
    // fields.jsonl = decode of bundles.hex (two error records: exit 1).
    let d = tool(&s, &["decode", "--arch", "v3", "--hex", "bundles.hex"]);
    assert_eq!(code(&d), 1, "{}", String::from_utf8_lossy(&d.stderr));
    let fields = std::fs::read(s.join("fields.jsonl")).expect("fields.jsonl");
    assert_eq!(
        d.stdout, fields,
        "fields.jsonl is not decode's output: remake it"
    );
    // bundles.bin = encode of fields.jsonl (the error records skipped: exit 1).
    let e = tool(&s, &["encode", "--arch", "v3", "fields.jsonl"]);
    assert_eq!(code(&e), 1);
    let bin = std::fs::read(s.join("bundles.bin")).expect("bundles.bin");
    assert_eq!(
        e.stdout, bin,
        "bundles.bin is not encode's output: remake it"
    );
    assert_eq!(bin.len(), 8 * 64);
    // get_sequence_bounds.jsonl = the 0xBE line of fields.jsonl.
    let fields = String::from_utf8(fields).expect("utf-8");
    let be: Vec<&str> = fields.lines().filter(|l| l.contains("\"0xBE\"")).collect();
    let gsb = std::fs::read_to_string(s.join("get_sequence_bounds.jsonl")).expect("gsb");
    assert_eq!(gsb.lines().collect::<Vec<_>>(), be);
    // Under v2 two of its records are invalid; under v3 none is, but loose records are not a
    // well-formed stream (SPEC §5.3), as README says.
    let v2 = tool(&s, &["check", "bundles.bin"]);
    assert_eq!(code(&v2), 1);
    let v3 = tool(&s, &["check", "--arch", "v3", "bundles.bin"]);
    assert_eq!(code(&v3), 1);
    let v3 = String::from_utf8_lossy(&v3.stdout).into_owned();
    assert!(!v3.contains(": invalid:"), "{v3}");
    assert!(
        v3.contains(": 8 valid, 0 valid (skeleton; body not modelled), 0 invalid, 3 stream errors"),
        "{v3}"
    );
}
