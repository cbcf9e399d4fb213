//! Gate images: 64-byte bundle cases for the bundle targets, into a caller-owned `[u8; 64]`
//! (the hot loop does not allocate).

use super::case_kind::CaseKind;
use super::rng::SplitMix64;
use crate::generation::Generation;
use crate::layout::{spans, Domain, Role, OPCODES};
use tpb_core::layout::{
    collective_compute as cc, custom_op_header as header, custom_op_payload as payload,
    gpsimdsb2sb as sb2sb, sync_skeleton as sk, INST_WORD_LEN,
};

/// Checked bytes [`mutate_image`] flips more often (SPEC §1, §3 #5 #6, §4, §5.2).
const CHECKED: [usize; 16] = [
    sk::OFF_INST_WORD_LEN,
    sk::OFF_DEBUG_CMD,
    sk::OFF_DEBUG_HINT,
    sk::OFF_WAIT_MODE,
    sk::OFF_UPDATE_MODE,
    cc::OFF_CCE_OP,
    cc::OFF_DTYPE,
    cc::OFF_KIND,
    payload::OFF_ARG_TYPE,
    header::OFF_HAS_SCRATCH_SPACE,
    header::OFF_HAS_SCRATCH_SPACE + 1,
    header::OFF_SCRATCH_SPACE_ADDR,
    header::OFF_SCRATCH_SPACE_SIZE,
    header::OFF_SCRATCH_SPACE_NUM_PARTITIONS,
    header::OFF_SCRATCH_SPACE_NUM_PARTITIONS + 1,
    sb2sb::OFF_CROSS_CORE_ENABLE,
];

/// Edge byte values (0x05: a wait-mode member, FACTS §2).
const EDGES: [u8; 9] = [
    0x00,
    0x01,
    0x7F,
    0x80,
    0xFF,
    INST_WORD_LEN,
    0x05,
    header::OPCODE,
    payload::OPCODE,
];

/// An encoder image of `op` into `b` with `arch`'s legal field values.
pub fn valid_image_for(r: &mut SplitMix64, op: u8, arch: Generation, b: &mut [u8; 64]) {
    *b = [0; 64];
    for s in spans(op) {
        let bytes = &mut b[s.off..s.off + s.len];
        match s.role {
            Role::Reserved => {}
            Role::Const(v) => bytes[0] = v,
            Role::Unknown => r.fill(bytes),
            Role::Field(d) => match d {
                Domain::Opcode => bytes[0] = op,
                Domain::WaitMode
                | Domain::UpdateMode
                | Domain::ArgType
                | Domain::CceOp
                | Domain::Dtype
                | Domain::Kind
                | Domain::Flag => bytes[0] = r.pick(d.values_for(arch).unwrap_or(&[0])),
                Domain::Scratch | Domain::Ap | Domain::Any => match r.below(8) {
                    // Uniform half the time; else the boundaries: small, all-ones (max).
                    0..=3 => r.fill(bytes),
                    4..=6 => bytes[0] = r.byte() & 0x07,
                    _ => bytes.fill(0xFF),
                },
            },
        }
    }
    if op == header::OPCODE {
        // Scratch triple: all zero or all nonzero (SPEC §3 #6); the address is free.
        let full = r.below(2) == 0;
        let (flag, addr, size, parts) = (
            header::OFF_HAS_SCRATCH_SPACE,
            header::OFF_SCRATCH_SPACE_ADDR,
            header::OFF_SCRATCH_SPACE_SIZE,
            header::OFF_SCRATCH_SPACE_NUM_PARTITIONS,
        );
        b[flag] = 0;
        b[addr..addr + 4].fill(0);
        b[size..size + 4].fill(0);
        b[parts] = 0;
        if full {
            b[flag] = 1 + r.below(255) as u8;
            let d = if r.below(4) == 0 {
                u32::MAX
            } else {
                1 + r.below(u64::from(u32::MAX)) as u32
            };
            b[size..size + 4].copy_from_slice(&d.to_le_bytes());
            b[parts] = 1 + r.below(255) as u8;
            match r.below(4) {
                0 | 1 => r.fill(&mut b[addr..addr + 4]),
                2 => b[addr..addr + 4].fill(0xFF),
                _ => {}
            }
        }
    }
}

/// 1–3 structured mutations (bit flips, edge values, resets, one value in two bytes).
pub fn mutate_image(r: &mut SplitMix64, b: &mut [u8; 64]) {
    let n = 1 + r.below(3);
    for _ in 0..n {
        match r.below(7) {
            6 => {
                let v = if r.below(2) == 0 {
                    r.pick(&[0x01, 0x80, 0xFF, INST_WORD_LEN, 0x05])
                } else {
                    r.byte() | 1
                };
                b[r.below(64) as usize] = v;
                b[r.below(64) as usize] = v;
            }
            0 | 1 => {
                let bit = r.below(512) as usize;
                b[bit / 8] ^= 1 << (bit % 8);
            }
            2 => {
                let i = r.below(64) as usize;
                b[i] = r.pick(&EDGES);
            }
            3 => {
                // Hit the checked low bytes more often.
                let i = r.pick(&CHECKED);
                b[i] ^= 1 << r.below(8);
            }
            4 => {
                let i = r.below(64) as usize;
                b[i] = 0;
            }
            _ => b[0] = r.pick(&OPCODES),
        }
    }
}

/// A bundle case of `kind` for `arch` biased toward `ops`: raw bytes, or a quarter from the
/// labelled generators (96 bytes of `r`), the rest [`valid_image_for`] and [`mutate_image`].
pub fn bundle_case(
    ops: &[u8],
    arch: Generation,
    r: &mut SplitMix64,
    kind: CaseKind,
    b: &mut [u8; 64],
) {
    if kind == CaseKind::Raw {
        // Random bytes, the opcode biased toward `ops`.
        r.fill(b);
        match r.below(4) {
            0 => {
                b[0] = r.pick(ops);
                b[1] = INST_WORD_LEN;
            }
            1 => b[0] = r.pick(ops),
            _ => {}
        }
        return;
    }
    // The layout-driven images are several times faster than the labelled generators.
    if r.below(4) != 0 {
        let op = r.pick(ops);
        valid_image_for(r, op, arch, b);
        if kind == CaseKind::NearValid {
            mutate_image(r, b);
        }
        return;
    }
    let cfg = super::Config {
        arch,
        weights: OPCODES.map(|op| u8::from(ops.contains(&op))),
        k: r.byte(),
        near: 0,
        max_args: 4,
    };
    let mut seed = [0u8; 96];
    r.fill(&mut seed);
    let mut u = arbitrary::Unstructured::new(&seed);
    let own_mutation = kind == CaseKind::NearValid && r.below(2) == 0;
    let g = if kind == CaseKind::Valid || own_mutation {
        super::valid_case(&mut u, &cfg)
    } else {
        super::near_valid_case(&mut u, &cfg)
    };
    match g {
        Ok(c) => *b = c.bundle,
        Err(_) => {
            let op = r.pick(ops);
            valid_image_for(r, op, arch, b);
        }
    }
    if own_mutation {
        mutate_image(r, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::registry;

    #[test]
    fn valid_images_decode() {
        let mut r = SplitMix64(7);
        let mut b = [0u8; 64];
        for arch in Generation::ALL {
            let core = registry::core_for(arch);
            for _ in 0..2000 {
                let op = r.pick(&OPCODES);
                if !arch.emits(op) {
                    continue;
                }
                valid_image_for(&mut r, op, arch, &mut b);
                let d = core.decode(&b);
                assert!(matches!(d, Ok(Ok(_))), "{arch} op {op:#x}: {d:?}");
            }
        }
    }
}
