//! Deterministic case generation for the gate.
//!
//! # Contract
//!
//! Case `i` of target `t` under seed `s` is a pure function of `(s, t.name(), i)`:
//! [`case_rng`] seeds a [`SplitMix64`] from the three, and [`generate`] draws
//! the input from it. Nothing depends on the thread, the shard, the other
//! selected targets or the time, so a case can be regenerated anywhere (the
//! report names it as `seed/target/index`).
//!
//! The kind of a case is `i % 3`: [`CaseKind::Valid`] (an encoder image or a
//! well-formed query), [`CaseKind::NearValid`] (a valid case with one to three
//! structured mutations: bit flips, a byte set to an edge value, a field
//! reset), [`CaseKind::Raw`] (uniform bytes, with the opcode byte biased toward
//! the target's opcodes half of the time).
//!
//! Bundle cases are written into a caller-owned `[u8; 64]` and other inputs
//! into a caller-owned `Vec<u8>` (cleared first), so the hot loop does not
//! allocate.

use crate::arch::Arch;
use crate::findings::CaseKind;
use crate::generators;
use crate::layout::{spans, Domain, Role, OPCODES};
use crate::subjects::Validator;
use crate::targets::{Check, Target};

/// A small, fast PRNG (Steele, Lea & Flood's SplitMix64).
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// A value in `0..n` (`n > 0`; slight modulo bias is fine here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A random byte.
    #[inline]
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }

    /// One element of `xs` (non-empty).
    #[inline]
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// Fills `out` with random bytes.
    pub fn fill(&mut self, out: &mut [u8]) {
        for c in out.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// The SplitMix64 finaliser.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a name (stable across runs and platforms).
pub fn name_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The generator of case `i` of the target named `target` under `seed`.
#[inline]
pub fn case_rng(seed: u64, target_hash: u64, i: u64) -> SplitMix64 {
    SplitMix64(mix64(
        mix64(seed ^ 0x5EED_0F7B_C0DE) ^ target_hash ^ mix64(i.wrapping_add(0xA5A5)),
    ))
}

/// Writes a valid v2 encoder image of `op` (one of [`OPCODES`]) into `b`.
pub fn valid_image(r: &mut SplitMix64, op: u8, b: &mut [u8; 64]) {
    valid_image_for(r, op, Arch::default(), b);
}

/// Writes an encoder image of `op` (one of [`OPCODES`]) into `b` whose
/// fields hold `arch`'s legal values (valid when `arch`'s compiler emits `op`).
pub fn valid_image_for(r: &mut SplitMix64, op: u8, arch: Arch, b: &mut [u8; 64]) {
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
    if op == 0x85 {
        // Scratch triple: all zero or all nonzero (SPEC §3 #6); dword[0x14] free.
        let full = r.below(2) == 0;
        for o in [0x10, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C] {
            b[o] = 0;
        }
        if full {
            b[0x10] = 1 + r.below(255) as u8;
            let d18 = if r.below(4) == 0 {
                u32::MAX
            } else {
                1 + r.below(u64::from(u32::MAX)) as u32
            };
            b[0x18..0x1C].copy_from_slice(&d18.to_le_bytes());
            b[0x1C] = 1 + r.below(255) as u8;
            match r.below(4) {
                0 | 1 => r.fill(&mut b[0x14..0x18]),
                2 => b[0x14..0x18].fill(0xFF),
                _ => {}
            }
        }
    }
}

/// Applies 1–3 structured mutations to `b`; one kind writes one value into two
/// bytes (correlated faults: equal values across fields).
pub fn mutate(r: &mut SplitMix64, b: &mut [u8; 64]) {
    let n = 1 + r.below(3);
    for _ in 0..n {
        match r.below(7) {
            6 => {
                let v = if r.below(2) == 0 {
                    r.pick(&[0x01, 0x80, 0xFF, 0x10, 0x05])
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
                b[i] = r.pick(&[0x00, 0x01, 0x7F, 0x80, 0xFF, 0x10, 0x05, 0x85, 0x86]);
            }
            3 => {
                // Hit the checked low bytes more often.
                let i = r.pick(&[
                    1usize, 2, 3, 4, 6, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x14, 0x18, 0x1C, 0x1D,
                    0x20,
                ]);
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

/// Writes a random bundle (raw kind) into `b`, opcode biased toward `ops`.
pub fn raw_bundle(r: &mut SplitMix64, ops: &[u8], b: &mut [u8; 64]) {
    r.fill(b);
    match r.below(4) {
        0 => {
            b[0] = r.pick(ops);
            b[1] = 0x10;
        }
        1 => b[0] = r.pick(ops),
        _ => {}
    }
}

/// Generates the bundle case of bundle target `t` into `b`.
///
/// A quarter of the valid and near-valid cases come from
/// [`crate::generators`] (labelled, structured violations), drawn from 96
/// bytes of the case's PRNG (half of those near-valid cases get this
/// module's bit-level [`mutate`] instead of a generator violation; a
/// generator refusal falls back to [`valid_image`]); the rest come from
/// [`valid_image`] and [`mutate`].
pub fn bundle_case(t: Target, r: &mut SplitMix64, kind: CaseKind, b: &mut [u8; 64]) {
    bundle_case_for(t, Arch::default(), r, kind, b);
}

/// [`bundle_case`] for generation `arch`: the layout-driven images hold
/// `arch`'s legal values (the structured generators stay v2's, their labels'
/// generation).
pub fn bundle_case_for(
    t: Target,
    arch: Arch,
    r: &mut SplitMix64,
    kind: CaseKind,
    b: &mut [u8; 64],
) {
    let ops: &[u8] = match t.check() {
        Check::Validator(Validator::Header) => &[0x85],
        Check::Validator(Validator::Payload) => &[0x86],
        _ => &OPCODES,
    };
    if kind == CaseKind::Raw {
        raw_bundle(r, ops, b);
        return;
    }
    // Every fourth valid / near-valid case comes from the (slower,
    // labelled) structured generators; the rest from the layout-driven
    // [`valid_image`] (+ [`mutate`]), which is several times faster.
    if r.below(4) != 0 {
        let op = r.pick(ops);
        valid_image_for(r, op, arch, b);
        if kind == CaseKind::NearValid {
            mutate(r, b);
        }
        return;
    }
    let mut weights = [0u8; OPCODES.len()];
    for (w, op) in weights.iter_mut().zip(OPCODES) {
        *w = u8::from(ops.contains(&op));
    }
    let cfg = generators::Config {
        weights,
        k: r.byte(),
        near: 0,
        max_args: 4,
    };
    let mut seed = [0u8; 96];
    r.fill(&mut seed);
    let mut u = arbitrary::Unstructured::new(&seed);
    let own_mutation = kind == CaseKind::NearValid && r.below(2) == 0;
    let g = if kind == CaseKind::Valid || own_mutation {
        generators::valid_case(&mut u, &cfg)
    } else {
        generators::near_valid_case(&mut u, &cfg)
    };
    match g {
        Ok(c) => *b = c.bundle,
        Err(_) => {
            let op = r.pick(ops);
            valid_image(r, op, b);
        }
    }
    if own_mutation {
        mutate(r, b);
    }
}

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Generates the non-bundle case of target `t` into `out` (cleared first).
pub fn bytes_case(t: Target, r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    out.clear();
    match t.check() {
        Check::StreamProgram => stream_program(r, kind, out),
        Check::Luts(_) => {
            let v = match kind {
                CaseKind::Valid => r.below(32) as u32,
                CaseKind::NearValid => {
                    r.pick(&generators::LUT_EDGE_ORDINALS)
                        ^ if r.below(4) == 0 { 1 << r.below(32) } else { 0 }
                }
                CaseKind::Raw => r.next_u64() as u32,
            };
            let len = if kind == CaseKind::Raw {
                1 + r.below(4) as usize
            } else {
                4
            };
            out.extend_from_slice(&v.to_le_bytes()[..len]);
        }
        Check::Ir => ir_query(r, kind, out),
        Check::Sync | Check::Lowering | Check::StreamRaw | Check::Structured => {
            let len = match kind {
                CaseKind::Valid => 64 + r.below(512),
                CaseKind::NearValid => r.below(1536),
                CaseKind::Raw => r.below(256),
            } as usize;
            out.resize(len, 0);
            r.fill(out);
        }
        Check::Validator(_) | Check::Decode | Check::Roundtrip => {
            // Bundle targets reached through the byte path: 64 bytes.
            let mut b = [0u8; 64];
            bundle_case(t, r, kind, &mut b);
            out.extend_from_slice(&b);
        }
    }
}

/// A program for [`crate::engine::stream_from_input`].
fn stream_program(r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    match kind {
        CaseKind::Raw => {
            let len = r.below(64) as usize;
            out.resize(len, 0);
            r.fill(out);
        }
        _ => {
            // Well-formed groups (0..=255 args, SPEC §5.3) and other bundles.
            out.push(0);
            let groups = 1 + r.below(8);
            for _ in 0..groups {
                if r.below(3) == 0 {
                    let op = if r.below(2) == 0 {
                        r.pick(&[0x01, 0x30, 0xD9, 0xFF])
                    } else {
                        r.byte()
                    };
                    out.extend_from_slice(&[4, op]);
                }
                if r.below(4) == 0 {
                    // a wide group: header with n args, a run of n payloads, one more
                    let n = if r.below(2) == 0 {
                        r.pick(&[4, 5, 15, 16, 31, 32, 63, 64, 127, 128, 254, 255])
                    } else {
                        r.byte()
                    };
                    out.extend_from_slice(&[0x10, n, 0x13, n, 2, r.byte()]);
                    continue;
                }
                let p = r.byte();
                out.extend_from_slice(&[0, p]);
                for _ in 0..=(p % 4) {
                    out.extend_from_slice(&[2, r.byte()]);
                }
            }
            if kind == CaseKind::NearValid {
                let n = 1 + r.below(2);
                for _ in 0..n {
                    let i = r.below(out.len() as u64) as usize;
                    match r.below(3) {
                        0 => out[i] = r.byte(),
                        1 => out[i] ^= 1 << r.below(8),
                        _ => {
                            let cut = r.below(out.len() as u64) as usize;
                            out.truncate(cut.max(1));
                        }
                    }
                }
            }
        }
    }
}

/// An input for [`crate::engine::ir_query_from_input`].
fn ir_query(r: &mut SplitMix64, kind: CaseKind, out: &mut Vec<u8>) {
    if kind == CaseKind::Raw {
        let len = 1 + r.below(40) as usize;
        out.resize(len, 0);
        r.fill(out);
        return;
    }
    let gate = r.below(6) as u8;
    out.push(gate);
    match gate {
        0 => {
            let (na, no) = (r.below(5) as u8, r.below(4) as u8);
            out.extend_from_slice(&[na, no, r.pick(&[0, 1])]);
            for _ in 0..(na + no) {
                out.push(r.pick(&[0, 1]));
            }
        }
        1 => {
            let f = 1 | 4 | (r.byte() & 0x3A);
            out.push(f);
            if f & 2 != 0 {
                push_u32(out, 2 + r.below(2) as u32);
            } else {
                out.push(2 + r.below(2) as u8);
            }
            let (a, o) = (r.below(40), r.below(3));
            for (bit, v) in [(8u8, a), (16, o), (32, a + 2 + o)] {
                if f & bit != 0 {
                    out.extend_from_slice(&v.to_le_bytes());
                } else {
                    out.push(v as u8);
                }
            }
        }
        2 => push_u32(out, r.below(2) as u32),
        3 => push_u32(out, 11),
        4 => push_u32(out, 2),
        _ => out.extend_from_slice(&(1024 + r.below(3) - 1).to_le_bytes()),
    }
    if kind == CaseKind::NearValid {
        let i = r.below(out.len() as u64) as usize;
        if i == 0 {
            out.push(r.byte());
        } else {
            out[i] ^= 1 << r.below(8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subjects::{registry, Subject};

    #[test]
    fn valid_images_decode() {
        let mut r = SplitMix64(7);
        let mut b = [0u8; 64];
        for arch in Arch::ALL {
            let core = registry::core_for(arch);
            for _ in 0..2000 {
                let op = r.pick(&OPCODES);
                if !registry::emits(arch, op) {
                    continue;
                }
                valid_image_for(&mut r, op, arch, &mut b);
                let d = core.decode(&b);
                assert!(matches!(d, Ok(Ok(_))), "{arch} op {op:#x}: {d:?}");
            }
        }
    }

    #[test]
    fn rng_is_pure() {
        let h = name_hash("validate_header");
        assert_eq!(case_rng(1, h, 5).next_u64(), case_rng(1, h, 5).next_u64());
        assert_ne!(case_rng(1, h, 5).next_u64(), case_rng(1, h, 6).next_u64());
    }
}
