//! The scanner end to end on NEFFs written by `tpb_neff::build`: streams found by both key
//! schemas and the fallback, in any tar order, and hostile payloads refused by name.

use std::io::Read;
use tpb_neff::build::{gzip, neff, tar, Member};
use tpb_neff::payload::Limits;
use tpb_neff::{scan_file, Engine, Integrity, NeffError, Report, StreamRef, StreamSink};

fn parse(s: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(s).map_err(|e| e.to_string())
}

#[derive(Default, Debug)]
struct Collect(Vec<(String, Engine, String, Vec<u8>)>);

impl StreamSink for Collect {
    fn stream(&mut self, s: &StreamRef, data: &mut dyn Read) -> Result<bool, NeffError> {
        let mut v = Vec::new();
        data.read_to_end(&mut v)
            .map_err(|e| tpb_neff::scan::error_of(&e))?;
        self.0
            .push((s.subgraph.clone(), s.engine, s.member.clone(), v));
        Ok(false)
    }
}

fn scan(bytes: &[u8], limits: &Limits) -> Result<(Report, Collect), NeffError> {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.neff");
    std::fs::write(&p, bytes).unwrap();
    let mut c = Collect::default();
    let (_, r) = scan_file(&p, limits, parse, &[], &mut c)?;
    Ok((r, c))
}

const PE: &[u8] = &[
    0x01, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0,
];

fn schema_a(def_first: bool) -> Vec<u8> {
    let def =
        br#"{"pe": "pe.json", "pool": "pool.json", "dma_queue": {"qPool": {"num_queues": 16}}}"#;
    let pe_json = br#"{"instr": "pe.bin"}"#;
    let pool_json =
        br#"{"instr": "Pool.bin", "dma": [{"id": 7, "queue": "qPool", "semaphore": 45}]}"#;
    let mut m = vec![
        Member::file("./sg00/pe.bin", PE),
        Member::file("./sg00/Pool.bin", PE),
        Member::file("./sg00/consts.bin", b"not a stream"),
    ];
    let jsons = vec![
        Member::file("./sg00/def.json", def),
        Member::file("./sg00/pe.json", pe_json),
        Member::file("./sg00/pool.json", pool_json),
    ];
    if def_first {
        let mut j = jsons;
        j.extend(m);
        m = j;
    } else {
        m.extend(jsons);
    }
    tar(&m)
}

#[test]
fn schema_a_in_either_order_finds_both_streams_and_the_dma_increments() {
    for def_first in [true, false] {
        let bytes = neff(&gzip(&schema_a(def_first)), 1, 1, "a");
        let (r, c) = scan(&bytes, &Limits::default()).unwrap();
        assert_eq!(
            r.integrity,
            Some(Integrity::Verified(tpb_neff::HashKind::Sha256))
        );
        assert_eq!(r.passes, 1);
        let got: Vec<_> = c.0.iter().map(|(_, e, m, _)| (*e, m.as_str())).collect();
        assert_eq!(
            got,
            vec![(Engine::Pe, "sg00/pe.bin"), (Engine::Pool, "sg00/Pool.bin")]
        );
        assert!(c.0.iter().all(|x| x.3 == PE));
        let pool = &r.subgraphs[0].engines[1];
        assert_eq!(pool.dma[0].semaphore, Some(45));
        assert_eq!(pool.dma[0].increment(), Some(16));
        let consts = r
            .members
            .iter()
            .find(|m| m.name == "sg00/consts.bin")
            .unwrap();
        assert_eq!(consts.role, tpb_neff::Role::Other);
    }
}

#[test]
fn streams_that_do_not_fit_while_undecided_are_read_in_a_second_pass() {
    let bytes = neff(&schema_a(false), 2, 1, "a");
    let limits = Limits {
        max_pending: 10,
        ..Limits::default()
    };
    let (r, c) = scan(&bytes, &limits).unwrap();
    assert_eq!(r.passes, 2);
    assert_eq!(
        r.integrity,
        Some(Integrity::Verified(tpb_neff::HashKind::Md5))
    );
    assert_eq!(c.0.len(), 2);
}

#[test]
fn schema_b_and_the_fallback_match_names_without_regard_to_case() {
    let t = tar(&[
        Member::file("sg00/PE.BIN", PE),
        Member::file("sg00/def.json", br#"{"PE_instr": "pe.bin"}"#),
        Member::file("sg01/def.json", br#"{"var": {}}"#),
        Member::file("sg01/Activation.bin", PE),
        Member::file("sg01/other.bin", PE),
    ]);
    let (r, c) = scan(&neff(&t, 7, 2, "b"), &Limits::default()).unwrap();
    assert_eq!(r.integrity, Some(Integrity::NotVerified { pkg_version: 7 }));
    let got: Vec<_> =
        c.0.iter()
            .map(|(s, e, m, _)| (s.as_str(), *e, m.as_str()))
            .collect();
    assert_eq!(
        got,
        vec![
            ("sg00", Engine::Pe, "sg00/PE.BIN"),
            ("sg01", Engine::Act, "sg01/Activation.bin")
        ]
    );
    assert!(r.members[3].why.contains("fallback"), "{:?}", r.members[3]);
}

#[test]
fn hostile_payloads_are_refused_naming_the_member() {
    let good = gzip(&schema_a(true));
    // A hash that does not match.
    let mut b = neff(&good, 1, 1, "a");
    b[0xAC] ^= 1;
    assert!(matches!(
        scan(&b, &Limits::default()),
        Err(NeffError::HashMismatch { .. })
    ));
    // A truncated gzip (data_size tells the truth about the shorter payload).
    let cut = &good[..good.len() / 2];
    let e = scan(&neff(cut, 1, 1, "a"), &Limits::default()).unwrap_err();
    assert!(
        matches!(&e, NeffError::Gzip { reason, .. } if reason.contains("truncated")),
        "{e}"
    );
    // data_size that lies.
    let mut b = neff(&good, 1, 1, "a");
    b[0x10..0x18].copy_from_slice(&(good.len() as u64 + 1).to_le_bytes());
    assert!(matches!(
        scan(&b, &Limits::default()),
        Err(NeffError::DataSize { .. })
    ));
    // A gzip bomb: 8 MiB of zeros in a member, capped at 1 MiB here.
    let zeros = vec![0u8; 8 << 20];
    let bomb = gzip(&tar(&[Member::file("sg00/PE.bin", &zeros)]));
    let limits = Limits {
        min_cap: 1 << 20,
        ..Limits::default()
    };
    let e = scan(&neff(&bomb, 1, 1, "a"), &limits).unwrap_err();
    assert!(
        matches!(&e, NeffError::TooBig { member, .. } if member == "sg00/PE.bin"),
        "{e}"
    );
    // def.json naming a member that is not there, or a folder.
    let t = tar(&[
        Member::file(
            "sg00/def.json",
            br#"{"pe_instr": "PE.bin", "act_instr": "x"}"#,
        ),
        Member::file("sg00/PE.bin", PE),
        Member {
            name: "sg00/x/",
            typeflag: b'5',
            link: "",
            data: b"",
        },
    ]);
    let e = scan(&neff(&t, 1, 1, "a"), &Limits::default()).unwrap_err();
    assert!(
        matches!(&e, NeffError::Missing { reason, .. } if reason.contains("folder")),
        "{e}"
    );
    // Two members matching one name without regard to case.
    let t = tar(&[
        Member::file("sg00/def.json", br#"{"pe_instr": "PE.bin"}"#),
        Member::file("sg00/PE.bin", PE),
        Member::file("sg00/pe.bin", PE),
    ]);
    assert!(matches!(
        scan(&neff(&t, 1, 1, "a"), &Limits::default()),
        Err(NeffError::Ambiguous { .. })
    ));
}

/// RFC 1952 §2.2: a gzip file is a series of members, and `gzip -dc` reads them all; a tar split
/// across two members (as `pigz` or `cat a.gz b.gz` write it) is read to its end, and bytes after
/// the last member that do not start another are hashed, not read.
#[test]
fn a_payload_of_several_gzip_members_is_read_to_its_end() {
    let whole = schema_a(true);
    let cut = 1536; // inside the member list: the streams are in the second member
    let mut payload = gzip(&whole[..cut]);
    payload.extend(gzip(&whole[cut..]));
    let one = scan(&neff(&gzip(&whole), 1, 1, "a"), &Limits::default()).unwrap();
    let two = scan(&neff(&payload, 1, 1, "a"), &Limits::default()).unwrap();
    assert_eq!(two.1 .0.len(), 2, "both streams of the second member");
    assert_eq!(format!("{:?}", one.1), format!("{:?}", two.1));
    payload.extend([0u8; 40]);
    let padded = scan(&neff(&payload, 1, 1, "a"), &Limits::default()).unwrap();
    assert_eq!(format!("{:?}", one.1), format!("{:?}", padded.1));
    assert_eq!(
        padded.0.integrity,
        Some(Integrity::Verified(tpb_neff::HashKind::Sha256))
    );
}

/// A PAX record giving a member of a still-undecided subgraph a size of u64::MAX, after another
/// member is held: the pending sum overflowed (`attempt to add with overflow` panicked in a
/// debug build; a release build wrapped and tried to allocate the member whole). Now the member
/// does not fit the pending cap and the tar, cut short, is refused naming it.
#[test]
fn a_member_of_size_u64_max_after_a_held_one_is_refused_not_a_panic() {
    let size = "size=18446744073709551615\n";
    let rec = format!("{} {size}", size.len() + 3);
    assert_eq!(rec.len(), size.len() + 3);
    let mut t = tar(&[
        Member::file("sg00/PE.bin", PE),
        Member {
            name: "PaxHeader",
            typeflag: b'x',
            link: "",
            data: rec.as_bytes(),
        },
        Member::file("sg00/big.bin", b""),
    ]);
    t.truncate(t.len() - 1024); // no end blocks: the payload ends inside big.bin
    let e = scan(&neff(&gzip(&t), 1, 1, "a"), &Limits::default()).unwrap_err();
    assert!(
        matches!(&e, NeffError::Truncated { member, .. } if member == "sg00/big.bin"),
        "{e}"
    );
}

/// The tar's order is arbitrary (SPEC §12.4), and a folder tarred in sorted order puts
/// `act.json` or `info.json` before `def.json`: a JSON member met before its subgraph's
/// def.json decided the subgraph as having no def.json (the fallback), def.json was then
/// ignored, and `check` linted nothing and exited 0.
#[test]
fn a_json_member_before_def_json_does_not_hide_def_json() {
    for (first, def) in [
        (
            Member::file("sg00/pe.json", br#"{"instr": "code.bin"}"#),
            &br#"{"pe": "pe.json"}"#[..],
        ),
        (
            Member::file("sg00/info.json", b"{}"),
            &br#"{"pe_instr": "code.bin"}"#[..],
        ),
    ] {
        let t = tar(&[
            first,
            Member::file("sg00/def.json", def),
            Member::file("sg00/code.bin", PE),
        ]);
        let (r, c) = scan(&neff(&gzip(&t), 1, 1, "a"), &Limits::default()).unwrap();
        let got: Vec<_> =
            c.0.iter()
                .map(|(s, e, m, d)| (s.as_str(), *e, m.as_str(), d.len()))
                .collect();
        assert_eq!(got, vec![("sg00", Engine::Pe, "sg00/code.bin", 64)]);
        assert_eq!(r.subgraphs[0].def_json.as_deref(), Some("sg00/def.json"));
    }
}

/// def.json naming one member as two engines' stream: it was linted as the second engine's
/// only, and the first engine's row named it too while no stream was read for it. Refused.
#[test]
fn one_member_named_as_two_engines_streams_is_refused() {
    let t = tar(&[
        Member::file(
            "sg00/def.json",
            br#"{"pe_instr": "PE.bin", "act_instr": "./PE.bin"}"#,
        ),
        Member::file("sg00/PE.bin", PE),
    ]);
    let e = scan(&neff(&gzip(&t), 1, 1, "a"), &Limits::default()).unwrap_err();
    assert!(
        matches!(&e, NeffError::Json { member, reason } if member == "sg00/def.json"
            && reason.contains("sg00/pe.bin is named as the stream of two engines, PE and Activation")),
        "{e}"
    );
}
