//! `check` and `neff info` on NEFF files (issue 33, SPEC §12, docs/guarantees.md N1-N4): the
//! samples' planted errors named at their location, every hostile archive refused with exit 2
//! naming the member and the reason and nothing written, memory bounded under a 1 GiB
//! address-space cap.

mod common;

use common::{code, repo_root, stderr, stdout, tmp, tpb, BIN};
use std::path::{Path, PathBuf};
use std::process::Command;
use tpb_neff::build::{gzip, neff, parse_hex_lines, tar, Member};

fn sample(name: &str) -> String {
    repo_root()
        .join("examples/neff")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn program() -> Vec<u8> {
    let text = std::fs::read_to_string(repo_root().join("examples/samples/program.hex")).unwrap();
    parse_hex_lines(&text)
}

/// Every file under `dir` (names and sizes), to see that nothing was written.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.is_dir() {
            v.extend(listing(&p));
        } else {
            v.push((p, m.len()));
        }
    }
    v.sort();
    v
}

#[test]
fn planted_errors_are_named_with_subgraph_engine_member_index_and_offset() {
    let o = tpb(&["check", "--format", "jsonl", &sample("planted_errors.neff")]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let records: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let errors: Vec<(String, String, String, u64, u64, String)> = records
        .iter()
        .filter(|r| r["valid"] == false || r.get("stream_error").is_some())
        .map(|r| {
            let name = r
                .get("predicate")
                .or(r.get("stream_error"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            (
                r["subgraph"].as_str().unwrap().to_string(),
                r["engine"].as_str().unwrap().to_string(),
                r["member"].as_str().unwrap().to_string(),
                r["index"].as_u64().unwrap(),
                r["offset"].as_u64().unwrap(),
                name,
            )
        })
        .collect();
    let s = |x: &str| x.to_string();
    assert_eq!(
        errors,
        vec![
            (
                s("sg00"),
                s("PE"),
                s("sg00/PE.bin"),
                2,
                128,
                s("valid_opcode")
            ),
            (
                s("sg00"),
                s("Pool"),
                s("sg00/Pool.bin"),
                1,
                64,
                s("inst_word_len")
            ),
            (
                s("sg00"),
                s("DVE"),
                s("sg00/DVE.bin"),
                0,
                0,
                s("stray_payload")
            ),
        ]
    );
    // One summary row per subgraph and engine, then the NEFF's line.
    let rows: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r.get("summary").is_some())
        .map(|r| {
            (
                r["subgraph"].as_str().unwrap(),
                r["engine"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("sg00", "PE"),
            ("sg00", "Activation"),
            ("sg00", "Pool"),
            ("sg00", "DVE")
        ]
    );
    let last = records.last().unwrap();
    assert_eq!(last["neff"]["errors"], 3);
    assert_eq!(last["neff"]["integrity"], "sha-256 verified");
    // Text: the location names all five.
    let o = tpb(&["check", &sample("planted_errors.neff")]);
    assert!(
        stdout(&o).contains("planted_errors.neff:sg00/Pool.bin #1 @0x40, engine Pool)"),
        "{}",
        stdout(&o)
    );
    // --max-errors stops at the Nth error across engines; later engines are not linted.
    for (n, streams) in [(1u64, 1), (2, 3)] {
        let o = tpb(&[
            "check",
            "--format",
            "jsonl",
            "--max-errors",
            &n.to_string(),
            &sample("planted_errors.neff"),
        ]);
        assert_eq!(code(&o), 1, "{}", stderr(&o));
        let out = stdout(&o);
        let errors = out
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["valid"] == false || r.get("stream_error").is_some())
            .count();
        assert_eq!(errors as u64, n, "{out}");
        let last: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
        assert_eq!(last["neff"]["stopped"], true, "{out}");
        assert_eq!(last["neff"]["streams"], streams, "{out}");
        assert_eq!(last["neff"]["no_stream"], serde_json::json!([]), "{out}");
    }
    // The same output on every run (engines are linted in parallel).
    for _ in 0..3 {
        assert_eq!(
            stdout(&tpb(&["check", &sample("planted_errors.neff")])),
            stdout(&o)
        );
    }
}

#[test]
fn every_sample_form_is_read_folder_and_engine_files_too() {
    for (name, streams) in [
        ("one_subgraph.neff", 5),
        ("two_subgraphs_plain.neff", 6),
        ("fallback.neff", 2),
        ("unpacked", 3),
    ] {
        let o = tpb(&["check", "--format", "summary", &sample(name)]);
        assert_eq!(code(&o), 0, "{name}: {}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!("{streams} engine streams, ")),
            "{name}: {}",
            stdout(&o)
        );
    }
    let dir = tmp("neff", "engines");
    let pe = dir.join("pe.bin");
    std::fs::write(&pe, program()).unwrap();
    let arg = format!("Pool={}", pe.display());
    let o = tpb(&["check", "--format", "jsonl", "--engine", &arg]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("\"engine\":\"Pool\""), "{}", stdout(&o));
    // An override inside a NEFF replaces what def.json says.
    let o = tpb(&[
        "check",
        "--format",
        "summary",
        "--engine",
        "PE=sg00/Pool.bin",
        &sample("planted_errors.neff"),
    ]);
    assert!(
        stdout(&o).contains("planted_errors.neff:sg00/Pool.bin (sg00 PE): 11 instructions"),
        "{}",
        stdout(&o)
    );
    // neff info lists every member with its role and why.
    let o = tpb(&["neff", "info", &sample("one_subgraph.neff")]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    for want in [
        "sg00/pool.bin",
        "instruction stream (Pool)",
        "engine JSON (SP)",
        "sg00/consts.bin",
        "a .bin no def.json key names as a stream",
        "sha-256 verified",
        "dma 1: sem 45 +16",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A NEFF whose tar holds `members` (gzip, pkg_version 1).
fn archive(members: &[Member<'_>]) -> Vec<u8> {
    neff(&gzip(&tar(members)), 1, 1, "hostile")
}

fn member<'a>(name: &'a str, typeflag: u8, link: &'a str, data: &'a [u8]) -> Member<'a> {
    Member {
        name,
        typeflag,
        link,
        data,
    }
}

/// (case, member path, tar typeflag, link name, data, what the message names)
type BadMember = (
    &'static str,
    &'static str,
    u8,
    &'static str,
    &'static [u8],
    &'static [&'static str],
);

#[test]
fn hostile_archives_exit_2_naming_the_member_and_the_reason_and_write_nothing() {
    let prog = program();
    let def = br#"{"pe_instr": "PE.bin"}"#.as_slice();
    let good = |extra: Member<'static>| -> Vec<u8> {
        let def: &'static [u8] = br#"{"pe_instr": "PE.bin"}"#;
        let pe: &'static [u8] = Box::leak(program().into_boxed_slice());
        archive(&[
            Member::file("sg00/def.json", def),
            Member::file("sg00/PE.bin", pe),
            extra,
        ])
    };
    #[rustfmt::skip]
    let bad_members: [BadMember; 7] = [
        ("dotdot", "sg00/../../evil", b'0', "", b"x", &["sg00/../../evil", "`..`"]),
        ("absolute", "/etc/evil", b'0', "", b"x", &["/etc/evil", "absolute"]),
        ("symlink", "sg00/link", b'2', "/etc/passwd", b"", &["sg00/link", "symlink"]),
        ("hardlink", "sg00/hard", b'1', "sg00/PE.bin", b"", &["sg00/hard", "hard link"]),
        ("device", "sg00/dev", b'3', "", b"", &["sg00/dev", "character device"]),
        ("fifo", "sg00/fifo", b'6', "", b"", &["sg00/fifo", "FIFO"]),
        ("duplicate", "./sg00/PE.bin", b'0', "", b"", &["sg00/PE.bin", "two members"]),
    ];
    let mut cases: Vec<(&str, Vec<u8>, &[&str])> = bad_members
        .iter()
        .map(|&(case, path, flag, link, data, says)| {
            (case, good(member(path, flag, link, data)), says)
        })
        .collect();
    cases.extend::<[(&str, Vec<u8>, &[&str]); 2]>([
        (
            "missing",
            archive(&[Member::file(
                "sg00/def.json",
                br#"{"pe_instr": "nope.bin"}"#,
            )]),
            &["sg00/def.json", "pe_instr", "no such member"],
        ),
        (
            "folder-named",
            archive(&[
                Member::file("sg00/def.json", br#"{"pe_instr": "d"}"#),
                member("sg00/d/", b'5', "", b""),
            ]),
            &["sg00/def.json", "a folder, not a regular member"],
        ),
    ]);
    // data_size that lies (one byte more than the file holds).
    let mut lying = good(Member::file("sg00/x", b""));
    let n = lying.len() as u64 - 1024 + 1;
    lying[0x10..0x18].copy_from_slice(&n.to_le_bytes());
    cases.push(("lying", lying, &["data_size", "more than"]));
    // A hash mismatch.
    let mut hash = archive(&[
        Member::file("sg00/def.json", def),
        Member::file("sg00/PE.bin", &prog),
    ]);
    hash[0xAC] ^= 0xFF;
    cases.push(("hash", hash, &["sha-256 hash mismatch"]));
    // A truncated gzip (data_size says the shorter length).
    let whole = gzip(&tar(&[
        Member::file("sg00/def.json", def),
        Member::file("sg00/PE.bin", &prog),
    ]));
    let cut = neff(&whole[..whole.len() - 20], 1, 1, "cut");
    cases.push(("truncated", cut, &["gzip", "truncated"]));
    // A gzip bomb: 1 GiB of zeros in about 1 MiB (over 200:1 and 64 MiB).
    let bomb = neff(
        &gzip_repeated(&tar_head("sg00/PE.bin", 1 << 30), &[0u8; 1 << 20], 1024),
        1,
        1,
        "bomb",
    );
    cases.push((
        "bomb",
        bomb,
        &["sg00/PE.bin", "decompressed payload", "cap"],
    ));
    let dir = tmp("neff", "hostile");
    for (i, (name, bytes, says)) in cases.iter().enumerate() {
        // Named by number: the file name must not hold the reason the message gives.
        let p = dir.join(format!("case{i}.neff"));
        std::fs::write(&p, bytes).unwrap();
        let before = listing(&dir);
        for cmd in [&["check", "--format", "summary"][..], &["neff", "info"][..]] {
            let mut args = cmd.to_vec();
            let ps = p.to_string_lossy().into_owned();
            args.push(&ps);
            let o = Command::new(BIN)
                .args(&args)
                .current_dir(&dir)
                .output()
                .unwrap();
            assert_eq!(code(&o), 2, "{name} {cmd:?}: {}{}", stdout(&o), stderr(&o));
            let e = stderr(&o);
            for s in *says {
                assert!(e.contains(s), "{name} {cmd:?}: {s:?} not in {e}");
            }
            assert_eq!(listing(&dir), before, "{name}: something was written");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_neff_path_that_is_a_symlink_or_a_fifo_is_refused_without_blocking() {
    let dir = tmp("neff", "special");
    let real = sample("one_subgraph.neff");
    let link = dir.join("link.neff");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let fifo = dir.join("pipe.neff");
    common::mkfifo(&fifo);
    for (p, kind) in [(&link, "symlink"), (&fifo, "FIFO")] {
        for cmd in [&["check"][..], &["neff", "info"][..]] {
            let mut args = cmd.to_vec();
            let ps = p.to_string_lossy().into_owned();
            args.push(&ps);
            let o = tpb(&args);
            assert_eq!(code(&o), 2, "{args:?}");
            assert!(stderr(&o).contains(kind), "{args:?}: {}", stderr(&o));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `tpbconform args` under a 1 GiB address-space cap.
fn capped(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", 1 << 20))
        .arg(BIN)
        .args(args)
        .output()
        .unwrap()
}

/// A tar header for a member of `size` bytes (its data follows).
fn tar_head(name: &str, size: u64) -> Vec<u8> {
    let mut t = Vec::new();
    tpb_neff::tar::write_member(&mut t, name, b'0', "", b"");
    t[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
    t[148..156].copy_from_slice(b"        ");
    let sum: u32 = t[..512].iter().map(|&b| u32::from(b)).sum();
    t[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    t
}

/// Raw deflate of `data` ending on a byte boundary (a full flush, no final block), so such
/// pieces can be concatenated: a fresh compressor references nothing before it.
fn deflate_piece(data: &[u8]) -> Vec<u8> {
    let mut c = flate2::Compress::new(flate2::Compression::best(), false);
    let mut out = Vec::with_capacity(data.len() / 2 + 1024);
    c.compress_vec(data, &mut out, flate2::FlushCompress::Full)
        .unwrap();
    out
}

/// A gzip stream of `head`, then `chunk` `times` times (compressed once, repeated), then
/// the rest: built in memory the size of one compressed chunk times `times`, fast in a
/// debug build. The CRC is not computed (readers here stop or check it; see the caller).
fn gzip_repeated(head: &[u8], chunk: &[u8], times: usize) -> Vec<u8> {
    let mut g = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    g.extend(deflate_piece(head));
    let piece = deflate_piece(chunk);
    for _ in 0..times {
        g.extend_from_slice(&piece);
    }
    g.extend([0x03, 0x00]); // a final, empty fixed-Huffman block
    g.extend([0u8; 8]); // CRC32 and ISIZE: never reached by the readers here
    g
}

#[test]
fn a_big_neff_is_read_within_a_1_gib_address_space_cap() {
    let dir = tmp("neff", "capped");
    // 1.25 GiB of constants in sg00, before the def.json that says they are not a stream:
    // too big to hold while undecided, so skipped and never held; the PE stream after them.
    let big_size: u64 = 5 << 28;
    let mut head = tar_head("sg00/weights.bin", big_size);
    // Each 64-byte block: its index, then zeros (about 11:1, under the 200:1 bomb cap).
    let chunk: Vec<u8> = (0..1u32 << 14)
        .flat_map(|i| {
            let mut b = [0u8; 64];
            b[..4].copy_from_slice(&i.to_le_bytes());
            b
        })
        .collect();
    let prog = program();
    let mut tail = Vec::new();
    tpb_neff::tar::write_member(&mut tail, "sg00/PE.bin", b'0', "", &prog);
    tpb_neff::tar::write_member(
        &mut tail,
        "sg00/def.json",
        b'0',
        "",
        br#"{"pe_instr": "PE.bin"}"#,
    );
    tpb_neff::tar::write_end(&mut tail);
    let mut g = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    g.extend(deflate_piece(&std::mem::take(&mut head)));
    let piece = deflate_piece(&chunk);
    for _ in 0..(big_size >> 20) {
        g.extend_from_slice(&piece);
    }
    // The rest, with a final block and a true trailer is not needed: `check` stops at the
    // gzip's end only after the tar's end; the CRC is checked, so compute it for real.
    let mut c = flate2::Compress::new(flate2::Compression::fast(), false);
    let mut out = Vec::with_capacity(tail.len() + 1024);
    c.compress_vec(&tail, &mut out, flate2::FlushCompress::Finish)
        .unwrap();
    g.extend(out);
    let mut crc = flate2::Crc::new();
    crc.update(&head_bytes_for_crc(big_size));
    for _ in 0..(big_size >> 20) {
        crc.update(&chunk);
    }
    crc.update(&tail);
    g.extend(crc.sum().to_le_bytes());
    g.extend(((512 + big_size + tail.len() as u64) as u32).to_le_bytes());
    let big = dir.join("big.neff");
    std::fs::write(&big, neff(&g, 1, 1, "big")).unwrap();
    drop(g);
    let o = capped(&["check", "--format", "summary", &big.to_string_lossy()]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("1 engine streams, 11 instructions, 0 errors"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("sha-256 verified"), "{}", stdout(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

fn head_bytes_for_crc(size: u64) -> Vec<u8> {
    tar_head("sg00/weights.bin", size)
}

/// The gzip-bomb cap (SPEC §12) is the user's to raise: a NEFF whose constants inflate past
/// 200:1 is refused by default (exit 2 naming the option), read with `--max-ratio`.
#[test]
fn max_ratio_raises_the_gzip_bomb_cap() {
    let zeros = vec![0u8; 80 << 20];
    let prog = program();
    let payload = gzip(&tar(&[
        Member::file("sg00/def.json", br#"{"pe_instr": "PE.bin"}"#),
        Member::file("sg00/consts.bin", &zeros),
        Member::file("sg00/PE.bin", &prog),
    ]));
    assert!(payload.len() < (80 << 20) / 200, "{} bytes", payload.len());
    let dir = tmp("neff", "max_ratio");
    let p = dir.join("zeros.neff");
    std::fs::write(&p, neff(&payload, 1, 1, "zeros")).unwrap();
    let ps = p.to_string_lossy().into_owned();
    for cmd in [&["check", "--format", "summary"][..], &["neff", "info"][..]] {
        let refused = tpb(&[cmd, &[ps.as_str()]].concat());
        assert_eq!(code(&refused), 2, "{cmd:?}: {}", stdout(&refused));
        assert!(
            stderr(&refused).contains("--max-ratio"),
            "{}",
            stderr(&refused)
        );
        let read = tpb(&[cmd, &["--max-ratio", "2000", ps.as_str()]].concat());
        assert_ne!(code(&read), 2, "{cmd:?}: {}", stderr(&read));
        assert!(
            stdout(&read).contains("PE.bin"),
            "{cmd:?}: {}",
            stdout(&read)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `neff info --format jsonl` says what the text says, one JSON object per line, for scripts:
/// the `neff` record, a `member` per member, an `engine` per subgraph engine, then `end` with
/// the counts; a refusal names the path once.
#[test]
fn neff_info_jsonl_lists_every_member_and_engine() {
    let o = tpb(&[
        "neff",
        "info",
        "--format",
        "jsonl",
        &sample("sync_dma.neff"),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let lines: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kind = |v: &serde_json::Value| v["type"].as_str().unwrap().to_string();
    assert_eq!(kind(&lines[0]), "neff");
    assert_eq!(lines[0]["integrity"]["verified"], true);
    assert_eq!(lines[0]["name"], "sync_dma");
    let members: Vec<_> = lines.iter().filter(|v| kind(v) == "member").collect();
    let engines: Vec<_> = lines.iter().filter(|v| kind(v) == "engine").collect();
    let end = lines.last().unwrap();
    assert_eq!(kind(end), "end");
    assert_eq!(end["members"], members.len());
    let streams: Vec<(&str, &str)> = members
        .iter()
        .filter(|m| m["role"] == "stream")
        .map(|m| (m["engine"].as_str().unwrap(), m["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        streams,
        [
            ("PE", "sg00/pe.bin"),
            ("Activation", "sg00/act.bin"),
            ("Pool", "sg00/pool.bin")
        ]
    );
    for e in &engines {
        let named = (e["engine"].as_str().unwrap(), e["member"].as_str().unwrap());
        assert!(streams.contains(&named), "{e}");
    }
    let pool = engines.iter().find(|e| e["engine"] == "Pool").unwrap();
    assert_eq!(pool["dma"][0]["semaphore"], 45);
    assert_eq!(pool["dma"][0]["increment"], 16);
    let gone = sample("nothere.neff");
    let o = tpb(&["neff", "info", "--format", "jsonl", &gone]);
    assert_eq!(code(&o), 2);
    assert_eq!(stderr(&o).matches(&gone).count(), 1, "{}", stderr(&o));
}

/// JSON members were kept parsed, and a parsed tree costs some 40 times its text: six 14 MB
/// JSON members of `[0,0,…]` (a 100 KB NEFF; the text within the 16 MiB per-member and 256 MiB
/// total caps) took 3.2 GB. They are kept as text now (what the caps count) and parsed only
/// when def.json names one, one at a time, never kept parsed.
#[test]
fn json_members_are_kept_as_text_within_a_1_gib_address_space_cap() {
    let dir = tmp("neff", "json_memory");
    let mut junk = b"[".to_vec();
    junk.extend(b"0,".repeat(7_000_000));
    junk.extend(b"0]");
    let names: Vec<String> = (0..6).map(|i| format!("sg00/x{i}.json")).collect();
    let prog = program();
    let mut members = vec![
        Member::file("sg00/def.json", br#"{"pe_instr": "PE.bin"}"#),
        Member::file("sg00/PE.bin", &prog),
    ];
    members.extend(names.iter().map(|n| Member::file(n, &junk)));
    let p = dir.join("json.neff");
    std::fs::write(&p, neff(&gzip(&tar(&members)), 1, 1, "json")).unwrap();
    let o = capped(&[
        "check",
        "--format",
        "summary",
        "--max-ratio",
        "100000",
        &p.to_string_lossy(),
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("1 engine streams, 11 instructions, 0 errors"),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The engine model (SPEC §11) kept every instruction of every stream as a step and its offset
/// until the last stream was read: a 1 GiB stream took 400 MB, a 3 GiB one (a 25 MB NEFF, read
/// with `--max-ratio`) failed under the 1 GiB address-space cap. It keeps 256 MiB of streams
/// per NEFF now; the subgraph of a stream past it is linted whole and its sync line says that
/// it was not analysed.
#[test]
fn the_engine_model_keeps_a_bounded_share_of_big_streams() {
    let dir = tmp("neff", "sync_memory");
    let size: u64 = 3 << 30;
    let mut head = Vec::new();
    tpb_neff::tar::write_member(
        &mut head,
        "sg00/def.json",
        b'0',
        "",
        br#"{"pe_instr": "PE.bin", "pool_instr": "Pool.bin"}"#,
    );
    let prog = program();
    tpb_neff::tar::write_member(&mut head, "sg00/Pool.bin", b'0', "", &prog[..64]);
    head.extend(tar_head("sg00/PE.bin", size));
    // 64-byte LDWEIGHTS skeletons (valid; SPEC §5.3), 1 MiB at a time.
    let chunk: Vec<u8> = (0..1 << 14)
        .flat_map(|_| {
            let mut b = [0u8; 64];
            b[..2].copy_from_slice(&[0x01, 0x10]);
            b
        })
        .collect();
    let mut tail = Vec::new();
    tpb_neff::tar::write_end(&mut tail);
    let mut g = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    g.extend(deflate_piece(&head));
    let piece = deflate_piece(&chunk);
    let mut crc = flate2::Crc::new();
    crc.update(&head);
    for _ in 0..(size >> 20) {
        g.extend_from_slice(&piece);
        crc.update(&chunk);
    }
    let mut c = flate2::Compress::new(flate2::Compression::fast(), false);
    let mut out = Vec::with_capacity(tail.len() + 1024);
    c.compress_vec(&tail, &mut out, flate2::FlushCompress::Finish)
        .unwrap();
    g.extend(out);
    crc.update(&tail);
    g.extend(crc.sum().to_le_bytes());
    g.extend(((head.len() as u64 + size + tail.len() as u64) as u32).to_le_bytes());
    let p = dir.join("long.neff");
    std::fs::write(&p, neff(&g, 1, 1, "long")).unwrap();
    drop(g);
    let o = capped(&[
        "check",
        "--format",
        "summary",
        "--max-ratio",
        "100000",
        &p.to_string_lossy(),
    ]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 engine streams, 50331649 instructions, 0 errors"),
        "{out}"
    );
    assert!(
        out.contains("sg00: sync: not analysed (its streams are past the 256 MiB"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A NEFF may hold up to 100 000 members, each its own subgraph: grouping the streams by
/// subgraph for the engine model searched a list per stream (quadratic: 490 s for 100 000
/// one-instruction subgraphs in a 700 KB NEFF, debug build); through an index, about 12 s.
#[test]
fn a_neff_of_100000_subgraphs_is_checked_in_linear_time() {
    let dir = tmp("neff", "many_subgraphs");
    let prog = program();
    let names: Vec<String> = (0..100_000).map(|i| format!("sg{i}/PE.bin")).collect();
    let members: Vec<Member> = names.iter().map(|n| Member::file(n, &prog[..64])).collect();
    let p = dir.join("many.neff");
    std::fs::write(&p, neff(&gzip(&tar(&members)), 1, 1, "many")).unwrap();
    let start = std::time::Instant::now();
    let o = tpb(&["check", "--format", "summary", &p.to_string_lossy()]);
    let took = start.elapsed();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("100000 subgraphs, 100000 engine streams, 100000 instructions"),
        "{}",
        stdout(&o)
    );
    assert!(took.as_secs() < 120, "took {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A NEFF given on stdin or through a pipe (`check - < x.neff`, `check <(cat x.neff)`, `decode
/// x.neff`) was read as bundles: verdicts on its header and compressed bytes, exit 1 when its
/// size is a multiple of 64 ("invalid"), else a length error; `neff info -` said "-: No such
/// file". Each now refuses it (exit 2), saying it looks like a NEFF and how to give it.
#[test]
fn a_neff_given_as_bundles_or_on_stdin_is_named_as_a_neff() {
    let dir = tmp("neff", "stdin");
    let prog = program();
    let t = tar(&[
        Member::file("sg00/def.json", br#"{"pe_instr": "PE.bin"}"#),
        Member::file("sg00/PE.bin", &prog),
    ]);
    let bytes = neff(&t, 1, 1, "stdin"); // a plain tar payload: 1024 + 512 * k bytes
    assert_eq!(bytes.len() % 64, 0);
    let p = dir.join("x.bin");
    std::fs::write(&p, &bytes).unwrap();
    let file = p.to_string_lossy().into_owned();
    for (args, stdin) in [
        (vec!["check", "-"], true),
        (vec!["decode", "-"], true),
        (vec!["explain", &file], false),
        (vec!["decode", &file], false),
    ] {
        let mut c = Command::new(BIN);
        c.args(&args);
        c.stdin(if stdin {
            std::process::Stdio::from(std::fs::File::open(&p).unwrap())
        } else {
            std::process::Stdio::null()
        });
        let o = c.output().unwrap();
        assert_eq!(code(&o), 2, "{args:?}: {}{}", stdout(&o), stderr(&o));
        assert!(
            stderr(&o).contains("looks like a NEFF"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{args:?}: {}", stdout(&o));
    }
    let o = tpb(&["neff", "info", "-"]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("not from stdin"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A name from a NEFF (a tar member, def.json's file name, the NEFF's path) cannot forge an
/// output line or send a terminal escape: `check`'s text and summary lines and `neff info`'s
/// text show its control characters escaped as `char::escape_debug` writes them (`\n`,
/// `\u{1b}`); JSONL carries the exact name.
#[test]
fn member_names_with_control_characters_cannot_forge_output_lines() {
    let prog = program();
    let file = "PE.bin\n#0 0x01 LDWEIGHTS: valid\u{1b}[2J";
    let member = format!("sg00/{file}");
    // What text output shows for `member` (written out by hand from the escaping rule).
    let shown_member = r"sg00/PE.bin\n#0 0x01 LDWEIGHTS: valid\u{1b}[2J";
    let def = serde_json::json!({ "pe_instr": file }).to_string();
    let payload = gzip(&tar(&[
        Member::file("sg00/def.json", def.as_bytes()),
        Member::file(&member, &prog),
    ]));
    let dir = tmp("neff", "control_names");
    let p = dir.join("m\n\u{7}.neff");
    std::fs::write(&p, neff(&payload, 1, 1, "m")).unwrap();
    let ps = p.to_str().unwrap();
    let shown_path = format!(r"{}/m\n\u{{7}}.neff", dir.to_str().unwrap());
    let controls = |s: &str| s.chars().any(|c| c != '\n' && c.is_control());

    let jsonl = tpb(&["check", "--format", "jsonl", ps]);
    assert_ne!(code(&jsonl), 2, "{}", stderr(&jsonl));
    let records: Vec<serde_json::Value> = stdout(&jsonl)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let streams: Vec<_> = records
        .iter()
        .filter(|r| r.get("member").is_some())
        .collect();
    assert!(!streams.is_empty(), "{records:?}");
    for r in &streams {
        assert_eq!(r["member"], member.as_str(), "{r}");
        assert_eq!(r["source"], format!("{ps}:{member}").as_str(), "{r}");
    }

    let text = tpb(&["check", ps]);
    assert_eq!(code(&text), code(&jsonl), "{}", stderr(&text));
    let text = stdout(&text);
    assert!(!controls(&text), "{text:?}");
    // One text line per JSONL record: no line forged.
    assert_eq!(text.lines().count(), records.len(), "{text}");
    let source = format!("{shown_path}:{shown_member}");
    for l in text.lines() {
        let at = format!("({source} #");
        assert!(
            l.contains(&at)
                || l.starts_with(&format!("{source} (sg00 PE): "))
                || l.starts_with(&format!("{shown_path}: 1 subgraphs")),
            "{l:?}"
        );
    }

    let summary = stdout(&tpb(&["check", "--format", "summary", ps]));
    assert!(!controls(&summary), "{summary:?}");
    assert_eq!(summary.lines().count(), 2, "{summary}");

    let info = tpb(&["neff", "info", ps]);
    assert_eq!(code(&info), 0, "{}", stderr(&info));
    let info = stdout(&info);
    assert!(!controls(&info), "{info:?}");
    assert!(info.starts_with(&format!("{shown_path}: NEFF\n")), "{info}");
    let lines: Vec<&str> = info.lines().collect();
    let at = lines
        .iter()
        .position(|l| *l == "members (2):")
        .expect(&info);
    assert!(lines[at + 1].starts_with("  sg00/def.json "), "{info}");
    assert!(
        lines[at + 2].starts_with(&format!("  {shown_member} ")),
        "{info}"
    );
    assert_eq!(lines[at + 3], "subgraph sg00:", "{info}");
    assert_eq!(
        lines[at + 4],
        format!("  PE         {shown_member}"),
        "{info}"
    );
    assert_eq!(lines.len(), at + 5, "{info}");
    let _ = std::fs::remove_dir_all(&dir);
}
