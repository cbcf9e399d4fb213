//! The `structured_diff` input format, a generator program: 3 [`config`] bytes, then items
//! (at least one, at most [`MAX_ITEMS`]): a pick byte (`% 10`: 0..=4 a labelled case, 5 a
//! raw image, 6 a stream, 7 one group of any width, 8 a LUT ordinal, 9 an IR query), then an
//! image's 64 bytes, else a length byte and that many body bytes (read followed by [`PAD`]
//! PRNG bytes seeded by their hash).
//!
//! Bytes past `data` come from a PRNG seeded by its hash (an image reads zeros), so a
//! 1-byte input is already a random program; deciding values are single bytes as they are,
//! so comparison tracing can write them. Items are self-delimiting ([`shape`]), which the
//! mutator and crossover ([`super::mutate`]) use.

use super::case_kind::CaseKind;
use super::cases::{case, field_copy, Case};
use super::config::Config;
use super::gate_inputs::{ir_query_input, lut_ordinal};
use super::labels::Expected;
use super::rng::{fnv1a64 as fnv, SplitMix64};
use super::streams::{stream, wide_group};
use super::valid::GenError;
use crate::generation::Generation;
use crate::layout::OPCODES;
use arbitrary::Unstructured;
use std::ops::Range;

pub const MAX_ITEMS: usize = 2;
pub const CONFIG_BYTES: usize = 3;
pub const PAD: usize = 1024;
pub const IMAGE_PICK: u8 = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A labelled case (correlated: unlabelled) and the bytes choosing its encode field list.
    Case(Box<Case>, [u8; 3]),
    /// The 64 bytes after the pick byte, zero-padded past `data`, unlabelled.
    Image([u8; 64]),
    /// A multi-bundle stream (SPEC §5.3).
    Stream(Vec<u8>),
    /// A LUT ordinal.
    Lut(u32),
    /// An IR query, as the `ir_gates` target's input.
    Ir(Vec<u8>),
    /// Core refused a valid instruction (a finding).
    Refused(GenError),
}

/// A parsed program: its config and items with their spans (past `data.len()`: PRNG bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub cfg: Config,
    pub items: Vec<(Range<usize>, Item)>,
}

/// The swarm config: byte 0's low nibble focuses an opcode (weight `1 + 2 * high nibble`;
/// 11..=15: none), byte 1 is `k` (2 bits) and `near`, byte 2 `max_args` (bit 7 from 0xE0).
pub fn config(b: [u8; CONFIG_BYTES]) -> Config {
    let mut weights = [1u8; OPCODES.len()];
    if let Some(w) = weights.get_mut(usize::from(b[0] & 0x0F)) {
        *w = 1 + 2 * (b[0] >> 4);
    }
    Config {
        arch: Generation::default(),
        weights,
        k: b[1] & 0x03,
        near: b[1] & 0xFC,
        // Wide streams cost ~100 bundles a group: one config in 8 (item 7 builds any width).
        max_args: if b[2] >= 0xE0 { b[2] } else { b[2] & 0x7F },
    }
}

fn padded(data: &[u8], seed: u64, pad: usize) -> Vec<u8> {
    let mut buf = Vec::with_capacity(data.len() + pad);
    buf.extend_from_slice(data);
    let mut r = SplitMix64(seed);
    while buf.len() < data.len() + pad {
        buf.extend_from_slice(&r.next_u64().to_le_bytes());
    }
    buf
}

/// Padding for the config and [`MAX_ITEMS`] items of 2 + 255 bytes.
const SHAPE_PAD: usize = CONFIG_BYTES + MAX_ITEMS * 257;

/// The config bytes and each item's (span, pick), without generating the items.
pub fn shape(data: &[u8]) -> Shape {
    shape_in(&padded(data, fnv(data), SHAPE_PAD), data.len())
}

pub type Shape = ([u8; CONFIG_BYTES], Vec<(Range<usize>, u8)>);

fn shape_in(buf: &[u8], len: usize) -> Shape {
    let mut cfg_bytes = [0u8; CONFIG_BYTES];
    cfg_bytes.copy_from_slice(&buf[..CONFIG_BYTES]);
    let mut items = Vec::with_capacity(MAX_ITEMS);
    let mut p = CONFIG_BYTES;
    for i in 0..MAX_ITEMS {
        if i > 0 && p >= len {
            break;
        }
        let pick = buf[p] % 10;
        let end = if pick == IMAGE_PICK {
            p + 65
        } else {
            p + 2 + usize::from(buf[p + 1])
        };
        items.push((p..end, pick));
        p = end;
    }
    (cfg_bytes, items)
}

/// Any byte string is a program.
pub fn program(data: &[u8]) -> Program {
    let buf = padded(data, fnv(data), SHAPE_PAD);
    let (cfg_bytes, spans) = shape_in(&buf, data.len());
    let cfg = config(cfg_bytes);
    let items = spans
        .into_iter()
        .map(|(span, pick)| {
            let item = item(&buf, data.len(), &span, pick, &cfg);
            (span, item)
        })
        .collect();
    Program { cfg, items }
}

pub fn item_at(data: &[u8], span: &Range<usize>, pick: u8, cfg: &Config) -> Option<Item> {
    (span.end <= data.len()).then(|| item(data, data.len(), span, pick, cfg))
}

/// The item at `span` of `buf` (`data`, `len` long, and its padding).
fn item(buf: &[u8], len: usize, span: &Range<usize>, pick: u8, cfg: &Config) -> Item {
    if pick == IMAGE_PICK {
        let mut b = [0u8; 64];
        let real = &buf[(span.start + 1).min(len)..span.end.min(len)];
        b[..real.len()].copy_from_slice(real);
        return Item::Image(b);
    }
    let body = &buf[span.start + 2..span.end];
    let own = padded(body, fnv(body) ^ u64::from(pick), PAD);
    let u = &mut Unstructured::new(&own);
    let refused = |e: GenError| match e {
        GenError::Encode(_) | GenError::NoGenerator { .. } => Item::Refused(e),
        // Not reachable (exhausted bytes yield minimal choices): an empty stream.
        GenError::Arbitrary(_) => Item::Stream(Vec::new()),
    };
    match pick {
        0..=4 => match case(u, cfg) {
            Ok(mut c) => {
                if u.ratio(1, 3).unwrap_or(false) {
                    // A correlated fault, unlabelled.
                    field_copy(&mut c.bundle, &mut SplitMix64(u.arbitrary().unwrap_or(0)));
                    c.expected = Expected::default();
                }
                let mut enc = [0u8; 3];
                let _ = u.fill_buffer(&mut enc);
                Item::Case(Box::new(c), enc)
            }
            Err(e) => refused(e),
        },
        6 => stream(u, cfg).map_or_else(refused, Item::Stream),
        7 => wide_group(u, cfg).map_or_else(refused, Item::Stream),
        8 => Item::Lut(lut_ordinal(u).unwrap_or(0)),
        _ => {
            let kind = CaseKind::of(u.int_in_range(0..=1u64).unwrap_or(0));
            let mut input = Vec::new();
            ir_query_input(
                &mut SplitMix64(u.arbitrary().unwrap_or(0)),
                kind,
                &mut input,
            );
            Item::Ir(input)
        }
    }
}
