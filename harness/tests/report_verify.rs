//! `tpbconform report merge` verifies, it does not trust: shard folders
//! edited to claim zero cases, to list no target, to show diverged rows
//! under PASS, or with divergence records removed, are refused (exit 2,
//! nothing written), both with their integrity record recomputed (the
//! cross-checks) and without it (the digest); a refused command leaves no
//! folder behind; a closed stdout ends `report merge` with 141, quietly.
//! Small runs: two shards of two targets.

mod common;
mod report_support;

use common::{code, copy_dir, repo_root, start, stderr, tpb_in, BIN};
use report_support::{assert_refused, read_json, reseal, take_ran, write_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn tmp(name: &str) -> PathBuf {
    common::tmp("verify", name)
}

/// Two shard folders `s0`, `s1` of one small gate (extra args: a subject).
fn shards(root: &Path, extra: &[&str]) -> Vec<PathBuf> {
    (0..2)
        .map(|i| {
            let d = root.join(format!("s{i}"));
            let shard = format!("{i}/2");
            let mut args = vec![
                "gate",
                "--quiet",
                "--cases",
                "120",
                "--targets",
                "validate_header,decode_any",
                "--seed",
                "0x5eed",
                "--shard",
                &shard,
                "--report-dir",
                d.to_str().unwrap(),
            ];
            args.extend(extra);
            let o = tpb_in(&repo_root(), &args);
            assert!(d.join("run.json").is_file(), "{}", stderr(&o));
            d
        })
        .collect()
}

/// Copies `dirs` under `root/name`, edits each copy's run.json with `edit`
/// (`None` leaves run.json alone) and `files` (the folder), reseals it when
/// `seal`; returns the copies.
fn forge(
    root: &Path,
    name: &str,
    dirs: &[PathBuf],
    seal: bool,
    edit: &dyn Fn(usize, &mut Value),
    files: &dyn Fn(usize, &Path),
) -> Vec<PathBuf> {
    dirs.iter()
        .enumerate()
        .map(|(i, d)| {
            let c = root
                .join(format!("{name}-{}", if seal { "sealed" } else { "raw" }))
                .join(format!("s{i}"));
            copy_dir(d, &c);
            let mut m = read_json(&c.join("run.json"));
            let before = m.clone();
            edit(i, &mut m);
            if m != before {
                write_json(&c.join("run.json"), &m);
            }
            files(i, &c);
            if seal {
                reseal(&c);
            }
            c
        })
        .collect()
}

fn merge(root: &Path, dirs: &[PathBuf], out: &Path) -> Output {
    let mut args: Vec<&str> = vec!["report", "merge"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    args.extend(["--output", out.to_str().unwrap()]);
    tpb_in(root, &args)
}

/// Merging `dirs` is refused with exit 2, names `what`, and writes nothing.
fn refused(root: &Path, dirs: &[PathBuf], what: &str) {
    let out = root.join("merged-out");
    let o = merge(root, dirs, &out);
    let verdict = std::fs::read(out.join("run.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .map(|v| v["verdict"].clone());
    assert_refused(&o, &out, what, &format!("; merged verdict {verdict:?}"));
}

fn no_files(_: usize, _: &Path) {}

/// A run.json edit of [`forge`] (shard index, run.json).
type RunEdit<'a> = &'a dyn Fn(usize, &mut Value);

/// A shard folder edited after the gate.
#[derive(Clone, Copy)]
enum Edit {
    /// In the file, the first `from` becomes `to`.
    Replace(&'static str, &'static str, &'static str),
    /// A file added.
    Add(&'static str),
    /// A file removed.
    Remove(&'static str),
    /// A note added to run.json (not a folder edit).
    Notes,
}

impl Edit {
    fn apply(self, d: &Path) {
        match self {
            Edit::Replace(f, from, to) => {
                let s = std::fs::read_to_string(d.join(f)).unwrap();
                std::fs::write(d.join(f), s.replacen(from, to, 1)).unwrap();
            }
            Edit::Add(f) => std::fs::write(d.join(f), "added").unwrap(),
            Edit::Remove(f) => std::fs::remove_file(d.join(f)).unwrap(),
            Edit::Notes => {}
        }
    }
}

fn each_target(m: &mut Value, f: &dyn Fn(&mut Value)) {
    for t in m["targets"].as_array_mut().unwrap() {
        f(t);
    }
}

#[test]
fn forged_clean_shards_never_merge_to_pass() {
    let root = tmp("forged-clean");
    let dirs = shards(&root, &[]);
    let out = root.join("ok");
    let o = merge(&root, &dirs, &out);
    assert_eq!(code(&o), 0, "the genuine shards merge: {}", stderr(&o));
    for seal in [true, false] {
        // Digest or cross-check: unsealed forgeries fail the digest first.
        let why = |cross: &'static str| if seal { cross } else { "digest mismatch" };
        // (name, run.json edit, what the refusal names when sealed)
        let forgeries: [(&str, RunEdit, &'static str); 6] = [
            // Claim zero cases (every shard, consistently).
            (
                "zero",
                &|_, m| {
                    m["cases"] = 0.into();
                    each_target(m, &|t| {
                        for k in ["planned", "ran", "valid", "near_valid", "raw", "diverged"] {
                            t[k] = 0.into();
                        }
                    });
                    for g in m["generations"].as_array_mut().unwrap() {
                        g["ran"] = 0.into();
                    }
                },
                "nothing was checked",
            ),
            // Zero planned cases for one target while the request says 120.
            (
                "none-planned",
                &|_, m| {
                    let t = &mut m["targets"][1];
                    let ran = t["ran"].as_u64().unwrap();
                    for k in ["planned", "ran", "valid", "near_valid", "raw"] {
                        t[k] = 0.into();
                    }
                    take_ran(m, ran);
                },
                "no shard planned a generated case",
            ),
            // List no target.
            (
                "no-target",
                &|_, m| {
                    m["targets"] = serde_json::json!([]);
                    for g in m["generations"].as_array_mut().unwrap() {
                        g["ran"] = 0.into();
                    }
                },
                "lists no target",
            ),
            // One target left out of run.json (its cases off the generations).
            (
                "missing-target",
                &|_, m| {
                    let gone = m["targets"].as_array_mut().unwrap().remove(1);
                    take_ran(m, gone["ran"].as_u64().unwrap());
                },
                "a missing target",
            ),
            // A target row that says diverged=5 under PASS.
            (
                "diverged",
                &|i, m| {
                    if i == 0 {
                        m["targets"][0]["diverged"] = 5.into();
                    }
                },
                "5 diverged case(s) in run.json",
            ),
            // A generation that diverged under PASS.
            (
                "generation",
                &|i, m| {
                    if i == 1 {
                        m["generations"][2]["diverged"] = 1.into();
                    }
                },
                "diverged",
            ),
        ];
        for (name, edit, what) in forgeries {
            let forged = forge(&root, name, &dirs, seal, edit, &no_files);
            refused(&root, &forged, why(what));
        }
    }
    // Files changed after the gate, integrity record untouched, and a verdict recomputed
    // consistently in run.json but not in summary.md (sealed): each named.
    // (name, sealed, the shard edited, the edit, what the refusal names)
    #[rustfmt::skip]
    let edited: [(&str, bool, usize, Edit, &str); 5] = [
        ("summary", false, 1, Edit::Replace("summary.md", "| ok |", "| FAIL |"), "digest mismatch: summary.md"),
        ("facts", false, 0, Edit::Notes, "run.json was edited"),
        ("added", false, 0, Edit::Add("notes.txt"), "is not listed"),
        ("removed", false, 0, Edit::Remove("index.html"), "index.html is listed but absent"),
        ("summary-says", true, 0, Edit::Replace("summary.md", "**PASS**", "**FAIL**"), "summary.md says FAIL"),
    ];
    for (name, seal, shard, edit, what) in edited {
        let notes = |i: usize, m: &mut Value| {
            if i == shard && matches!(edit, Edit::Notes) {
                m["notes"] = serde_json::json!(["edited"]);
            }
        };
        let files = |i: usize, d: &Path| {
            if i == shard {
                edit.apply(d);
            }
        };
        refused(
            &root,
            &forge(&root, name, &dirs, seal, &notes, &files),
            what,
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn removed_divergence_records_never_merge_to_pass() {
    let root = tmp("forged-fail");
    let spec = format!(
        "cmd:python3 {} --planted-bug",
        repo_root().join("examples/subjects/custom_op.py").display()
    );
    let dirs = shards(&root, &["--subject", &spec]);
    let out = root.join("fail");
    let o = merge(&root, &dirs, &out);
    assert_eq!(
        code(&o),
        1,
        "the genuine shards merge to FAIL: {}",
        stderr(&o)
    );
    let records = |d: &Path| -> Vec<String> {
        std::fs::read_to_string(d.join("divergences.jsonl"))
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert!(!records(&dirs[0]).is_empty());
    for seal in [true, false] {
        let why = |cross: &'static str| if seal { cross } else { "digest mismatch" };
        // Every record removed, run.json's counts and verdict made to match.
        let emptied = forge(
            &root,
            "emptied",
            &dirs,
            seal,
            &|_, m| {
                m["distinct_divergences"] = 0.into();
                m["divergent_cases"] = 0.into();
                m["verdict"] = "PASS".into();
            },
            &|_, d| std::fs::write(d.join("divergences.jsonl"), "").unwrap(),
        );
        refused(&root, &emptied, why("in run.json but"));
        // One record removed, the count in run.json left alone.
        let one = forge(&root, "one", &dirs, seal, &|_, _| {}, &|i, d| {
            if i == 0 {
                let mut ls = records(d);
                ls.pop();
                let text: String = ls.iter().map(|l| format!("{l}\n")).collect();
                std::fs::write(d.join("divergences.jsonl"), text).unwrap();
            }
        });
        refused(&root, &one, why("run.json says"));
    }
    // A divergence's raw input replaced (the record says otherwise).
    let bin = forge(&root, "bin", &dirs, true, &|_, _| {}, &|i, d| {
        if i == 0 {
            let f = std::fs::read_dir(d.join("divergences"))
                .unwrap()
                .flatten()
                .next()
                .unwrap()
                .path();
            std::fs::write(f, [0x86; 64]).unwrap();
        }
    });
    refused(&root, &bin, "does not hold the minimised input");
    // A second `verdict` key (serde_json alone keeps the last one).
    let twice = forge(&root, "twice", &dirs, false, &|_, _| {}, &|_, d| {
        let p = d.join("run.json");
        let s = std::fs::read_to_string(&p).unwrap();
        let t = s.replacen(
            "\"verdict\": \"FAIL\",",
            "\"verdict\": \"FAIL\", \"verdict\": \"PASS\",",
            1,
        );
        assert_ne!(s, t);
        std::fs::write(&p, t).unwrap();
    });
    refused(&root, &twice, "duplicate key \"verdict\"");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn refused_commands_leave_no_folder() {
    let root = tmp("no-folder");
    // report merge of a folder that does not exist: no reports/, no -o parents.
    let o = tpb_in(&root, &["report", "merge", "nonexistent"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("nonexistent"), "{}", stderr(&o));
    let o = tpb_in(&root, &["report", "merge", "nonexistent", "-o", "a/b/out"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // A gate whose subject fails to start: neither --report-dir (nor the
    // parents created for it) nor the default reports/ stay; a rerun is
    // refused for the subject again, not as "exists already".
    let corpus = repo_root().join("corpus");
    let gate = |extra: &[&str]| {
        let mut args = vec![
            "gate",
            "--quiet",
            "--cases",
            "20",
            "--targets",
            "validate_header",
            "--subject",
            "cmd:/nonexistent/subject",
            "--corpus",
            corpus.to_str().unwrap(),
        ];
        args.extend(extra);
        tpb_in(&root, &args)
    };
    for _ in 0..2 {
        let o = gate(&["--report-dir", "x/y/report"]);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(!stderr(&o).contains("exists already"), "{}", stderr(&o));
        assert!(stderr(&o).contains("nonexistent/subject"), "{}", stderr(&o));
    }
    let o = gate(&[]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn report_merge_with_a_closed_stdout_exits_141_quietly() {
    let root = tmp("closed-stdout");
    let dirs = shards(&root, &[]);
    let out = root.join("merged");
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), "merge".as_ref()];
    args.extend(dirs.iter().map(|d| d.as_os_str()));
    args.extend(["-o".as_ref(), out.as_os_str()]);
    let mut child = start(&args, Stdio::null(), Stdio::piped(), Stdio::piped());
    // Close our end of its stdout before it prints anything.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 141, "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "quietly: {}", stderr(&o));
    assert!(
        out.join("summary.md").is_file(),
        "the report is written first"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn interrupted_merge_leaves_no_staging_folder_and_no_output() {
    let root = tmp("interrupted");
    let dirs = shards(&root, &[]);
    for sig in ["INT", "TERM"] {
        let out = root.join(format!("out-{sig}"));
        let child = Command::new(BIN)
            .args(["report", "merge"])
            .args(&dirs)
            .arg("-o")
            .arg(&out)
            .env("TPB_REPORT_DEBUG_STAGING_PAUSE_MS", "20000")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let staging = |root: &Path| -> Vec<PathBuf> {
            std::fs::read_dir(root)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().contains(".staging-"))
                })
                .collect()
        };
        let t0 = std::time::Instant::now();
        while staging(&root).is_empty() {
            assert!(t0.elapsed().as_secs() < 30, "no staging folder appeared");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let k = Command::new("kill")
            .arg(format!("-{sig}"))
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(k.success());
        let o = child.wait_with_output().unwrap();
        assert_eq!(code(&o), 130, "SIG{sig}: {}", stderr(&o));
        assert_eq!(staging(&root), Vec::<PathBuf>::new(), "SIG{sig}");
        assert!(
            std::fs::symlink_metadata(&out).is_err(),
            "SIG{sig}: output left"
        );
    }
    std::fs::remove_dir_all(&root).unwrap();
}
