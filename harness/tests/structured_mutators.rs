//! The `structured_diff` input format and its custom mutator / crossover
//! (`tpbconform::generators::{program, mutate}`).

use arbitrary::Unstructured;
use std::sync::atomic::{AtomicUsize, Ordering};
use tpbconform::generators::mutate::{crossover, field_copy, mutate};
use tpbconform::generators::{self as gen, program, Config, Item, SplitMix64};
use tpbconform::layout::{spans, OPCODES};

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut r = SplitMix64(seed);
    (0..n).map(|_| r.byte()).collect()
}

/// A valid image of each opcode, from several seeds.
fn images() -> Vec<[u8; 64]> {
    let mut out = Vec::new();
    for (k, _) in OPCODES.iter().enumerate() {
        let mut weights = [0u8; OPCODES.len()];
        weights[k] = 1;
        let cfg = Config {
            weights,
            ..Config::default()
        };
        for seed in 0..8 {
            let d = bytes(seed * 31 + k as u64, 200);
            if let Ok(c) = gen::valid_case(&mut Unstructured::new(&d), &cfg) {
                out.push(c.bundle);
            }
        }
    }
    out
}

#[test]
fn field_copy_writes_equal_values_into_two_layout_spans() {
    let mut xor_pair = 0;
    let mut distinct = 0;
    for (n, img) in images().into_iter().enumerate() {
        let layout = spans(img[0]);
        assert!(!layout.is_empty(), "opcode {:#x} has a layout", img[0]);
        for seed in 0..200u64 {
            let mut b = img;
            let (src, dst) = field_copy(&mut b, &mut SplitMix64(seed ^ (n as u64) << 32));
            assert_eq!(src.len(), dst.len());
            assert!(!src.is_empty());
            assert_eq!(b[src.clone()], b[dst.clone()], "{src:?} -> {dst:?}");
            let span_of = |r: &std::ops::Range<usize>| {
                layout
                    .iter()
                    .position(|s| s.off <= r.start && r.end <= s.off + s.len)
            };
            assert!(span_of(&src).is_some() && span_of(&dst).is_some());
            for k in 0..64 {
                if !src.contains(&k) && !dst.contains(&k) {
                    assert_eq!(
                        b[k], img[k],
                        "byte {k:#x} outside {src:?} / {dst:?} changed"
                    );
                }
            }
            if span_of(&src) != span_of(&dst) && b[src.clone()].iter().any(|&v| v != 0) {
                distinct += 1;
            }
            // The correlated class: the same nonzero byte in 0x85's reserved
            // bytes 0x11..0x14 and 0x1D..0x20 at the same position.
            if img[0] == 0x85 && (0..3).any(|k| b[0x11 + k] != 0 && b[0x11 + k] == b[0x1D + k]) {
                xor_pair += 1;
            }
        }
    }
    assert!(distinct > 1000, "{distinct} copies between two spans");
    assert!(
        xor_pair > 0,
        "never an equal nonzero pair in 0x85's reserved dwords"
    );
}

/// Inputs with the same config bytes and at least two complete items each.
fn parents() -> Vec<Vec<u8>> {
    (0..400u64)
        .map(|s| {
            let mut d = bytes(s + 1000, 300);
            d[..3].copy_from_slice(&[0x2B, 0x81, 0x0C]);
            d
        })
        .filter(|d| complete_items(d).len() >= 2)
        .take(40)
        .collect()
}

fn complete_items(d: &[u8]) -> Vec<(Vec<u8>, Item)> {
    let p = program(d);
    (0..p.items.len())
        .filter(|&i| p.items[i].0.end <= d.len())
        .map(|i| (d[p.items[i].0.clone()].to_vec(), p.items[i].1.clone()))
        .collect()
}

#[test]
fn crossover_children_are_items_of_the_parents() {
    let ps = parents();
    assert_eq!(ps.len(), 40);
    let mut from_b = 0;
    let mut out = vec![0u8; 4096];
    for (k, pair) in ps.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        let (ia, ib) = (complete_items(a), complete_items(b));
        for seed in 0..20u32 {
            let n = crossover(a, b, &mut out, seed + 100 * k as u32);
            let child = &out[..n];
            assert_eq!(child[..3], a[..3], "the child keeps a's config");
            let p = program(child);
            for (i, (span, item)) in p.items.iter().enumerate() {
                assert!(span.end <= n, "child item {i} is whole");
                let bytes = &child[span.clone()];
                let from =
                    |xs: &[(Vec<u8>, Item)]| xs.iter().any(|(b, it)| b == bytes && it == item);
                assert!(from(&ia) || from(&ib), "child item {i} is no parent's item");
                if !from(&ia) {
                    from_b += 1;
                }
            }
        }
    }
    assert!(
        from_b > 100,
        "only {from_b} items came from the second parent"
    );
}

static DEFAULTS: AtomicUsize = AtomicUsize::new(0);

fn counting_default(_: &mut [u8], size: usize, _: usize) -> usize {
    DEFAULTS.fetch_add(1, Ordering::Relaxed);
    size
}

#[test]
fn mutate_materialises_cases_as_images() {
    let mut materialised = 0;
    let mut copied = 0;
    for s in 0..30u64 {
        let d = bytes(s + 5000, 120);
        let before = program(&d);
        let bundles: Vec<[u8; 64]> = before
            .items
            .iter()
            .filter_map(|(_, it)| match it {
                Item::Case(c, _) => Some(c.bundle),
                _ => None,
            })
            .collect();
        for seed in 0..40u32 {
            let mut buf = d.clone();
            buf.resize(4096, 0);
            let calls = DEFAULTS.load(Ordering::Relaxed);
            let n = mutate(&mut buf, d.len(), 4096, seed, counting_default);
            if DEFAULTS.load(Ordering::Relaxed) != calls || buf[..n] == d[..] {
                continue;
            }
            let after = program(&buf[..n]);
            assert_eq!(after.cfg, before.cfg, "the config is kept");
            let imgs: Vec<[u8; 64]> = (0..after.items.len())
                .filter(|&i| after.items[i].0.end <= n)
                .filter_map(|i| match after.items[i].1 {
                    Item::Image(b) => Some(b),
                    _ => None,
                })
                .collect();
            if n != d.len() {
                // Materialised (then maybe one field copy): an image item.
                assert!(!imgs.is_empty(), "no image item after materialising");
                if imgs.iter().any(|img| bundles.contains(img)) {
                    materialised += 1;
                }
            } else {
                copied += 1;
            }
        }
    }
    assert!(materialised > 20, "{materialised} exact materialisations");
    assert!(copied > 0, "no field copy on an existing image");
}
