//! Core's in-process rate on the gate's own cases, for the summary's
//! comparison with an external subject's rate from the same run.

use crate::arch::Arch;
use crate::findings::CaseKind;
use crate::generators::{case_rng, name_hash};
use crate::kinds::{self, CaseBuf, Draw};
use crate::subjects::{registry, Subject};
use crate::targets::{Check, Target};
use std::hint::black_box;
use std::time::Instant;

/// Cases per second core answers on the first `n` generated cases of the
/// bundle target `t` under `seed` (cases generated before the clock
/// starts); `None` for a target that is not a bundle target or `n == 0`.
pub fn core_rate(seed: u64, t: Target, n: u64) -> Option<f64> {
    if !t.is_bundle() || n == 0 {
        return None;
    }
    let h = name_hash(t.name());
    let cases: Vec<[u8; 64]> = (0..n)
        .map(|i| {
            let mut buf = CaseBuf::default();
            let draw = Draw {
                arch: Arch::default(),
                r: &mut case_rng(seed, h, i),
                kind: CaseKind::of(i),
            };
            kinds::of(t).generate(t, draw, &mut buf);
            buf.bundle
        })
        .collect();
    let core = registry::core();
    let start = Instant::now();
    for b in &cases {
        match t.check() {
            Check::Validator(v) => {
                let _ = black_box(core.validate(v, black_box(b)));
            }
            _ => {
                if let Ok(Ok(d)) = core.decode(black_box(b)) {
                    let _ = black_box(core.encode(d.opcode, &d.fields));
                }
            }
        }
    }
    let s = start.elapsed().as_secs_f64();
    (s > 0.0).then(|| cases.len() as f64 / s)
}
