//! Gate inputs of the byte-input targets (stream programs, LUT ordinals, IR queries, banded
//! bytes), each into a caller-owned `Vec<u8>` (cleared first).

use super::case_kind::CaseKind;
use super::rng::SplitMix64;
use crate::subjects::LutTable;
use arbitrary::{Result, Unstructured};

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// The LUT ordinals at the SPEC §6 tables' edges from core's answers: each table's first and
/// last with a wire byte and their neighbours, the gaps between (FACTS §4), far values.
pub fn lut_edge_ordinals() -> &'static [u32] {
    static EDGES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    EDGES.get_or_init(|| {
        let mut v = vec![0, 1, 0x100, 0x1_0000, 0x8000_0000, u32::MAX];
        for t in LutTable::ALL {
            let ok: Vec<u32> = (0..0x100).filter(|&n| t.core(n).is_ok()).collect();
            let (Some(&first), Some(&last)) = (ok.first(), ok.last()) else {
                continue;
            };
            v.extend([first.saturating_sub(1), first, last, last + 1, last + 2]);
            v.extend((first..last).filter(|n| !ok.contains(n)));
        }
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// An ordinal for the LUT targets, biased to [`lut_edge_ordinals`].
pub fn lut_ordinal(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 | 1 => *u.choose(lut_edge_ordinals())?,
        2 => u.int_in_range(0..=40)?,
        _ => u.arbitrary()?,
    })
}

/// A LUT ordinal (valid small; near-valid an edge, maybe a bit flipped; raw any), 4 bytes
/// LE (raw: 1..=4).
pub fn lut_input(r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    out.clear();
    let v = match kind {
        CaseKind::Valid => r.below(32) as u32,
        CaseKind::NearValid => {
            r.pick(lut_edge_ordinals()) ^ if r.below(4) == 0 { 1 << r.below(32) } else { 0 }
        }
        CaseKind::Raw => r.next_u64() as u32,
    };
    let len = if kind == CaseKind::Raw {
        1 + r.below(4) as usize
    } else {
        4
    };
    out.extend_from_slice(&v.to_le_bytes()[..len]);
}

/// Uniform bytes, length by kind: the input of targets that build their case from bytes.
pub fn banded_bytes(r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    out.clear();
    let len = match kind {
        CaseKind::Valid => 64 + r.below(512),
        CaseKind::NearValid => r.below(1536),
        CaseKind::Raw => r.below(256),
    } as usize;
    out.resize(len, 0);
    r.fill(out);
}

/// A program for the judge's `stream_from_input`.
pub fn stream_program(r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    out.clear();
    match kind {
        CaseKind::Raw => {
            let len = r.below(64) as usize;
            out.resize(len, 0);
            r.fill(out);
        }
        _ => {
            // Well-formed groups (0..=255 args, SPEC §5.3) and other bundles.
            out.push(0);
            let groups = 1 + r.below(8);
            for _ in 0..groups {
                if r.below(3) == 0 {
                    let op = if r.below(2) == 0 {
                        r.pick(&[0x01, 0x30, 0xD9, 0xFF])
                    } else {
                        r.byte()
                    };
                    out.extend_from_slice(&[4, op]);
                }
                if r.below(4) == 0 {
                    // a wide group: header with n args, a run of n payloads, one more
                    let n = if r.below(2) == 0 {
                        r.pick(&[4, 5, 15, 16, 31, 32, 63, 64, 127, 128, 254, 255])
                    } else {
                        r.byte()
                    };
                    out.extend_from_slice(&[0x10, n, 0x13, n, 2, r.byte()]);
                    continue;
                }
                let p = r.byte();
                out.extend_from_slice(&[0, p]);
                for _ in 0..=(p % 4) {
                    out.extend_from_slice(&[2, r.byte()]);
                }
            }
            if kind == CaseKind::NearValid {
                let n = 1 + r.below(2);
                for _ in 0..n {
                    let i = r.below(out.len() as u64) as usize;
                    match r.below(3) {
                        0 => out[i] = r.byte(),
                        1 => out[i] ^= 1 << r.below(8),
                        _ => {
                            let cut = r.below(out.len() as u64) as usize;
                            out.truncate(cut.max(1));
                        }
                    }
                }
            }
        }
    }
}

/// An input for the judge's `ir_query_from_input`.
pub fn ir_query_input(r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    out.clear();
    if kind == CaseKind::Raw {
        let len = 1 + r.below(40) as usize;
        out.resize(len, 0);
        r.fill(out);
        return;
    }
    let gate = r.below(6) as u8;
    out.push(gate);
    match gate {
        0 => {
            let (na, no) = (r.below(5) as u8, r.below(4) as u8);
            out.extend_from_slice(&[na, no, r.pick(&[0, 1])]);
            for _ in 0..(na + no) {
                out.push(r.pick(&[0, 1]));
            }
        }
        1 => {
            let f = 1 | 4 | (r.byte() & 0x3A);
            out.push(f);
            if f & 2 != 0 {
                push_u32(out, 2 + r.below(2) as u32);
            } else {
                out.push(2 + r.below(2) as u8);
            }
            let (a, o) = (r.below(40), r.below(3));
            for (bit, v) in [(8u8, a), (16, o), (32, a + 2 + o)] {
                if f & bit != 0 {
                    out.extend_from_slice(&v.to_le_bytes());
                } else {
                    out.push(v as u8);
                }
            }
        }
        2 => push_u32(out, r.below(2) as u32),
        3 => push_u32(out, 11),
        4 => push_u32(out, 2),
        _ => out.extend_from_slice(&(1024 + r.below(3) - 1).to_le_bytes()),
    }
    if kind == CaseKind::NearValid {
        let i = r.below(out.len() as u64) as usize;
        if i == 0 {
            out.push(r.byte());
        } else {
            out[i] ^= 1 << r.below(8);
        }
    }
}
