//! `tpbconform subject-check SPEC`: the subject's hello, then a short smoke set through the
//! gate's judge, per covered target: each opcode's valid image with every byte in turn set to
//! 0x01 and 0xFF plus generated cases (bundle targets), the ordinals 0..=64 and a few large
//! ones (LUTs), or generated cases of the target's kind (others).

use super::{CliError, CliResult, EXIT_INVALID, EXIT_OK};
use crate::external;
use crate::findings::CaseKind;
use crate::generation::Generation;
use crate::generators::images::{bundle_case, valid_image_for};
use crate::generators::{case_rng, name_hash};
use crate::judge::{Judge, Outcome};
use crate::kinds::{CaseBuf, Draw};
use crate::subjects::{Capabilities, SubjectSpec, Validator};
use crate::targets::{Check, Target};
use std::io::Write;
use std::time::Duration;

pub const SMOKE_GENERATED: u64 = 300;
/// Divergences printed per target.
const SHOWN: usize = 3;
const SEED: u64 = 0x5EED_C0DE;

#[derive(clap::Args, Debug, Clone)]
pub struct SubjectCheckArgs {
    /// The subject: `lib:PATH` or `cmd:COMMAND` (also `core`, `oracle`).
    #[arg(value_name = "SPEC")]
    pub spec: SubjectSpec,
    /// The generation the subject is asked to serve.
    #[arg(long, default_value = "v2")]
    pub arch: Generation,
    /// Seconds to wait for each answer, 1 to 3600.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
}

/// The smoke inputs of a bundle target.
fn bundle_inputs(t: Target) -> Vec<[u8; 64]> {
    let ops: &[u8] = match t.check() {
        Check::Validator(Validator::Header) => &[0x85],
        Check::Validator(Validator::Payload) => &[0x86],
        _ => &crate::layout::OPCODES,
    };
    let mut out = Vec::new();
    let h = name_hash(t.name());
    for (k, &op) in ops.iter().enumerate() {
        let mut base = [0u8; 64];
        valid_image_for(
            &mut case_rng(SEED, h, k as u64),
            op,
            Generation::default(),
            &mut base,
        );
        out.push(base);
        for i in 0..64 {
            for v in [0x01, 0xFF] {
                let mut b = base;
                b[i] = v;
                out.push(b);
            }
        }
    }
    for i in 0..SMOKE_GENERATED {
        let mut b = [0u8; 64];
        bundle_case(
            ops,
            Default::default(),
            &mut case_rng(SEED, h, i),
            CaseKind::of(i),
            &mut b,
        );
        out.push(b);
    }
    out
}

fn generated_inputs(t: Target, arch: Generation) -> Vec<Vec<u8>> {
    let kind = crate::kinds::of(t);
    let h = name_hash(t.name());
    let mut buf = CaseBuf::default();
    (0..SMOKE_GENERATED)
        .map(|i| {
            let mut r = case_rng(SEED, h, i);
            let d = Draw {
                arch,
                r: &mut r,
                kind: CaseKind::of(i),
            };
            let form = kind.generate(t, d, &mut buf);
            buf.input(form).to_vec()
        })
        .collect()
}

pub fn run(a: SubjectCheckArgs) -> CliResult {
    let timeout = Duration::from_secs(a.timeout);
    external::set_case_timeout(timeout);
    super::panic_hook::install_quiet();
    let judge = Judge::open(std::slice::from_ref(&a.spec), a.arch).map_err(CliError::refused)?;
    let Some(subject) = judge.under_test().first() else {
        return Err(CliError::refused("no subject opened"));
    };
    let caps = subject.capabilities();
    let mut out = std::io::stdout().lock();
    // The spec (a path or command) and the subject's hello name [`super::shown`].
    let spec = super::shown(&a.spec.to_string()).into_owned();
    writeln!(out, "subject:      {spec}")?;
    if let Ok(exe) = std::env::current_exe() {
        // The hello once more, to show it as the subject sent it.
        if let Ok(c) = external::start(&a.spec, &exe, a.arch, timeout) {
            let h = c.hello();
            writeln!(out, "name:         {}", super::shown(&h.name))?;
            writeln!(out, "protocol:     tpb-subject/{}", h.protocol)?;
            writeln!(out, "ops:          {}", h.ops.ops().join(", "))?;
            if h.ops.covers(Capabilities::LUTS) {
                let tables: Vec<&str> = h.lut_tables().iter().map(|t| t.name()).collect();
                writeln!(out, "tables:       {}", tables.join(", "))?;
            }
        }
    }
    writeln!(out, "arch:         {}", a.arch)?;
    writeln!(out, "capabilities: {caps}")?;
    let (covered, lacking): (Vec<Target>, Vec<Target>) = Target::gate_targets()
        .into_iter()
        .partition(|t| caps.covers(t.spec().needs));
    let names = |ts: &[Target]| ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
    writeln!(out, "targets:      {}", names(&covered))?;
    writeln!(out, "not supported by {spec}: {}", names(&lacking))?;
    let mut failed = covered.is_empty();
    let mut checked = 0u64;
    for t in &covered {
        let outcomes: Vec<Outcome> = match t.check() {
            Check::Validator(_) | Check::Decode | Check::Roundtrip => bundle_inputs(*t)
                .iter()
                .map(|b| judge.compare(*t, b))
                .collect(),
            Check::Lut(_) => (0..=64u32)
                .chain([255, 256, 1 << 16, u32::MAX])
                .map(|o| judge.compare_lut(*t, o))
                .collect(),
            // Every other kind: its own generated inputs (kinds::of).
            _ => generated_inputs(*t, a.arch)
                .iter()
                .map(|input| judge.compare(*t, input))
                .collect(),
        };
        let n = outcomes.len();
        let divs: Vec<_> = outcomes.into_iter().flatten().collect();
        checked += n as u64;
        if divs.is_empty() {
            writeln!(out, "smoke: {t}: {n} cases, all agree with core")?;
            continue;
        }
        failed = true;
        writeln!(
            out,
            "smoke: {t}: {n} cases, {} divergence(s); first:",
            divs.len()
        )?;
        for d in divs.iter().take(SHOWN) {
            for l in d.to_string().lines() {
                writeln!(out, "    {l}")?;
            }
        }
    }
    for g in judge.not_run() {
        // Fail closed: cases the subject was not asked after giving up.
        failed = true;
        println!(
            "smoke: {} {}: {}; {} case(s) not run",
            g.subject,
            g.op.name(),
            g.why,
            g.cases
        );
    }
    if checked == 0 {
        writeln!(
            out,
            "result: FAIL (the subject covers no target the smoke set checks)"
        )?;
        return Ok(EXIT_INVALID);
    }
    writeln!(out, "result: {}", if failed { "FAIL" } else { "OK" })?;
    Ok(if failed { EXIT_INVALID } else { EXIT_OK })
}
