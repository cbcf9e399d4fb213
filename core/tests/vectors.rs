//! Runs the hand-derived vector files in `corpus/vectors/` (format: its README.md) under every
//! generation each line names (`arch=v2,v3`; no tag = v2, the default).

use std::path::PathBuf;
use tpb_core::insn::decode;
use tpb_core::validate::{validate_header, validate_payload};
use tpb_core::{Bundle, Generation};

struct Line {
    no: usize,
    file: String,
    cols: Vec<String>,
    gens: Vec<Generation>,
}

fn files() -> Vec<PathBuf> {
    let dir: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "corpus", "vectors"]
        .iter()
        .collect();
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    out.sort();
    out
}

fn lines(path: &PathBuf) -> Vec<Line> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = path.file_name().unwrap().to_string_lossy().to_string();
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let body = line.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                return None;
            }
            let mut cols: Vec<String> = body.split(' ').map(str::to_string).collect();
            let gens = match cols.last().and_then(|c| c.strip_prefix("arch=")) {
                Some(list) => {
                    let g = list
                        .split(',')
                        .map(|n| {
                            Generation::from_name(n)
                                .unwrap_or_else(|e| panic!("{file}:{}: {e}", i + 1))
                        })
                        .collect();
                    cols.pop();
                    g
                }
                None => vec![Generation::V2],
            };
            Some(Line {
                no: i + 1,
                file: file.clone(),
                cols,
                gens,
            })
        })
        .collect()
}

fn check_validator(l: &Line, g: Generation) -> Option<String> {
    let b = Bundle::from_hex(&l.cols[0]).unwrap_or_else(|| panic!("{}:{}: bad hex", l.file, l.no));
    let r = match l.cols[1].as_str() {
        "header" => validate_header(&b, g),
        "payload" => validate_payload(&b, g),
        other => panic!("{}:{}: validator {other}", l.file, l.no),
    };
    let got = match r {
        Ok(()) => ("valid".to_string(), "-".to_string()),
        Err(e) => ("invalid".to_string(), e.predicate().name().to_string()),
    };
    (got != (l.cols[2].clone(), l.cols[3].clone())).then(|| {
        format!(
            "{}:{} [{}]: expected {} {}, got {} {}",
            l.file,
            l.no,
            g.name(),
            l.cols[2],
            l.cols[3],
            got.0,
            got.1
        )
    })
}

fn check_decode(l: &Line, g: Generation) -> (Option<String>, Option<String>) {
    let b = Bundle::from_hex(&l.cols[0]).unwrap_or_else(|| panic!("{}:{}: bad hex", l.file, l.no));
    let mut ok_mnemonic = None;
    let got = match decode(&b, g) {
        Ok(insn) => {
            // every ok vector must also re-encode to itself under the same generation (SPEC §5.1)
            if insn.encode(g) != Ok(b) {
                return (
                    Some(format!(
                        "{}:{} [{}]: encode(decode(b)) != b",
                        l.file,
                        l.no,
                        g.name()
                    )),
                    None,
                );
            }
            ok_mnemonic = Some(insn.mnemonic().to_string());
            ("ok".to_string(), insn.mnemonic().to_string())
        }
        Err(e) if e.field() == "reserved" => {
            ("err".to_string(), format!("reserved@0x{:02x}", e.offset()))
        }
        Err(e) => ("err".to_string(), e.field().to_string()),
    };
    let fail = (got != (l.cols[1].clone(), l.cols[2].clone())).then(|| {
        format!(
            "{}:{} [{}]: expected {} {}, got {} {}",
            l.file,
            l.no,
            g.name(),
            l.cols[1],
            l.cols[2],
            got.0,
            got.1
        )
    });
    (fail, ok_mnemonic)
}

#[test]
fn every_vector_file() {
    let mut failures = Vec::new();
    let mut n_validator = 0usize;
    let mut n_decode = 0usize;
    let mut ok_mnemonics = std::collections::BTreeSet::new();
    let mut gens_seen = std::collections::BTreeSet::new();
    for path in files() {
        let ls = lines(&path);
        assert!(!ls.is_empty(), "{}: no vectors", path.display());
        for l in &ls {
            for &g in &l.gens {
                gens_seen.insert(g);
                match l.cols.len() {
                    4 => {
                        n_validator += 1;
                        failures.extend(check_validator(l, g));
                    }
                    3 => {
                        n_decode += 1;
                        let (f, m) = check_decode(l, g);
                        failures.extend(f);
                        ok_mnemonics.extend(m);
                    }
                    _ => panic!("{}:{}: {:?}", l.file, l.no, l.cols),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(n_validator >= 600, "only {n_validator} validator vectors");
    assert!(n_decode >= 60, "only {n_decode} decode vectors");
    assert_eq!(ok_mnemonics.len(), 11, "{ok_mnemonics:?}");
    assert_eq!(gens_seen.len(), 4, "every generation has vectors");
}
