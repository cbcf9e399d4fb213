//! Same-run throughput of collective lowering: core `lower` vs the oracle's
//! (its adapter's `Reference::lower`, requests translated as the gate does) on the same
//! generated cases, and the whole
//! `collective_lowering` comparison (both + properties). Prints ratios.
//! `cargo run --release -p tpbconform --example lowering_speed [CASES]`

use std::time::Instant;
use tpb_core::lower::{lower, Module};
use tpbconform::generators::lowering_module::{build_case, LoweringCase};
use tpbconform::generators::SplitMix64;
use tpbconform::kinds::collective_lowering::compare_case_on;
use tpbconform::subjects::registry;

fn bytes(seed: u64, n: usize) -> Vec<u8> {
    SplitMix64(seed).bytes(n)
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let cases: Vec<LoweringCase> = (0..n).map(|s| build_case(&bytes(s, 512), None)).collect();
    let insns: usize = cases.iter().map(|c| c.insns.len()).sum();

    let t = Instant::now();
    let mut ok = 0usize;
    for c in &cases {
        let mut m = Module::new(c.gen);
        for i in c.insns.iter() {
            ok += usize::from(lower(&mut m, i).is_ok());
        }
    }
    let core = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut ok_o = 0usize;
    for c in &cases {
        let m = registry::oracle_for(c.gen)
            .lower(&c.insns)
            .expect("the oracle lowers");
        ok_o += m.instrs.iter().filter(|i| i.is_ok()).count();
    }
    let oracle = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let diverging = cases
        .iter()
        .filter(|c| {
            let (core, oracle) = (registry::core_for(c.gen), registry::oracle_for(c.gen));
            compare_case_on(&*core, &*oracle, c).is_err()
        })
        .count();
    let full = t.elapsed().as_secs_f64();

    println!("{n} cases, {insns} instructions ({ok} lowered by core, {ok_o} by the oracle)");
    println!("core lower:      {:>10.0} instr/s", insns as f64 / core);
    println!(
        "oracle lower:    {:>10.0} instr/s  (core/oracle speed ratio {:.2})",
        insns as f64 / oracle,
        oracle / core
    );
    println!(
        "full comparison: {:>10.0} cases/s   ({diverging} diverging)",
        n as f64 / full
    );
}
