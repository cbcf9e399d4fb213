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

/// A 64-byte instruction (0x01 LDWEIGHTS: a skeleton-only roster opcode, FACTS §1) carrying
/// the events band `band` at 0x04 (FACTS §2).
pub fn sync_insn(band: [u8; 8]) -> Vec<u8> {
    [&[0x01, 0x10, 0, 0][..], &band, &[0; 52]].concat()
}

/// A band: wait mode, wait index, update mode, update index, `semaphore_value` (FACTS §2).
pub fn band(w: u8, wi: u8, u: u8, ui: u8, v: u32) -> [u8; 8] {
    let x = v.to_le_bytes();
    [w, wi, u, ui, x[0], x[1], x[2], x[3]]
}

/// The sync sample NEFFs (SPEC §11; one subgraph, schema A with a DMA descriptor, gzip,
/// pkg_version 1): `sync_deadlock` (PE and Pool each wait on the other's next update),
/// `sync_unsatisfiable` (Pool waits for S\[7\] >= 3, PE increments it twice),
/// `sync_dma` (PE waits for S\[45\] >= 16, which only the Pool JSON's DMA descriptor on the
/// 16-queue set qSyncIO makes), and `sync_clean` (PE feeds Act, Act feeds Pool).
/// Mode bytes: 0x05 WAIT_FOR_SEM_GE_IMM, 0x13 SEM_INC_COMPLETE.
pub fn sync_samples() -> Files {
    let ge = |s: u8, t: u32| band(0x05, s, 0, 0, t);
    let inc = |s: u8| band(0, 0, 0x13, s, 0);
    let stream =
        |bands: &[[u8; 8]]| -> Vec<u8> { bands.iter().flat_map(|b| sync_insn(*b)).collect() };
    let def = br#"{"pe": "pe.json", "act": "act.json", "pool": "pool.json",
 "dma_queue": {"qSyncIO": {"type": "io", "num_queues": 16, "semaphore": 3}}}"#;
    let json = |bin: &str, dma: &str| format!(r#"{{"instr": "{bin}", "dma": [{dma}]}}"#);
    let build = |name: &str, pe: Vec<u8>, act: Vec<u8>, pool: Vec<u8>, pool_dma: &str| {
        let files: Vec<(String, Vec<u8>)> = vec![
            ("sg00/def.json".into(), def.to_vec()),
            ("sg00/pe.json".into(), json("pe.bin", "").into_bytes()),
            ("sg00/act.json".into(), json("act.bin", "").into_bytes()),
            (
                "sg00/pool.json".into(),
                json("pool.bin", pool_dma).into_bytes(),
            ),
            ("sg00/pe.bin".into(), pe),
            ("sg00/act.bin".into(), act),
            ("sg00/pool.bin".into(), pool),
        ];
        let members: Vec<Member<'_>> = files.iter().map(|(n, d)| Member::file(n, d)).collect();
        neff(&gzip(&tar(&members)), 1, 1, name)
    };
    let nop = band(0, 0, 0, 0, 0);
    vec![
        (
            "sync_deadlock.neff",
            build(
                "sync_deadlock",
                stream(&[inc(1), ge(2, 1), inc(3)]),
                stream(&[ge(1, 1), nop]),
                stream(&[ge(3, 1), inc(2)]),
                "",
            ),
        ),
        (
            "sync_unsatisfiable.neff",
            build(
                "sync_unsatisfiable",
                stream(&[inc(7), inc(7)]),
                stream(&[nop]),
                stream(&[nop, ge(7, 3)]),
                "",
            ),
        ),
        (
            "sync_dma.neff",
            build(
                "sync_dma",
                stream(&[ge(45, 16), inc(1)]),
                stream(&[ge(1, 1)]),
                stream(&[nop]),
                r#"{"id": 1, "queue": "qSyncIO", "semaphore": 45}"#,
            ),
        ),
        (
            "sync_clean.neff",
            build(
                "sync_clean",
                stream(&[inc(1), ge(2, 1)]),
                stream(&[ge(1, 1), inc(2), inc(4)]),
                stream(&[ge(4, 1)]),
                "",
            ),
        ),
    ]
}
