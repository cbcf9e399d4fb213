//! Validator throughput vs a plain read of the same 1,000,000-bundle buffer.
//!
//! Prints bundles/s for `validate_header`, `validate_payload` and the read
//! baseline (XOR-fold of each bundle's 8 qwords: every byte is loaded and the
//! fold is returned, so nothing is optimised away), and the ratio
//! validator_throughput / read_throughput for each validator. The validators
//! are timed as a caller that counts accepted bundles uses them, and (the
//! `… reason` lines) as one that also reads each rejection's predicate.

use criterion::{black_box, criterion_group, BenchmarkId, Criterion, Throughput};
use std::time::{Duration, Instant};
use tpb_core::validate::{validate_header, validate_payload};
use tpb_core::Bundle;
use tpb_core::Generation;

/// The harness's one PRNG (`generators::SplitMix64`), included as a file:
/// this crate cannot depend on the harness.
#[allow(dead_code, unused_imports)]
#[path = "../../harness/generators/src/generators/rng.rs"]
mod rng;
use rng::SplitMix64;

const N: usize = 1_000_000;

/// Deterministic mix: ~45% valid headers, ~45% valid payloads, ~10% invalid of
/// various predicates (drawn from the harness's SplitMix64).
fn buffer() -> Vec<Bundle> {
    let mut r = SplitMix64(0x9E37_79B9_7F4A_7C15);
    let mut next = move || r.next_u64();
    (0..N)
        .map(|_| {
            let r = next();
            let mut b = [0u8; 64];
            b[1] = 0x10;
            if r & 1 == 0 {
                b[0] = 0x85;
                b[0x0C] = (r >> 8) as u8;
                b[0x0F] = (r >> 16) as u8;
            } else {
                b[0] = 0x86;
                b[0x0F] = 1;
                for (i, x) in b[0x10..].iter_mut().enumerate() {
                    *x = (r >> (i % 56)) as u8;
                }
            }
            b[4] = [0x00, 0x05, 0x85][(r >> 24) as usize % 3];
            b[6] = ((r >> 26) & 1) as u8;
            match (r >> 32) % 40 {
                0 => b[0] = 0xFF,
                1 => b[1] = 0,
                2 => b[4] = 0x07,
                3 => b[0x20] = 1,
                4 => b[0x14] = 1,
                5 => b[0x0D] = 1,
                6 => b[0] = 0xD9,
                _ => {}
            }
            Bundle(b)
        })
        .collect()
}

// The kernels are written out per validator (by `kernels!`) on purpose: one generic kernel over
// the validator (`fn count_ok<V: Fn(..)>`) measured header 0.44x a read against 0.77x for these,
// same run (the inlined error path codegens differently through the closure).
macro_rules! kernels {
    ($validate:ident: $count:ident, $reason:ident) => {
        #[inline(never)]
        fn $count(buf: &[Bundle]) -> usize {
            buf.iter()
                .filter(|b| $validate(black_box(b), Generation::V2).is_ok())
                .count()
        }

        #[inline(never)]
        fn $reason(buf: &[Bundle]) -> usize {
            buf.iter()
                .map(|b| match $validate(black_box(b), Generation::V2) {
                    Ok(()) => 0,
                    Err(e) => e.predicate() as usize + 1,
                })
                .sum()
        }
    };
}
kernels!(validate_header: run_header, run_header_reason);
kernels!(validate_payload: run_payload, run_payload_reason);

#[inline(never)]
fn run_read(buf: &[Bundle]) -> u64 {
    buf.iter().fold(0u64, |acc, b| {
        let q = black_box(b).qwords();
        acc ^ q.iter().fold(0, |a, w| a ^ w)
    })
}

/// Stream-shaped mix: groups of one header + 1..=4 payloads (as the encoder emits
/// them, S000 §C3), with ~5% of records corrupted.
fn grouped_buffer() -> Vec<Bundle> {
    let mut r = SplitMix64(0x2545_F491_4F6C_DD1D);
    let mut next = move || r.next_u64();
    let mut v = Vec::with_capacity(N);
    while v.len() < N {
        let r = next();
        let n_args = (r % 4) as u8;
        let mut h = [0u8; 64];
        h[0] = 0x85;
        h[1] = 0x10;
        h[0x0C] = n_args + 2;
        h[0x0F] = n_args;
        v.push(h);
        for _ in 0..=n_args {
            let mut p = [0u8; 64];
            p[0] = 0x86;
            p[1] = 0x10;
            p[0x0F] = 1;
            p[0x10..0x18].copy_from_slice(&next().to_le_bytes());
            v.push(p);
        }
    }
    v.truncate(N);
    for i in 0..N / 20 {
        let k = (next() as usize) % N;
        if let Some(b) = v.get_mut(k) {
            b[[1usize, 4, 0x0D, 0x20][i % 4]] ^= 0x40;
        }
    }
    v.into_iter().map(Bundle).collect()
}

/// A timed run over a slice of the buffer.
type Run = fn(&[Bundle]) -> u64;

/// Bundles per timed slice: 4 MiB, about a millisecond of work.
const SLICE: usize = 1 << 16;

fn summary(label: &str, buf: &[Bundle]) {
    let reps = 21;
    // Each round streams the whole buffer through every run in turn (so each pass
    // reads it from memory, not cache) and times it slice by slice; a run's time is
    // the sum over slices of its best round. Rounds interleave the runs and slices
    // are short, so load from other processes on a shared machine (descheduling,
    // memory traffic) hits all runs alike and is filtered out per slice.
    let runs: [(&str, Run); 5] = [
        ("read baseline", run_read),
        ("validate_header", |b| run_header(b) as u64),
        ("validate_payload", |b| run_payload(b) as u64),
        ("validate_header reason", |b| run_header_reason(b) as u64),
        ("validate_payload reason", |b| run_payload_reason(b) as u64),
    ];
    let slices = buf.len().div_ceil(SLICE);
    let mut best = vec![vec![Duration::MAX; slices]; runs.len()];
    for _ in 0..reps {
        for (best, (_, f)) in best.iter_mut().zip(runs.iter()) {
            for (b, chunk) in best.iter_mut().zip(buf.chunks(SLICE)) {
                let t = Instant::now();
                black_box(f(black_box(chunk)));
                *b = (*b).min(t.elapsed());
            }
        }
    }
    let total: Vec<Duration> = best.iter().map(|v| v.iter().sum()).collect();
    let rate = |d: Duration| buf.len() as f64 / d.as_secs_f64();
    println!(
        "\n=== {label}: validator throughput (best of {reps} interleaved rounds per {SLICE}-bundle slice, {} bundles) ===",
        buf.len()
    );
    println!(
        "{:<24}: {:>8.1} M bundles/s",
        runs[0].0,
        rate(total[0]) / 1e6
    );
    for (d, (name, _)) in total.iter().zip(runs.iter()).skip(1) {
        println!(
            "{name:<24}: {:>8.1} M bundles/s  ratio {:.2}",
            rate(*d) / 1e6,
            rate(*d) / rate(total[0])
        );
    }
    println!(
        "accepted: header {} / payload {} of {}",
        run_header(buf),
        run_payload(buf),
        buf.len()
    );
}

fn bench(c: &mut Criterion) {
    let buf = buffer();
    let mut g = c.benchmark_group("validate_1m");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(10);
    g.bench_with_input(BenchmarkId::new("read_baseline", N), &buf, |b, buf| {
        b.iter(|| run_read(buf))
    });
    g.bench_with_input(BenchmarkId::new("validate_header", N), &buf, |b, buf| {
        b.iter(|| run_header(buf))
    });
    g.bench_with_input(BenchmarkId::new("validate_payload", N), &buf, |b, buf| {
        b.iter(|| run_payload(buf))
    });
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary("random mix", &buffer());
    summary("grouped stream", &grouped_buffer());
}
