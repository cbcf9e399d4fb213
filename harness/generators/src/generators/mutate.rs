//! The `structured_diff` fuzz target's custom mutator and crossover: **materialise** a case
//! item as an image item (so byte mutations act on its wire bytes), **field copy** on an
//! image ([`field_copy`]), **splice** whole items of two parents ([`crossover`]); the rest is
//! libFuzzer's own mutator, passed in as `default`.

pub use super::cases::field_copy;
use super::program::{config, item_at, shape, Item, IMAGE_PICK, MAX_ITEMS};
use super::rng::SplitMix64;
use std::ops::Range;

/// libFuzzer's default mutator: `(data, size, max_size) -> new size`.
pub type DefaultMutate = fn(&mut [u8], usize, usize) -> usize;

/// One mutation of `data[..size]` in place; returns the new size (at most `max_size`).
pub fn mutate(
    data: &mut [u8],
    size: usize,
    max_size: usize,
    seed: u32,
    default: DefaultMutate,
) -> usize {
    let mut r = SplitMix64(u64::from(seed) ^ 0x5EED_F1E1_D0C0_7E00);
    let size = size.min(data.len());
    let max_size = max_size.min(data.len());
    if r.index(4) != 0 {
        return default(data, size, max_size);
    }
    let (_, items) = shape(&data[..size]);
    let images: Vec<usize> = items
        .iter()
        .filter(|(span, pick)| span.end <= size && *pick == IMAGE_PICK)
        .map(|(span, _)| span.start + 1)
        .collect();
    if images.is_empty() || r.index(3) == 0 {
        if let Some((at, new_size)) = materialise(data, size, max_size, &mut r) {
            if r.index(2) == 0 {
                copy_at(data, at, &mut r);
            }
            return new_size;
        }
        if images.is_empty() {
            return default(data, size, max_size);
        }
    }
    copy_at(data, images[r.index(images.len())], &mut r);
    size
}

fn copy_at(data: &mut [u8], at: usize, r: &mut SplitMix64) {
    if let Some(img) = data
        .get_mut(at..at + 64)
        .and_then(|s| <&mut [u8; 64]>::try_from(s).ok())
    {
        field_copy(img, r);
    }
}

/// Replaces one case item with an image of its bundle; returns its offset and the new size.
fn materialise(
    data: &mut [u8],
    size: usize,
    max_size: usize,
    r: &mut SplitMix64,
) -> Option<(usize, usize)> {
    let (cfg_bytes, items) = shape(&data[..size]);
    let cases: Vec<&(Range<usize>, u8)> = items
        .iter()
        .filter(|(span, pick)| span.end <= size && *pick < IMAGE_PICK)
        .collect();
    if cases.is_empty() {
        return None;
    }
    let (span, pick) = cases[r.index(cases.len())];
    let Some(Item::Case(c, _)) = item_at(&data[..size], span, *pick, &config(cfg_bytes)) else {
        return None;
    };
    let mut out = data[..span.start].to_vec();
    out.push(IMAGE_PICK);
    let at = out.len();
    out.extend_from_slice(&c.bundle);
    out.extend_from_slice(&data[span.end..size]);
    if out.len() > max_size {
        return None;
    }
    data[..out.len()].copy_from_slice(&out);
    Some((at, out.len()))
}

/// A child of `a`'s config bytes and whole items of both (at most [`MAX_ITEMS`]); its length.
pub fn crossover(a: &[u8], b: &[u8], out: &mut [u8], seed: u32) -> usize {
    let mut r = SplitMix64(u64::from(seed) ^ 0xC055_0FE2_0000_0000);
    let (cfg_bytes, ia) = shape(a);
    let (_, ib) = shape(b);
    let pool: Vec<&[u8]> = [(ia, a), (ib, b)]
        .into_iter()
        .flat_map(|(items, d)| {
            items
                .into_iter()
                .filter(|(span, _)| span.end <= d.len())
                .map(move |(span, _)| &d[span])
        })
        .collect();
    let mut child = cfg_bytes.to_vec();
    if pool.is_empty() {
        let n = a.len().min(out.len());
        out[..n].copy_from_slice(&a[..n]);
        return n;
    }
    for _ in 0..1 + r.index(MAX_ITEMS) {
        let item = pool[r.index(pool.len())];
        if child.len() + item.len() > out.len() {
            break;
        }
        child.extend_from_slice(item);
    }
    let n = child.len().min(out.len());
    out[..n].copy_from_slice(&child[..n]);
    n
}
