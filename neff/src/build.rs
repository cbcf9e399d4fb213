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
