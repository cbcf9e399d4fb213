//! Regression tests of issue 11 for `tpbconform gate`: the report folder is
//! claimed before any case runs. Each test names the promise of
//! docs/guarantees.md it holds.

mod common;
mod subjects;

use common::{code, stderr, strs, wait_until, Reap, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(name: &str) -> PathBuf {
    common::tmp("fc-gate", name)
}

fn gate(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("gate")
        .args(["--threads", "1", "--quiet"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A `cases`-case gate of `targets` without the corpus, reporting to `report`,
/// with `extra` arguments.
fn generated(cases: &str, targets: &str, report: &Path, extra: &[&str]) -> Command {
    let mut c = gate(&["--no-corpus", "--cases", cases, "--targets", targets]);
    c.arg("--report-dir").arg(report).args(extra);
    c
}

/// Guarantee G7: the report folder is claimed before any case runs, so a
/// second gate on the same `--report-dir` is refused at once (exit 2), not
/// after its whole run.
#[test]
fn report_dir_is_claimed_before_the_run() {
    let root = tmp("claim");
    let report = root.join("reports/shared");
    let long = [
        "--cases",
        "100000000",
        "--targets",
        "validate_header",
        "--no-corpus",
        "--report-dir",
        report.to_str().unwrap(),
    ];
    let _a = Reap(gate(&long).spawn().unwrap());
    assert!(
        wait_until(Duration::from_secs(20), || report.exists()),
        "report folder not claimed at start"
    );
    let t0 = Instant::now();
    let b = gate(&long).output().unwrap();
    assert_eq!(code(&b), 2, "{}", stderr(&b));
    assert!(stderr(&b).contains("exists already"), "{}", stderr(&b));
    assert!(t0.elapsed() < Duration::from_secs(20), "refused only late");
    drop(_a);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G8: stale-staging cleanup removes only staging folders that
/// tpbconform provably made; a look-alike folder of a dead pid is kept.
#[test]
fn stale_cleanup_keeps_folders_it_did_not_make() {
    let root = tmp("stale");
    let reports = root.join("reports");
    // pid_max is at most 2^22 on Linux: this pid is not running.
    let foreign = [
        reports.join(".mine.staging-4194999"),
        reports.join(".r.staging-4194999-0011223344556677"),
    ];
    for f in &foreign {
        std::fs::create_dir_all(f).unwrap();
        std::fs::write(f.join("precious"), b"data").unwrap();
    }
    let o = gate(&[
        "--cases",
        "20",
        "--targets",
        "validate_header",
        "--no-corpus",
        "--report-dir",
        reports.join("r").to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(reports.join("r/summary.md").is_file(), "{}", stderr(&o));
    for f in &foreign {
        assert!(f.join("precious").is_file(), "{} removed", f.display());
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// A copy of the real corpus reduced to what `validate_header` needs.
fn header_corpus(root: &Path) -> PathBuf {
    let c = root.join("corpus");
    std::fs::create_dir_all(c.join("validate_header")).unwrap();
    std::fs::create_dir_all(c.join("vectors")).unwrap();
    let mut h = [0u8; 64];
    h[0] = 0x85;
    h[1] = 0x10;
    std::fs::write(c.join("validate_header/canonical"), h).unwrap();
    for e in std::fs::read_dir(common::repo_corpus().join("vectors"))
        .unwrap()
        .flatten()
    {
        // The vector files (the gate ignores subfolders such as streams/).
        if e.path().is_file() {
            std::fs::copy(e.path(), c.join("vectors").join(e.file_name())).unwrap();
        }
    }
    c
}

/// A `cases`-case `validate_header` gate over `corpus`, reporting to `report`.
fn header_args<'a>(cases: &'a str, corpus: &'a Path, report: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["--cases", cases, "--targets", "validate_header"];
    args.extend(["--corpus", corpus.to_str().unwrap()]);
    args.extend(["--report-dir", report.to_str().unwrap()]);
    args
}

/// A 50-case `validate_header` gate over `corpus`, reporting to `report`.
fn quick_args<'a>(corpus: &'a Path, report: &'a Path) -> Vec<&'a str> {
    header_args("50", corpus, report)
}

fn quick(corpus: &Path, report: &Path, extra: &[&str]) -> Output {
    let mut args = quick_args(corpus, report);
    args.extend_from_slice(extra);
    gate(&args).output().unwrap()
}

/// Guarantee G1: the gate refuses (exit 2, before any case runs and without
/// a report folder) a missing or empty corpus root, a missing or empty
/// `vectors/`, or a selected target without corpus files, unless
/// `--no-corpus`.
#[test]
fn gate_refuses_a_missing_or_empty_corpus() {
    let root = tmp("nocorpus");
    let good = header_corpus(&root);
    let ok = quick(&good, &root.join("r-ok"), &[]);
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));
    let mut bad: Vec<(PathBuf, &str)> = vec![(root.join("missing"), "missing")];
    let empty = common::mkdir(&root, "empty");
    bad.push((empty, "empty"));
    for (what, mutate) in [
        ("novectors", "rm-vectors"),
        ("emptyvectors", "empty-vectors"),
        ("notarget", "rm-target"),
        ("emptytarget", "empty-target"),
    ] {
        let c = header_corpus(&root.join(what));
        match mutate {
            "rm-vectors" => std::fs::remove_dir_all(c.join("vectors")).unwrap(),
            "empty-vectors" => {
                std::fs::remove_dir_all(c.join("vectors")).unwrap();
                std::fs::create_dir_all(c.join("vectors")).unwrap();
            }
            "rm-target" => std::fs::remove_dir_all(c.join("validate_header")).unwrap(),
            _ => std::fs::remove_file(c.join("validate_header/canonical")).unwrap(),
        }
        bad.push((c, what));
    }
    for (i, (c, what)) in bad.iter().enumerate() {
        let report = root.join(format!("r{i}"));
        let o = quick(c, &report, &[]);
        assert_eq!(code(&o), 2, "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains("--no-corpus"), "{what}: {}", stderr(&o));
        assert!(!report.exists(), "{what}: report folder created");
        // --no-corpus runs the generated cases only.
        let o = quick(c, &root.join(format!("n{i}")), &["--no-corpus"]);
        assert_eq!(code(&o), 0, "{what} --no-corpus: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G2: nothing checked is never PASS: `--cases 0` and
/// `--sync-cases 0` are refused (exit 2); a selected target left with zero
/// cases (here by sharding) fails (exit 1).
#[test]
fn gate_with_zero_cases_never_passes() {
    let root = tmp("zero");
    let c = header_corpus(&root);
    for extra in [["--cases", "0"], ["--sync-cases", "0"]] {
        let mut args = vec!["--no-corpus", "--report-dir"];
        let r = root.join(extra[0].trim_start_matches('-'));
        args.push(r.to_str().unwrap());
        args.extend_from_slice(&extra);
        let o = gate(&args).output().unwrap();
        assert_eq!(code(&o), 2, "{extra:?}: {}", stderr(&o));
        assert!(!r.exists());
    }
    let shard = root.join("shard");
    let mut args = header_args("1", &c, &shard);
    args.extend(["--shard", "1/2"]);
    let o = gate(&args).output().unwrap();
    let s = common::summary_of(&o, 1, &root.join("shard"));
    assert!(
        s.contains("**FAIL**") && s.contains("ran no generated case"),
        "{s}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G3: a run cut short by `--seconds` is INCOMPLETE in
/// summary.md, junit.xml and run.json, and exits 1 unless `--allow-partial`.
#[test]
fn budget_cut_run_is_incomplete() {
    let root = tmp("incomplete");
    let c = header_corpus(&root);
    let long = |report: &Path, extra: &[&str]| {
        let mut args = vec![
            "--cases",
            "1000000000",
            "--seconds",
            "2",
            "--targets",
            "validate_header",
            "--corpus",
            c.to_str().unwrap(),
            "--report-dir",
            report.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        gate(&args).output().unwrap()
    };
    let r1 = root.join("cut");
    let o = long(&r1, &[]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    // (A budget too small to judge one case is FAIL, not INCOMPLETE: 2 s, so a loaded
    // machine still judges some.)
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("gate: INCOMPLETE"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let s = std::fs::read_to_string(r1.join("summary.md")).unwrap();
    assert!(s.contains("**INCOMPLETE**"), "{s}");
    let j = std::fs::read_to_string(r1.join("junit.xml")).unwrap();
    assert!(j.contains("type=\"incomplete\""), "{j}");
    assert!(
        j.contains("<property name=\"verdict\" value=\"INCOMPLETE\"/>"),
        "{j}"
    );
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r1.join("run.json")).unwrap()).unwrap();
    assert_eq!(m["verdict"], "INCOMPLETE");
    // S8 (issue 35): a subject's line never says `agree` for a run cut
    // short, on the console or in summary.md.
    let lib = subjects::c_example(&root, false);
    let r3 = root.join("cut-subject");
    let o = long(&r3, &["--subject", &format!("lib:{}", lib.display())]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    let s = std::fs::read_to_string(r3.join("summary.md")).unwrap();
    for text in [&out, &s] {
        let line = text
            .lines()
            .find(|l| l.contains("subject lib:"))
            .unwrap_or_else(|| panic!("no subject line: {text}"));
        assert!(
            !line.contains("agree") && line.contains("but the run was cut short"),
            "{line}"
        );
    }
    // A complete run's junit.xml says PASS and has no incomplete marker.
    let full = quick(&c, &root.join("full"), &[]);
    assert_eq!(code(&full), 0, "{}", stderr(&full));
    let j = std::fs::read_to_string(root.join("full/junit.xml")).unwrap();
    assert!(
        !j.contains("incomplete") && j.contains("value=\"PASS\""),
        "{j}"
    );
    // --allow-partial: exit 0, still INCOMPLETE in the report.
    let r2 = root.join("partial");
    let o = long(&r2, &["--allow-partial"]);
    let s = common::summary_of(&o, 0, &r2);
    assert!(s.contains("**INCOMPLETE**"), "{s}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G4: `--seconds` must be a finite number of seconds in
/// [0, 10^9]; anything else is a usage error naming the value, never a panic.
#[test]
fn bad_seconds_are_usage_errors() {
    let root = tmp("seconds");
    for v in ["inf", "1e19", "NaN", "-1", "-inf"] {
        let r = root.join("r");
        let o = gate(&[
            "--no-corpus",
            "--report-dir",
            r.to_str().unwrap(),
            &format!("--seconds={v}"),
        ])
        .output()
        .unwrap();
        assert_eq!(code(&o), 2, "{v}: {}", stderr(&o));
        assert!(stderr(&o).contains("--seconds"), "{v}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{v}: {}", stderr(&o));
        assert!(!r.exists());
    }
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G5: the plan is built lazily: `--cases u64::MAX --seconds 0.5`
/// stops in time under a 1 GiB address-space cap.
#[test]
fn huge_case_count_stops_in_time_with_bounded_memory() {
    let root = tmp("huge");
    let r = root.join("r");
    let t0 = Instant::now();
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
        .arg(BIN)
        .args([
            "gate",
            "--quiet",
            "--threads",
            "2",
            "--no-corpus",
            "--targets",
            "validate_header,alu_lut",
            "--cases",
            "18446744073709551615",
            "--seconds",
            "0.5",
            "--report-dir",
            r.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(60), "{:?}", t0.elapsed());
    let s = common::summary_of(&o, 1, &r);
    assert!(s.contains("**INCOMPLETE**"), "{s}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G6: `--targets a,b,a` runs each target once.
#[test]
fn repeated_targets_run_once() {
    let root = tmp("dup");
    let r = root.join("r");
    let o = generated("20", "alu_lut,validate_header,alu_lut", &r, &[])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.join("run.json")).unwrap()).unwrap();
    let names = strs(&m["targets"], Some("name"));
    assert_eq!(names, ["alu_lut", "validate_header"]);
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G9 (issue 35): no input is skipped quietly. Each entry the
/// gate cannot read whole — in a corpus folder it replays or in
/// `vectors/`: a FIFO, a symlink (to `/dev/zero`, to a file, to a folder,
/// a symlinked corpus folder), a file over its cap (sparse: 1 MiB + 1 for
/// a corpus file, 3 GiB for a vector file), a file the user cannot read —
/// is refused before the run: exit 2 naming it, no report folder, never
/// blocking; before, they were skipped with a warning and the gate passed.
#[test]
fn every_input_the_gate_cannot_read_whole_is_refused_before_the_run() {
    use std::os::unix::fs::{symlink, PermissionsExt};
    let root = tmp("special");
    let c = header_corpus(&root);
    let outside = common::mkdir(&root, "outside");
    std::fs::write(outside.join("x"), [0x85u8; 64]).unwrap();
    let r = root.join("r");
    // As root every file is readable: the unreadable case runs as nobody.
    let as_root = nix::unistd::geteuid().is_root();
    let run = |nobody: bool| {
        let mut cmd = if nobody {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN]);
            c
        } else {
            Command::new(BIN)
        };
        let mut child = Reap(
            cmd.arg("gate")
                .args(["--threads", "1", "--quiet"])
                .args(header_args("20", &c, &r))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let st = common::exit_within(&mut child.0, Duration::from_secs(60));
        let mut e = String::new();
        use std::io::Read;
        let _ = child.0.stderr.take().unwrap().read_to_string(&mut e);
        (st.map(|(code, _)| code), e)
    };
    if as_root {
        // nobody reaches the corpus and the binary.
        for d in [&root, &c, &c.join("validate_header"), &c.join("vectors")] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        for e in std::fs::read_dir(c.join("vectors")).unwrap().flatten() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        std::fs::set_permissions(
            c.join("validate_header/canonical"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
    }
    let vh = c.join("validate_header");
    let v = c.join("vectors");
    /// How one bad entry is made.
    type Plant<'a> = &'a dyn Fn(&Path);
    let fifo = |p: &Path| common::mkfifo(p);
    let zero = |p: &Path| symlink("/dev/zero", p).unwrap();
    let x = outside.join("x");
    let to_file = |p: &Path| symlink(&x, p).unwrap();
    let to_dir = |p: &Path| symlink(&outside, p).unwrap();
    let sparse = |len: u64| move |p: &Path| std::fs::File::create(p).unwrap().set_len(len).unwrap();
    let (over_1m, over_3g) = (sparse((1 << 20) + 1), sparse(3 << 30));
    let unreadable = |p: &Path| {
        std::fs::write(p, [0x85u8; 64]).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o000)).unwrap();
    };
    let (fifo_says, zero_says) = (
        "fifo: FIFO, not a regular file",
        "zero: device, not a regular file (through a symlink)",
    );
    let locked = "locked: cannot be read: Permission denied";
    // (entry, what the refusal says, planted as root for `nobody`, how it is made)
    let all: [(PathBuf, &str, bool, Plant); 11] = [
        (vh.join("fifo"), fifo_says, false, &fifo),
        (vh.join("zero"), zero_says, false, &zero),
        (
            vh.join("file"),
            "file: symlink to a regular file, not followed",
            false,
            &to_file,
        ),
        (
            vh.join("sub"),
            "sub: symlink to a directory, not followed",
            false,
            &to_dir,
        ),
        (
            c.join("validate_payload"),
            "validate_payload: symlink to a directory, not followed",
            false,
            &to_dir,
        ),
        (
            vh.join("big"),
            "big: 1048577 bytes, over the cap of 1048576 bytes",
            false,
            &over_1m,
        ),
        (v.join("fifo"), fifo_says, false, &fifo),
        (v.join("zero"), zero_says, false, &zero),
        (
            v.join("big"),
            "big: 3221225472 bytes, over the cap of 16777216 bytes",
            false,
            &over_3g,
        ),
        (vh.join("locked"), locked, as_root, &unreadable),
        (v.join("locked"), locked, as_root, &unreadable),
    ];
    for (path, says, nobody, plant) in all {
        plant(&path);
        let (st, e) = run(nobody);
        assert_eq!(
            st,
            Some(2),
            "{}: not refused (or it blocked): {e}",
            path.display()
        );
        assert!(
            e.contains(&format!("{}", path.display())),
            "names the entry: {e}"
        );
        assert!(e.contains(says), "{}: {e}", path.display());
        assert!(
            !r.exists(),
            "{}: a refused gate writes no report",
            path.display()
        );
        std::fs::remove_file(&path).unwrap();
    }
    let (st, e) = run(false);
    assert_eq!(st, Some(0), "the clean corpus passes: {e}");
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G10 (fault injection): a subject that panics in the middle of
/// the gate becomes a `Panic` finding; the report names the input (its hex
/// and the replay command) and the gate exits 1.
#[test]
fn subject_panic_mid_gate_is_reported_with_its_input() {
    let root = tmp("fault");
    let r = root.join("r");
    let o = generated("200", "validate_header,alu_lut", &r, &[])
        .env("TPB_GATE_DEBUG_SUBJECT_PANIC_CASE", "97")
        .output()
        .unwrap();
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let recs = common::divergences(&r);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let d = &recs[0];
    assert_eq!(d["class"], "Panic", "{d}");
    assert_eq!(d["target"], "validate_header", "{d}");
    assert!(d.to_string().contains("injected subject fault"), "{d}");
    let input = d["input"].as_str().unwrap_or_default().to_string();
    assert_eq!(input.len(), 128, "the input is named in full: {d}");
    let s = std::fs::read_to_string(r.join("summary.md")).unwrap();
    assert!(s.contains("**FAIL**"), "{s}");
    assert!(s.contains(&input), "summary names the input: {s}");
    // Case 97 runs under the (97 mod 4)-th generation, v3: the replay says so.
    assert_eq!(d["arch"], "v3", "{d}");
    assert!(
        s.contains(&format!(
            "replay --arch v3 --target validate_header --hex {input}"
        )),
        "{s}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// Guarantee G12: a stdout its reader closed (`gate | head`) does not change
/// the gate's exit code: the verdict is the report's, not a crash's.
#[test]
fn closed_stdout_keeps_the_verdict() {
    let root = tmp("closed-stdout");
    let corpus = header_corpus(&root);
    let report = root.join("report");
    let mut child = gate(&quick_args(&corpus, &report))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Close our end of its stdout before it prints anything.
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(summary.contains("PASS"), "{summary}");
}

/// Guarantee G13: a subject judged on nothing never passes. With
/// `--no-corpus --subject-cases 0` no case reaches the subject; the gate
/// said PASS for a subject with a planted bug (issue 22 item 2). Now that
/// is a failure (exit 1) whatever the flags, for a correct subject too;
/// judged on some cases, the planted bug is found and the correct one passes.
#[test]
fn a_subject_judged_on_nothing_never_passes() {
    let dir = tmp("judged-on-nothing");
    let planted = subjects::c_example(&dir, true);
    let planted = format!("lib:{}", planted.display());
    let good = subjects::python_spec("");
    let run = |subject: &str, subject_cases: &str, name: &str| {
        let extra = ["--subject-cases", subject_cases, "--subject", subject];
        generated(
            "2000",
            "validate_header,validate_payload",
            &dir.join(name),
            &extra,
        )
        .output()
        .unwrap()
    };
    for (subject, name) in [(&planted, "planted"), (&good, "good")] {
        let o = run(subject, "0", &format!("{name}-0"));
        assert_eq!(
            code(&o),
            1,
            "{name}: judged on nothing must fail: {}",
            stderr(&o)
        );
        assert!(
            stderr(&o).contains("was judged on no case"),
            "{name}: {}",
            stderr(&o)
        );
        let summary = std::fs::read_to_string(dir.join(format!("{name}-0/summary.md"))).unwrap();
        assert!(summary.contains("was judged on no case"), "{summary}");
        assert!(!summary.contains("PASS"), "{summary}");
    }
    let o = run(&planted, "2000", "planted-2000");
    assert_eq!(code(&o), 1, "the planted bug is found: {}", stderr(&o));
    assert!(
        !stderr(&o).contains("was judged on no case"),
        "{}",
        stderr(&o)
    );
    let o = run(&good, "2000", "good-2000");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}
