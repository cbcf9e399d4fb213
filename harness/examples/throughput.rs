//! Rough differential throughput per target (core vs oracle), single thread.
//! `cargo run --release -p tpbconform --example throughput`

use std::time::Instant;
use tpbconform::generators::SplitMix64;
use tpbconform::judge::Judge;
use tpbconform::targets::Target;

fn main() {
    let e = Judge::reference();
    let mut r = SplitMix64(0x9E37_79B9_7F4A_7C15);
    let mut inputs = Vec::with_capacity(4096);
    for i in 0..4096u64 {
        let mut b = [0u8; 64];
        for x in b.iter_mut() {
            let seed = r.next_u64();
            *x = if seed.is_multiple_of(4) {
                seed as u8
            } else {
                0
            };
        }
        b[0] = [0x85, 0x86, 0xD9, 0xDE][(i % 4) as usize];
        b[1] = 0x10;
        inputs.push(b);
    }
    subjects_alone(&inputs);
    for t in Target::gate_targets() {
        let n = 400_000;
        let start = Instant::now();
        let mut div = 0u64;
        for i in 0..n {
            if !e.compare(t, &inputs[i % inputs.len()]).is_agree() {
                div += 1;
            }
        }
        let s = start.elapsed().as_secs_f64();
        println!(
            "{:<18} {:>12.0} cases/s  ({div} divergences)",
            t.name(),
            n as f64 / s
        );
    }
}

fn subjects_alone(inputs: &[[u8; 64]]) {
    use tpbconform::subjects::{registry, Validator};
    for s in [registry::core(), registry::oracle()] {
        let name = s.name().to_string();
        let n = 2_000_000;
        let start = Instant::now();
        let mut acc = 0usize;
        for i in 0..n {
            acc += usize::from(matches!(
                s.validate(Validator::Header, &inputs[i % inputs.len()]),
                Ok(Some(_))
            ));
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:<8} validate_header alone {:>12.0} calls/s ({acc})",
            n as f64 / secs
        );
    }
}
