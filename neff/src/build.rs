//! Writing a NEFF (header + gzip or plain tar payload): for the project's sample builder
//! (`examples/neff/`) and tests, never for a user's file.

use crate::header::{Header, HEADER_SIZE};
use crate::payload::hash_field;
use crate::tar::{write_end, write_member};
use std::io::Write;

/// One member to write: its name, tar typeflag (`b'0'` regular, `b'5'` folder, ...), link
/// target and data.
pub struct Member<'a> {
    /// The stored name.
    pub name: &'a str,
    /// The typeflag.
    pub typeflag: u8,
    /// Link target (links only).
    pub link: &'a str,
    /// Data.
    pub data: &'a [u8],
}

impl<'a> Member<'a> {
    /// A regular member.
    pub fn file(name: &'a str, data: &'a [u8]) -> Self {
        Member {
            name,
            typeflag: b'0',
            link: "",
            data,
        }
    }
}

/// The tar of `members`.
pub fn tar(members: &[Member<'_>]) -> Vec<u8> {
    let mut t = Vec::new();
    for m in members {
        write_member(&mut t, m.name, m.typeflag, m.link, m.data);
    }
    write_end(&mut t);
    t
}

/// gzip of `data` (level 6, no name, mtime 0: the same bytes every run).
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), flate2::Compression::new(6));
    e.write_all(data).expect("a Vec");
    e.finish().expect("a Vec")
}

/// A NEFF of `payload` (already tar or gzip): header with `pkg_version`'s hash of it,
/// `num_tpb` subgraphs and `name`.
pub fn neff(payload: &[u8], pkg_version: u64, num_tpb: u32, name: &str) -> Vec<u8> {
    let h = Header {
        pkg_version,
        header_size: HEADER_SIZE as u64,
        data_size: payload.len() as u64,
        neff_version_major: 2,
        neff_version_minor: 0,
        build_version: "tpb-conform sample builder".into(),
        num_tpb,
        hash: hash_field(pkg_version, payload),
        uuid: [0; 16],
        name: name.into(),
        requested_tpb_count: num_tpb,
        tpb_per_node: [0; 64],
        feature_bits: 0,
        lnc_size: num_tpb,
    };
    let mut out = h.to_bytes().to_vec();
    out.extend_from_slice(payload);
    out
}

/// The hex text of `examples/samples/program.hex` as bytes (one 64-byte bundle per line, `#`
/// comments).
pub fn parse_hex_lines(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in text.lines() {
        let digits: String = line
            .split('#')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_ascii_hexdigit())
            .collect();
        for i in (0..digits.len() / 2 * 2).step_by(2) {
            out.push(u8::from_str_radix(&digits[i..i + 2], 16).unwrap_or(0));
        }
    }
    out
}

/// Named files: (name, bytes).
pub type Files = Vec<(&'static str, Vec<u8>)>;

/// The sample NEFFs of `examples/neff/` (name, bytes), built from `program` (the project's
/// valid sample stream, `examples/samples/program.hex`), and the files of the unpacked
/// sample folder (`unpacked/`, relative names). The same bytes every run.
pub fn samples(program: &[u8]) -> (Files, Files) {
    let consts = vec![0xEEu8; 200]; // a .bin that is no stream (constants)
                                    // 1. One subgraph, schema A (<eng> -> <eng>.json, "instr"), gzip, pkg_version 1.
    let def_a = br#"{"pe": "pe.json", "act": "act.json", "pool": "pool.json", "dve": "dve.json", "sp": "sp.json",
 "dma_queue": {"qSyncIO": {"type": "io", "num_queues": 16, "semaphore": 3}},
 "var": {"input0": {"size": 4096}}}"#;
    let engine_json = |bin: &str, dma: &str| format!(r#"{{"instr": "{bin}", "dma": [{dma}]}}"#);
    let jsons: Vec<(String, String)> = vec![
        ("pe.json".into(), engine_json("pe.bin", "")),
        ("act.json".into(), engine_json("act.bin", "")),
        (
            "pool.json".into(),
            engine_json(
                "pool.bin",
                r#"{"id": 1, "queue": "qSyncIO", "semaphore": 45}"#,
            ),
        ),
        ("dve.json".into(), engine_json("dve.bin", "")),
        (
            "sp.json".into(),
            engine_json("sp.bin", r#"{"id": 2, "queue": "qSyncIO", "semaphore": 8}"#),
        ),
    ];
    let names_a: Vec<(String, Vec<u8>)> = {
        let mut v: Vec<(String, Vec<u8>)> = vec![("sg00/def.json".into(), def_a.to_vec())];
        for (n, j) in &jsons {
            v.push((format!("sg00/{n}"), j.as_bytes().to_vec()));
        }
        for e in ["pe", "act", "pool", "dve"] {
            v.push((format!("sg00/{e}.bin"), program.to_vec()));
        }
        v.push(("sg00/sp.bin".into(), Vec::new())); // an engine with no program: empty
        v.push(("sg00/consts.bin".into(), consts.clone()));
        v.push(("neff.json".into(), br#"{"neff_version": "2.0"}"#.to_vec()));
        v
    };
    let members = |v: &[(String, Vec<u8>)]| -> Vec<u8> {
        let mut m = vec![Member {
            name: "./",
            typeflag: b'5',
            link: "",
            data: b"",
        }];
        for (n, d) in v {
            m.push(Member::file(n, d));
        }
        tar(&m)
    };
    let one = neff(&gzip(&members(&names_a)), 1, 1, "one_subgraph");
    // 2. Two subgraphs, schema B (<eng>_instr), plain tar, pkg_version 2, the streams before
    //    their def.json (held until it comes).
    let def_b =
        br#"{"pe_instr": "PE.bin", "act_instr": "Activation.bin", "pool_instr": "Pool.bin"}"#;
    let mut two: Vec<(String, Vec<u8>)> = Vec::new();
    for sg in ["sg00", "sg01"] {
        for e in ["PE", "Activation", "Pool"] {
            two.push((format!("{sg}/{e}.bin"), program.to_vec()));
        }
        two.push((format!("{sg}/def.json"), def_b.to_vec()));
    }
    let two = neff(&members(&two), 2, 2, "two_subgraphs");
    // 3. Planted errors in three engines (schema B, gzip, pkg_version 1): PE #2 an opcode of
    //    no generation, Pool #1 inst_word_len 0x11, DVE a stray 0x86 payload first.
    let mut pe = program.to_vec();
    pe[2 * 64] = 0xFF;
    let mut pool = program.to_vec();
    pool[64 + 1] = 0x11;
    let mut dve = program[4 * 64..5 * 64].to_vec();
    dve.extend_from_slice(program);
    let def_e = br#"{"pe_instr": "PE.bin", "pool_instr": "Pool.bin", "dve_instr": "DVE.bin", "act_instr": "Activation.bin"}"#;
    let errs: Vec<(String, Vec<u8>)> = vec![
        ("sg00/def.json".into(), def_e.to_vec()),
        ("sg00/PE.bin".into(), pe),
        ("sg00/Activation.bin".into(), program.to_vec()),
        ("sg00/Pool.bin".into(), pool),
        ("sg00/DVE.bin".into(), dve),
    ];
    let planted = neff(&gzip(&members(&errs)), 1, 1, "planted_errors");
    // 4. No key schema in def.json: the engine-named members, said so (gzip, pkg_version 2).
    let fb: Vec<(String, Vec<u8>)> = vec![
        ("sg00/def.json".into(), br#"{"var": {}}"#.to_vec()),
        ("sg00/PE.bin".into(), program.to_vec()),
        ("sg00/SP.bin".into(), program.to_vec()),
        ("sg00/weights.bin".into(), consts.clone()),
    ];
    let fallback = neff(&gzip(&members(&fb)), 2, 1, "fallback");
    let unpacked: Vec<(&'static str, Vec<u8>)> = vec![
        ("sg00/def.json", def_b.to_vec()),
        ("sg00/PE.bin", program.to_vec()),
        ("sg00/Activation.bin", program.to_vec()),
        ("sg00/Pool.bin", program.to_vec()),
    ];
    (
        vec![
            ("one_subgraph.neff", one),
            ("two_subgraphs_plain.neff", two),
            ("planted_errors.neff", planted),
            ("fallback.neff", fallback),
        ],
        unpacked,
    )
}
