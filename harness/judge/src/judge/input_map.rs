//! How a target's raw input bytes become its case (fuzz-friendly: every byte string is a
//! valid input, and the mapping is deterministic).

use crate::subjects::{IrQuery, ScratchPadQuery};

/// The first 64 bytes of `input`, zero-padded.
pub fn bundle_from_input(input: &[u8]) -> [u8; 64] {
    let mut b = [0u8; 64];
    let n = input.len().min(64);
    b[..n].copy_from_slice(&input[..n]);
    b
}

/// `u32` little-endian of the first ≤ 4 bytes of `input`, zero-padded.
#[inline]
pub fn ordinal_from_input(input: &[u8]) -> u32 {
    // Shifted in byte by byte: a short copy into an array read back as a
    // word stalls on store forwarding (on every LUT case).
    input
        .iter()
        .take(4)
        .enumerate()
        .fold(0u32, |v, (k, &b)| v | u32::from(b) << (8 * k))
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0 }
    }
    fn u8(&mut self) -> u8 {
        let v = self.b.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        v
    }
    /// The next `n` bytes, little-endian.
    fn le(&mut self, n: usize) -> u64 {
        (0..n).fold(0, |v, k| v | u64::from(self.u8()) << (8 * k))
    }
}

/// A canonical valid 0x85 header announcing `n_args` arguments.
pub fn group_header(n_args: u8, function_id: u8) -> [u8; 64] {
    let mut b = crate::generators::stream_program::header(n_args, u16::from(n_args) + 2);
    b[0x0E] = function_id;
    b
}

/// A canonical valid 0x86 payload whose 48-byte AP is filled with `fill`.
pub fn group_payload(fill: u8) -> [u8; 64] {
    let mut b = [fill; 64];
    b[0] = 0x86;
    b[1] = 0x10;
    b[2..0x0F].fill(0);
    b[0x0F] = 0x01;
    b
}

fn flip(mut b: [u8; 64], bit: usize) -> [u8; 64] {
    let bit = bit % 512;
    b[bit / 8] ^= 1 << (bit % 8);
    b
}

/// Most bundles [`stream_from_input`] builds (a 255-argument group is 257).
pub const MAX_STREAM_BUNDLES: usize = 600;

/// Maps a raw input to a bundle stream for target `custom_op_group`: byte 0 = flags (bit 0:
/// append `(flags >> 1) % 63 + 1` trailing bytes); then pairs `(op, p)`, at most 48, each
/// appending one bundle (a run of `p` bundles for `op % 8 == 3` with bit 4 set), at most
/// [`MAX_STREAM_BUNDLES`]:
///
/// | `op % 8` | bundle |
/// |---|---|
/// | 0 | valid header, `function_id = p`, `num_arguments = p` if `op` bit 4 is set (the whole u8 domain, SPEC §5.3), else `p % 4` |
/// | 1 | header with `num_payloads ≠ num_arguments + 2` |
/// | 2 | valid payload, AP filled with `p` |
/// | 3 | valid payload, AP filled with `p`; with `op` bit 4 set, `p` such payloads (fills a wide group) |
/// | 4 | other bundle `[p, 0x10, 0, …]` |
/// | 5 | valid header (`p % 4` args) with bit `(2p + (op>>3 & 1)) % 512` flipped |
/// | 6 | valid payload with bit `(2p + (op>>3 & 1)) % 512` flipped |
/// | 7 | header with a scratch descriptor: `byte[0x10]=p&1`, `dword[0x18]=p&2`, `byte[0x1C]=p&4`, `dword[0x14]=p&8` |
pub fn stream_from_input(input: &[u8]) -> Vec<u8> {
    let flags = input.first().copied().unwrap_or(0);
    let rest = input.get(1..).unwrap_or(&[]);
    // Room for the most it builds (wide runs included), so it never reallocates.
    let mut out = Vec::with_capacity(MAX_STREAM_BUNDLES * 64 + 64);
    for pair in rest.chunks(2).take(48) {
        let op = pair[0];
        let p = pair.get(1).copied().unwrap_or(0);
        let bit = usize::from(p) * 2 + usize::from((op >> 3) & 1);
        let wide = op & 0x10 != 0;
        if op % 8 == 3 && wide {
            let room = MAX_STREAM_BUNDLES.saturating_sub(out.len() / 64);
            for _ in 0..usize::from(p).min(room) {
                out.extend_from_slice(&group_payload(p));
            }
            continue;
        }
        if out.len() / 64 >= MAX_STREAM_BUNDLES {
            break;
        }
        let b = match op % 8 {
            0 => group_header(if wide { p } else { p % 4 }, p),
            1 => {
                let mut h = group_header(p % 4, 0);
                let good = u16::from(p % 4) + 2;
                let np = if p & 0x40 != 0 {
                    good - 1 - u16::from((p >> 2) % 2)
                } else {
                    good + 1 + u16::from((p >> 2) % 3)
                };
                h[0x0C..0x0E].copy_from_slice(&np.to_le_bytes());
                h
            }
            2 | 3 => group_payload(p),
            4 => crate::generators::stream_program::skeleton(p),
            5 => flip(group_header(p % 4, 0), bit),
            6 => flip(group_payload(0), bit),
            _ => {
                let mut h = group_header(0, 0);
                h[0x10] = p & 1;
                h[0x18] = (p >> 1) & 1;
                h[0x1C] = (p >> 2) & 1;
                h[0x14] = (p >> 3) & 1;
                h
            }
        };
        out.extend_from_slice(&b);
    }
    if flags & 1 != 0 {
        let n = usize::from(flags >> 1) % 63 + 1;
        out.extend(std::iter::repeat_n(0x86, n));
    }
    out
}

/// Deterministic mapping from raw bytes (target `ir_gates`):
/// `b[0] % 6` selects the gate, the rest are its parameters (zeros past the end).
///
/// - 0 checkCustomOp: `n_args = r % 5`, `n_outputs = r % 4`, `arch = r % 4`,
///   then one byte `% 4` per argument then per output memory space;
/// - 1 isCCHavingSBScratchPad: flags byte `f`; `kind = 0x30` if `f & 1` else
///   the next byte; `subkind` = next byte `% 8` (or the next u32 LE when `f & 2`);
///   `sb_arg_global = f & 4`; `n_args`, `n_outputs`, `n_scratch` = one byte each,
///   or the next u64 LE when `f & 8` / `f & 16` / `f & 32`;
/// - 2 cc_dim, 3 rank_id_output, 4 lnc: next u32 LE;
/// - 5 route: next u64 LE.
pub fn ir_query_from_input(input: &[u8]) -> IrQuery {
    let mut r = Reader::new(input);
    match r.u8() % 6 {
        0 => {
            let na = r.u8() % 5;
            let no = r.u8() % 4;
            let arch = r.u8() % 4;
            let args = (0..na).map(|_| r.u8() % 4).collect();
            let outputs = (0..no).map(|_| r.u8() % 4).collect();
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch,
            }
        }
        1 => {
            let f = r.u8();
            let kind = if f & 1 != 0 { 0x30 } else { u32::from(r.u8()) };
            let subkind = if f & 2 != 0 {
                r.le(4) as u32
            } else {
                u32::from(r.u8() % 8)
            };
            let sb_arg_global = f & 4 != 0;
            let mut count = |wide: bool| {
                if wide {
                    r.le(8)
                } else {
                    u64::from(r.u8())
                }
            };
            let n_args = count(f & 8 != 0);
            let n_outputs = count(f & 16 != 0);
            let n_scratch = count(f & 32 != 0);
            IrQuery::SbScratchpad(ScratchPadQuery {
                kind,
                subkind,
                sb_arg_global,
                n_args,
                n_outputs,
                n_scratch,
            })
        }
        2 => IrQuery::CcDim(r.le(4) as u32),
        3 => IrQuery::RankIdOutput(r.le(4) as u32),
        4 => IrQuery::Lnc(r.le(4) as u32),
        _ => IrQuery::Route(r.le(8)),
    }
}
