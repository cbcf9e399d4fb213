//! `tpbconform report merge`: the report of 4 shard folders of one seed has
//! the verdict, the divergence signatures and the run.json counts of the
//! unsharded gate on that seed (clean, with a real vector mismatch every shard
//! sees, and with a divergence planted in one shard's files); sets that are
//! not one complete run are refused with exit 2 and nothing written.

mod common;
mod report_support;

use common::{code, copy_dir, gate_over, repo_corpus, stderr, tpb};
use report_support::{assert_refused, read_json, reseal, write_json};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

fn tmp(name: &str) -> PathBuf {
    common::tmp("merge-test", name)
}

const CASES: &str = "2000";
const SYNC_CASES: &str = "40";

/// Runs the gate (shard `shard`, or unsharded) into `out`; returns its exit code.
fn gate(corpus: &Path, shard: Option<&str>, out: &Path, seed: &str) -> i32 {
    gate_with(corpus, shard, out, seed, CASES, SYNC_CASES)
}

/// [`gate`] with other `--cases` / `--sync-cases`.
fn gate_with(
    corpus: &Path,
    shard: Option<&str>,
    out: &Path,
    seed: &str,
    cases: &str,
    sync_cases: &str,
) -> i32 {
    let mut args = vec!["--quiet", "--cases", cases, "--sync-cases", sync_cases];
    args.extend(["--seed", seed]);
    if let Some(s) = shard {
        args.extend(["--shard", s]);
    }
    let o = gate_over(&args, corpus, out);
    assert!(
        out.join("run.json").is_file(),
        "gate wrote no run.json: {}",
        stderr(&o)
    );
    code(&o)
}

/// Four shard folders `s0..s3` and the unsharded `full` of one seed.
fn shards_and_full(root: &Path, corpus: &Path) -> (Vec<PathBuf>, PathBuf, i32) {
    let mut dirs = Vec::new();
    let mut codes = BTreeSet::new();
    for i in 0..4 {
        let d = root.join(format!("s{i}"));
        codes.insert(gate(corpus, Some(&format!("{i}/4")), &d, "0x5eed"));
        dirs.push(d);
    }
    let full = root.join("full");
    let c = gate(corpus, None, &full, "0x5eed");
    assert!(
        codes.len() == 1 && codes.contains(&c),
        "shard codes {codes:?}, full {c}"
    );
    (dirs, full, c)
}

fn merge(dirs: &[PathBuf], out: &Path) -> Output {
    let mut args: Vec<&str> = vec!["report", "merge"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    args.extend(["--output", out.to_str().unwrap()]);
    tpb(&args)
}

/// Writes divergence records (renumbered in order, with the file and replay commands of
/// their new number and generation, as the gate writes them: no subject under test) to
/// `dir`, and each record's raw file with its minimised input.
fn write_lines(dir: &Path, ls: &mut [Value]) {
    for (i, v) in ls.iter_mut().enumerate() {
        assert!(v.get("replay_subjects").is_none(), "{v}");
        v["number"] = Value::from(i + 1);
        let target = v.get("replay_target").unwrap_or(&v["target"]).clone();
        let target = target.as_str().unwrap();
        let file = format!("divergences/{:03}-{target}.bin", i + 1);
        let arch = match v["arch"].as_str().unwrap() {
            "v2" => String::new(),
            a => format!("--arch {a} "),
        };
        let head = format!("tpbconform replay {arch}--target {target}");
        v["replay"] = format!("{head} --hex {}", v["minimized"].as_str().unwrap()).into();
        v["replay_file"] = format!("{head} {file}").into();
        v["file"] = file.into();
        let hex = v["minimized"].as_str().unwrap();
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
            .collect();
        let file = dir.join(v["file"].as_str().unwrap());
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, bytes).unwrap();
    }
    let text: String = ls.iter().map(|v| format!("{v}\n")).collect();
    std::fs::write(dir.join("divergences.jsonl"), text).unwrap();
}

/// Adds `by` to the `diverged` count of generation `name` in `m`.
fn bump_generation(m: &mut Value, name: &str, by: u64) {
    let g = m["generations"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|g| g["name"] == name)
        .unwrap();
    g["diverged"] = Value::from(g["diverged"].as_u64().unwrap() + by);
}

/// Writes `ls` as `dir`'s divergences.jsonl, counts one more divergent
/// `validate_header` case of generation `arch` in its run.json, and reseals.
fn add_divergent_case(dir: &Path, ls: &mut [Value], arch: &str) {
    write_lines(dir, ls);
    let mut m = read_json(&dir.join("run.json"));
    m["distinct_divergences"] = Value::from(ls.len());
    m["divergent_cases"] = Value::from(m["divergent_cases"].as_u64().unwrap() + 1);
    assert_eq!(m["targets"][0]["name"], "validate_header");
    m["targets"][0]["diverged"] = Value::from(m["targets"][0]["diverged"].as_u64().unwrap() + 1);
    bump_generation(&mut m, arch, 1);
    write_json(&dir.join("run.json"), &m);
    reseal(dir);
}

/// A complete divergence record of generated case `index` (arch `arch`).
fn planted_record(index: u64, arch: &str) -> Value {
    serde_json::json!({
        "number": 1, "target": "validate_header", "class": "OverAccept",
        "signature": {"key": "planted_predicate", "left": "valid", "right": "planted_predicate"},
        "count": 1, "origin": {"generated": index, "kind": "valid"}, "arch": arch,
        "input": "85", "minimized": "85",
        // `write_lines` gives it the file and replay commands of its number.
        "replay": "", "replay_file": "", "file": "",
        "left_name": "core", "right_name": "oracle", "left": "valid", "right": "planted",
        "left_dump": "validate_header = valid\n", "right_dump": "validate_header = planted\n"
    })
}

/// (target, class, key, left, right) of every divergence, in report order.
fn signatures(dir: &Path) -> Vec<[String; 5]> {
    common::divergences(dir)
        .iter()
        .map(|v| {
            let s = |x: &Value| x.as_str().unwrap().to_string();
            [
                s(&v["target"]),
                s(&v["class"]),
                s(&v["signature"]["key"]),
                s(&v["signature"]["left"]),
                s(&v["signature"]["right"]),
            ]
        })
        .collect()
}

/// run.json without the fields that name the shard.
fn run_facts(dir: &Path) -> Value {
    let mut v = read_json(&dir.join("run.json"));
    let o = v.as_object_mut().unwrap();
    // divergent_cases: corpus and vector findings are replayed by every shard
    // and counted once per shard (checked per divergence below).
    // integrity: digests of files that name their shard and hold timing;
    // machine: threads, wall time and subject counts (summed over shards).
    for k in [
        "shard",
        "merged_from",
        "notes",
        "failures",
        "failure_targets",
        "divergent_cases",
        "integrity",
        "machine",
    ] {
        o.remove(k);
    }
    // Coverage counts corpus cases once per shard (like divergent_cases).
    for t in v["targets"].as_array_mut().unwrap() {
        t.as_object_mut().unwrap().remove("coverage");
    }
    v
}

/// Asserts the merged report matches the unsharded one.
fn assert_like_full(merged: &Path, full: &Path, full_code: i32, merge_out: &Output) {
    assert_eq!(
        code(merge_out),
        full_code,
        "merge exit code vs unsharded gate's; stderr: {}",
        stderr(merge_out)
    );
    assert_eq!(signatures(merged), signatures(full));
    assert_eq!(run_facts(merged), run_facts(full));
    for f in ["summary.md", "junit.xml", "index.html"] {
        assert!(merged.join(f).is_file(), "merged report lacks {f}");
    }
    // The representative (first origin) and the minimised input are the
    // unsharded gate's; each merged .bin holds that minimised input.
    for (m, f) in common::divergences(merged)
        .iter()
        .zip(common::divergences(full).iter())
    {
        assert_eq!(m["origin"], f["origin"]);
        let every_shard = m["origin"].get("generated").is_none();
        let want = f["count"].as_u64().unwrap() * if every_shard { 4 } else { 1 };
        assert_eq!(m["count"], want, "count of {m}");
        assert_eq!(m["minimized"], f["minimized"]);
        let bin = std::fs::read(merged.join(m["file"].as_str().unwrap())).unwrap();
        let hex: String = bin.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(Value::from(hex), m["minimized"]);
    }
}

#[test]
fn clean_run_merges_to_the_unsharded_verdict() {
    let root = tmp("clean");
    let (dirs, full, c) = shards_and_full(&root, &repo_corpus());
    assert_eq!(c, 0, "the clean gate should pass");
    let out = root.join("merged");
    let o = merge(&dirs, &out);
    assert_like_full(&out, &full, c, &o);
    assert_eq!(read_json(&out.join("run.json"))["verdict"], "PASS");
    assert_eq!(read_json(&out.join("run.json"))["merged_from"], 4);
    // Order of the folders on the command line does not matter.
    let rev: Vec<PathBuf> = dirs.iter().rev().cloned().collect();
    let out2 = root.join("merged-rev");
    assert_eq!(code(&merge(&rev, &out2)), 0);
    assert_eq!(
        std::fs::read(out.join("run.json")).unwrap(),
        std::fs::read(out2.join("run.json")).unwrap()
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn divergences_merge_to_the_unsharded_signatures() {
    let root = tmp("diverge");
    // A real finding every shard sees: a vector line with a wrong expectation
    // (the first line expecting `valid` now expects `invalid valid_opcode`).
    let corpus = root.join("corpus");
    copy_dir(&repo_corpus(), &corpus);
    let vf = corpus.join("vectors/custom_op.txt");
    let text = std::fs::read_to_string(&vf).unwrap();
    let planted = text.replacen(" header valid - ", " header invalid valid_opcode ", 1);
    assert_ne!(planted, text, "no `header valid -` vector line to plant on");
    std::fs::write(&vf, planted).unwrap();
    let (dirs, full, c) = shards_and_full(&root, &corpus);
    assert_eq!(c, 1, "the planted vector must make the gate fail");
    assert!(signatures(&full).iter().any(|s| s[0] == "vectors"));

    // Plus a divergence planted in shard 2's files only (generated case #6,
    // 6 mod 4 = 2), and the same in the unsharded report.
    let plant = |dir: &Path| {
        let mut ls = common::divergences(dir);
        ls.push(planted_record(6, "v4"));
        // The gate lists validate_header divergences before `vectors`.
        ls.sort_by_key(|v| v["target"] != "validate_header");
        // Case 6 runs under the (6 mod 4)-th generation.
        add_divergent_case(dir, &mut ls, "v4");
    };
    plant(&dirs[2]);
    plant(&full);
    let out = root.join("merged");
    let o = merge(&dirs, &out);
    assert_like_full(&out, &full, 1, &o);
    let merged = common::divergences(&out);
    let p = merged
        .iter()
        .find(|v| v["signature"]["key"] == "planted_predicate")
        .expect("planted divergence in the merged report");
    assert_eq!(p["shards"], serde_json::json!(["2/4"]));
    let v = merged.iter().find(|v| v["target"] == "vectors").unwrap();
    assert_eq!(v["shards"], serde_json::json!(["0/4", "1/4", "2/4", "3/4"]));
    assert_eq!(read_json(&out.join("run.json"))["verdict"], "FAIL");
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(junit.contains("planted_predicate"), "{junit}");

    // The same signature found by two shards is one divergence: counts add
    // up, the smaller case index is kept.
    let again = |dir: &Path, index: u64| {
        let mut ls = common::divergences(dir);
        let mut x = common::divergences(&full)
            .into_iter()
            .find(|v| v["signature"]["key"] == "planted_predicate")
            .unwrap();
        x["origin"]["generated"] = Value::from(index);
        x["arch"] = "v3".into();
        ls.insert(0, x);
        add_divergent_case(dir, &mut ls, "v3");
    };
    again(&dirs[1], 5);
    let out = root.join("merged-dedup");
    assert_eq!(code(&merge(&dirs, &out)), 1);
    let p: Vec<Value> = common::divergences(&out)
        .into_iter()
        .filter(|v| v["signature"]["key"] == "planted_predicate")
        .collect();
    assert_eq!(p.len(), 1, "one line per signature");
    assert_eq!(p[0]["count"], 2);
    assert_eq!(p[0]["origin"]["generated"], 5, "smallest case index kept");
    assert_eq!(p[0]["shards"], serde_json::json!(["1/4", "2/4"]));
    std::fs::remove_dir_all(&root).unwrap();
}

/// Expects exit 2 naming `what`, and no output folder.
fn refused(dirs: &[PathBuf], out: &Path, what: &str) {
    assert_refused(&merge(dirs, out), out, what, "");
}

#[test]
fn refuses_sets_that_are_not_one_complete_run() {
    let root = tmp("refuse");
    let corpus = repo_corpus();
    let dirs: Vec<PathBuf> = (0..4)
        .map(|i| {
            let d = root.join(format!("s{i}"));
            assert_eq!(gate(&corpus, Some(&format!("{i}/4")), &d, "0x5eed"), 0);
            d
        })
        .collect();
    let out = root.join("out");
    // A missing shard, a duplicated one.
    refused(&dirs[..3], &out, "missing shard(s): 3/4");
    refused(&[&dirs[..3], &dirs[..1]].concat(), &out, "given twice");
    // A shard of another seed, of another case count.
    let other = root.join("other-seed");
    assert_eq!(gate(&corpus, Some("3/4"), &other, "0x1"), 0);
    refused(&[&dirs[..3], &[other]].concat(), &out, "disagree on seed");
    let other = root.join("other-cases");
    assert_eq!(
        gate_with(&corpus, Some("3/4"), &other, "0x5eed", "1999", SYNC_CASES),
        0
    );
    refused(&[&dirs[..3], &[other]].concat(), &out, "disagree on cases");
    // A shard of another generation set (`--arch`).
    let other = root.join("other-arch");
    copy_dir(&dirs[3], &other);
    let mut v = read_json(&other.join("run.json"));
    let ran: u64 = v["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["ran"].as_u64().unwrap())
        .sum();
    v["generations"] = serde_json::json!([{"name": "v3", "ran": ran, "diverged": 0}]);
    write_json(&other.join("run.json"), &v);
    reseal(&other);
    refused(
        &[&dirs[..3], &[other]].concat(),
        &out,
        "disagree on generations",
    );
    // Same --cases but another --sync-cases: the planned split gives it away.
    let other = root.join("other-sync");
    assert_eq!(
        gate_with(&corpus, Some("3/4"), &other, "0x5eed", CASES, "44"),
        0
    );
    refused(&[&dirs[..3], &[other]].concat(), &out, "its share");
    // A shard the time budget cut short (a real INCOMPLETE run).
    let other = root.join("cut-short");
    let cut = ["--quiet", "--cases", "100000000", "--seconds", "0.2"];
    let o = gate_over(
        &[&cut[..], &["--seed", "0x5eed", "--shard", "3/4"]].concat(),
        &corpus,
        &other,
    );
    assert!(other.join("run.json").is_file(), "{}", stderr(&o));
    assert_eq!(read_json(&other.join("run.json"))["complete"], false);
    refused(&[&dirs[..3], &[other]].concat(), &out, "INCOMPLETE");
    // Edited copies of shard 3: another version, INCOMPLETE, a jsonl that does
    // not match run.json, a divergence from another shard's case.
    let edited = |name: &str, edit: &dyn Fn(&Path)| {
        let d = root.join(name);
        copy_dir(&dirs[3], &d);
        edit(&d);
        reseal(&d);
        [&dirs[..3], &[d]].concat()
    };
    // Sets `fields` of the shard's run.json.
    fn set_meta(d: &Path, fields: &[(&str, Value)]) {
        let mut m = read_json(&d.join("run.json"));
        for (k, v) in fields {
            m[*k] = v.clone();
        }
        write_json(&d.join("run.json"), &m);
    }
    let set = |key: &'static str, v: Value| move |d: &Path| set_meta(d, &[(key, v.clone())]);
    refused(
        &edited("v", &set("version", "9.9.9".into())),
        &out,
        "disagree on version",
    );
    refused(
        &edited("inc", &set("verdict", "INCOMPLETE".into())),
        &out,
        "INCOMPLETE",
    );
    refused(
        &edited("cut", &set("complete", false.into())),
        &out,
        "INCOMPLETE",
    );
    refused(
        &edited("bad", &set("bad_input", true.into())),
        &out,
        "bad input",
    );
    refused(&edited("fmt", &set("format", 1.into())), &out, "format 1");
    refused(
        &edited("count", &set("distinct_divergences", 1.into())),
        &out,
        "run.json says 1",
    );
    refused(
        &edited("lie", &|d: &Path| {
            set_meta(
                d,
                &[
                    ("verdict", "PASS".into()),
                    ("failures", serde_json::json!(["timeout: x"])),
                    ("failure_targets", serde_json::json!(["validate_header"])),
                ],
            );
        }),
        &out,
        "verdict `PASS`",
    );
    refused(
        &edited("foreign", &|d: &Path| {
            let mut rec = planted_record(4, "v2");
            rec["class"] = "OverAccept".into();
            write_lines(d, &mut [rec]);
            let one = || Value::from(1);
            set_meta(
                d,
                &[
                    ("distinct_divergences", one()),
                    ("divergent_cases", one()),
                    ("verdict", "FAIL".into()),
                ],
            );
        }),
        &out,
        "not in shard 3/4",
    );
    // A record's file and replay commands are what its typed fields give: one edited, and
    // one of an older tpbconform (a vector line's record without `replay_target`), refused.
    let rewrite = |d: &Path, edit: &dyn Fn(&mut Value)| {
        let mut ls = common::divergences(d);
        edit(&mut ls[0]);
        std::fs::write(d.join("divergences.jsonl"), format!("{}\n", ls[0])).unwrap();
    };
    // Edited replay commands, and a file outside the folder (refused before it is read).
    for (name, field, value, says) in [
        (
            "replayed",
            "replay_file",
            "tpbconform replay x",
            "fields `replay` and `replay_file` are not the ones",
        ),
        (
            "outside",
            "file",
            "/etc/passwd",
            "field `file` is `/etc/passwd`, expected divergences/001-",
        ),
    ] {
        let edit = |d: &Path| {
            add_divergent_case(d, &mut [planted_record(3, "v5")], "v5");
            rewrite(d, &|r| r[field] = value.into());
        };
        refused(&edited(name, &edit), &out, says);
    }
    refused(
        &edited("oldvec", &|d: &Path| {
            let mut m = read_json(&d.join("run.json"));
            let path = m["vector_files"][0]["path"].clone();
            m["vector_files"][0]["failed"] = 1.into();
            for k in ["distinct_divergences", "divergent_cases"] {
                m[k] = 1.into();
            }
            m["verdict"] = "FAIL".into();
            write_json(&d.join("run.json"), &m);
            let mut rec = planted_record(3, "v5");
            rec["origin"] = serde_json::json!({"vector": path, "line": 1, "expected": "x"});
            write_lines(d, &mut [rec]);
            rewrite(d, &|r| r["target"] = "vectors".into());
        }),
        &out,
        "a vector line's record without `replay_target`",
    );
    refused(
        &edited("extra", &|d: &Path| {
            std::fs::write(d.join("divergences.jsonl"), "{}\n{}\n").unwrap();
        }),
        &out,
        "has more than the 0 divergence(s) run.json says (line 1)",
    );
    refused(
        &edited("garbage", &|d: &Path| {
            std::fs::write(d.join("divergences.jsonl"), "\n{not json\n").unwrap();
            set_meta(
                d,
                &[
                    ("distinct_divergences", 1.into()),
                    ("verdict", "FAIL".into()),
                ],
            );
        }),
        &out,
        "divergences.jsonl:2:",
    );
    refused(
        &edited("nometa", &|d: &Path| {
            std::fs::remove_file(d.join("run.json")).unwrap()
        }),
        &out,
        "run.json: cannot read",
    );
    refused(&[], &out, "");
    // The output must not exist: a folder (left untouched), a dangling symlink.
    let taken = root.join("taken");
    std::fs::create_dir(&taken).unwrap();
    std::fs::write(taken.join("mine.txt"), "keep").unwrap();
    let o = merge(&dirs, &taken);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(taken.join("mine.txt")).unwrap(),
        "keep"
    );
    assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 1);
    #[cfg(unix)]
    {
        let link = root.join("link");
        std::os::unix::fs::symlink(root.join("nowhere"), &link).unwrap();
        let o = merge(&dirs, &link);
        assert_eq!(code(&o), 2, "{}", stderr(&o));
        assert!(!root.join("nowhere").exists());
    }
    // And the complete set merges.
    assert_eq!(code(&merge(&dirs, &out)), 0);
    std::fs::remove_dir_all(&root).unwrap();
}
