//! Whole instruction streams for the stream walkers (SPEC §5.3 "Linting a stream", D-27,
//! D-28): roster-ish skeletons (some corrupted), custom-op groups (whole, cut short, overlong,
//! count mismatch, 0..=4 or 255 arguments), 0xD9/0xDA pairs (one-leg and two-leg kinds, the
//! leg missing, mismatched or stray), 128-byte 0xD4 instructions whose second half looks like
//! an opcode, stray payloads, random bundles and random-byte programs; a program may be cut
//! at a bundle boundary and get one near-valid bit flip at any position.
//!
//! The bundles are written from SPEC §1, §3–§5 (not from either implementation). Used by the
//! `stream_lint` target kind ([`crate::kinds::stream_lint`]) and `tests/stream_lint.rs`.

use super::rng::SplitMix64;

/// A bundle of opcode `op` with a well-formed skeleton (byte 1 = 0x10, SPEC §3), rest zero.
pub fn skeleton(op: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = op;
    b[1] = 0x10;
    b
}

/// A 0x85 custom-op header (SPEC §5.3): `num_payloads` at 0x0C (LE), 7 at 0x0E,
/// `num_arguments` at 0x0F.
pub fn header(num_arguments: u8, num_payloads: u16) -> [u8; 64] {
    let mut b = skeleton(0x85);
    b[0x0C..0x0E].copy_from_slice(&num_payloads.to_le_bytes());
    b[0x0E] = 7;
    b[0x0F] = num_arguments;
    b
}

/// A 0x86 custom-op payload (SPEC §5.3).
pub fn payload() -> [u8; 64] {
    let mut b = skeleton(0x86);
    b[0x0F] = 1;
    for (i, x) in b[0x10..].iter_mut().enumerate() {
        *x = i as u8;
    }
    b
}

/// A 0xD9 (S003 §3.1): cce_op 0x04, dtype 0x0A, kind `kind`.
pub fn d9(kind: u8) -> [u8; 64] {
    let mut b = skeleton(0xD9);
    b[4] = 0x85;
    b[6] = 1;
    b[0x0C] = 0x04;
    b[0x0D] = 0x0A;
    b[0x0E] = kind;
    b
}

/// A 0xDA (S003 §3.2, D-3): stamped raw, channel id, the trio `trio`.
pub fn da(trio: [u8; 3]) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = 0xDA;
    b[4] = 0x34;
    b[5] = 0x12;
    b[0x0C..0x0F].copy_from_slice(&trio);
    b
}

fn one_in(r: &mut SplitMix64, n: u64) -> bool {
    r.below(n) == 0
}

/// Appends one random piece of program to `s`.
fn piece(r: &mut SplitMix64, s: &mut Vec<u8>) {
    match r.below(9) {
        // A roster-ish opcode with a skeleton, sometimes a bad one.
        0..=2 => {
            let mut b = skeleton(r.byte());
            for x in b[0x0C..].iter_mut() {
                *x = if one_in(r, 3) { r.byte() } else { 0 };
            }
            if one_in(r, 6) {
                b[1] = r.byte();
            }
            if one_in(r, 6) {
                b[4] = r.byte();
            }
            if one_in(r, 6) {
                b[6] = r.byte();
            }
            s.extend_from_slice(&b);
        }
        // A custom-op group: whole, cut short, overlong, or with a count mismatch.
        3 | 4 => {
            let n = if one_in(r, 20) { 255 } else { r.below(5) as u8 };
            let mut num_payloads = u16::from(n) + 2;
            if one_in(r, 5) {
                num_payloads = num_payloads.wrapping_add(if one_in(r, 2) { 1 } else { 0xFFFF });
            }
            s.extend_from_slice(&header(n, num_payloads));
            let want = u64::from(n) + 1;
            let k = match r.below(4) {
                0 => r.below(want),
                1 => want + 1,
                _ => want,
            };
            for _ in 0..k {
                s.extend_from_slice(&payload());
            }
        }
        // A 0xD9 with a one-leg or two-leg kind (SPEC §5.4), its 0xDA or not.
        5 | 6 => {
            let kind = 2 + r.below(9) as u8;
            s.extend_from_slice(&d9(kind));
            match r.below(4) {
                0 => {}
                1 => s.extend_from_slice(&da([0x04, 0x0A, kind ^ 1])),
                _ => s.extend_from_slice(&da([0x04, 0x0A, kind])),
            }
        }
        // A 128-byte instruction (FACTS §9 [K]) whose second half looks like an opcode.
        7 => {
            s.extend_from_slice(&skeleton(0xD4));
            let mut tail = [0u8; 64];
            tail[0] = r.pick(&[0x86, 0xDA, 0x85, 0xD9, 0xD4]);
            tail[1] = 0x10;
            tail[0x0E] = 0x05;
            s.extend_from_slice(&tail);
        }
        // A stray leg or payload, or a whole random bundle.
        _ => match r.below(3) {
            0 => s.extend_from_slice(&da([0x04, 0x0A, 0x05])),
            1 => s.extend_from_slice(&payload()),
            _ => s.extend((0..64).map(|_| r.byte())),
        },
    }
}

/// Writes one random program (whole bundles, at most 16 pieces) into `s`, replacing what it
/// held.
pub fn program_into(r: &mut SplitMix64, s: &mut Vec<u8>) {
    s.clear();
    if one_in(r, 8) {
        // Random bytes.
        let n = r.below(12) as usize;
        s.extend((0..64 * n).map(|_| r.byte()));
        return;
    }
    for _ in 0..r.below(16) {
        piece(r, s);
    }
    if one_in(r, 4) && s.len() >= 64 {
        // Cut the program at a bundle boundary (a group, a pair or a 128-byte one cut short).
        let keep = r.below((s.len() / 64) as u64) as usize;
        s.truncate(64 * keep);
    }
    if one_in(r, 2) && !s.is_empty() {
        // A near-valid corruption at a random position.
        let at = r.below(s.len() as u64) as usize;
        s[at] ^= 1 << r.below(8);
    }
}

/// One random program ([`program_into`]).
pub fn program(r: &mut SplitMix64) -> Vec<u8> {
    let mut s = Vec::new();
    program_into(r, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_whole_bundles_and_deterministic() {
        let (mut a, mut b) = (SplitMix64(7), SplitMix64(7));
        let mut lens = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let p = program(&mut a);
            assert_eq!(p.len() % 64, 0);
            assert_eq!(p, program(&mut b));
            lens.insert(p.len() / 64);
        }
        // Empty, short and long programs (a 255-argument group is 257 bundles).
        assert!(
            lens.contains(&0) && lens.iter().any(|&n| n > 256),
            "{lens:?}"
        );
    }
}
