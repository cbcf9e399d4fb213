//! Whole instruction streams for the stream walkers (SPEC §5.3 "Linting a stream", D-27,
//! D-28) of one generation: roster instructions, record images, custom-op groups,
//! 0xD9/0xDA pairs, 128-byte instructions, strays and random bytes, then cut or corrupted.
//! Written from SPEC §1, §3–§5 and isa/opcodes.tsv, not from either implementation.

use super::images::{mutate_image, valid_image_for};
use super::rng::SplitMix64;
use crate::generation::Generation;
use crate::layout::OPCODES;
use std::sync::OnceLock;
use tpb_core::lint::instruction_len;

/// Per generation its members and the opcodes only others name; and the 128-byte opcodes.
pub struct Roster {
    pub members: [Vec<u8>; 4],
    pub others: [Vec<u8>; 4],
    pub long: Vec<u8>,
}

/// [`Roster`] from core's tables generated from isa/opcodes.tsv.
pub fn roster() -> &'static Roster {
    static ROSTER: OnceLock<Roster> = OnceLock::new();
    ROSTER.get_or_init(|| {
        let of = |keep: &dyn Fn(u8) -> bool| (0..=255u8).filter(|&op| keep(op)).collect();
        let member = |a: Generation, op: u8| a.is_valid_opcode(op);
        let any = |op: u8| Generation::ALL.iter().any(|&a| member(a, op));
        Roster {
            members: Generation::ALL.map(|a| of(&|op| member(a, op))),
            others: Generation::ALL.map(|a| of(&|op| any(op) && !member(a, op))),
            long: of(&|op| instruction_len(op) == 128),
        }
    })
}

fn arch_index(arch: Generation) -> usize {
    Generation::ALL.iter().position(|&a| a == arch).unwrap_or(0)
}

/// `op` with a well-formed skeleton (byte 1 = 0x10, SPEC §3), rest zero.
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

/// A group's `num_arguments`: mostly 0..=4, then every band of 5..=255 (SPEC §5.3: a u8).
fn group_arguments(r: &mut SplitMix64) -> u8 {
    match r.below(24) {
        0 => 255,
        1 => 128 + r.below(127) as u8,
        2 | 3 => 16 + r.below(112) as u8,
        4..=6 => 5 + r.below(11) as u8,
        _ => r.below(5) as u8,
    }
}

/// A roster instruction (now and then another generation's or any opcode) with a mostly
/// well-formed skeleton and a body of zeros and random bytes.
fn plain(r: &mut SplitMix64, arch: Generation, s: &mut Vec<u8>) {
    let ros = roster();
    let op = match r.below(16) {
        0 => r.byte(),
        1 => {
            let others = &ros.others[arch_index(arch)];
            if others.is_empty() {
                r.byte()
            } else {
                r.pick(others)
            }
        }
        _ => r.pick(&ros.members[arch_index(arch)]),
    };
    let mut b = skeleton(op);
    for x in b[0x0C..].iter_mut() {
        *x = if one_in(r, 3) { r.byte() } else { 0 };
    }
    // The events band: members (SPEC §6.5: WAIT 0x00..=0x07, UPDATE 0x00..=0x05 among them),
    // sometimes any byte.
    for (at, members) in [(4, 8), (6, 6)] {
        b[at] = if one_in(r, 6) {
            r.byte()
        } else {
            r.below(members) as u8
        };
    }
    if one_in(r, 6) {
        b[1] = r.byte();
    }
    s.extend_from_slice(&b);
}

/// Appends one random piece of program to `s`.
fn piece(r: &mut SplitMix64, arch: Generation, s: &mut Vec<u8>) {
    match r.below(11) {
        0..=2 => plain(r, arch, s),
        // A record of the eleven: a valid image of the generation, sometimes mutated.
        3 => {
            let mut b = [0u8; 64];
            let op = r.pick(&OPCODES);
            valid_image_for(r, op, arch, &mut b);
            if one_in(r, 3) {
                mutate_image(r, &mut b);
            }
            s.extend_from_slice(&b);
        }
        // A custom-op group: whole, cut short, overlong, or with a count mismatch.
        4 | 5 => {
            let n = group_arguments(r);
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
                if one_in(r, 16) {
                    let mut b = [0u8; 64];
                    valid_image_for(r, 0x86, arch, &mut b);
                    s.extend_from_slice(&b);
                } else {
                    s.extend_from_slice(&payload());
                }
            }
        }
        // A 0xD9 with a one-leg or two-leg kind (SPEC §5.4), its 0xDA or not.
        6 | 7 => {
            let kind = 2 + r.below(9) as u8;
            s.extend_from_slice(&d9(kind));
            match r.below(4) {
                0 => {}
                1 => s.extend_from_slice(&da([0x04, 0x0A, kind ^ 1])),
                _ => s.extend_from_slice(&da([0x04, 0x0A, kind])),
            }
        }
        // A 128-byte instruction (the `length` column) whose second half looks like an opcode.
        8 => {
            let long = &roster().long;
            let op = if long.is_empty() { 0xD4 } else { r.pick(long) };
            s.extend_from_slice(&skeleton(op));
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

/// Bytes of a bundle a stream or skeleton rule reads (SPEC §1, §5.3).
const RULE_BYTES: [usize; 8] = [0x00, 0x01, 0x04, 0x06, 0x0C, 0x0D, 0x0E, 0x0F];

/// One random program for `arch` (whole bundles, at most 16 pieces) into `s`.
pub fn program_into(r: &mut SplitMix64, arch: Generation, s: &mut Vec<u8>) {
    s.clear();
    if one_in(r, 8) {
        // Random bytes.
        let n = r.below(12) as usize;
        s.extend((0..64 * n).map(|_| r.byte()));
        return;
    }
    for _ in 0..r.below(16) {
        piece(r, arch, s);
    }
    if one_in(r, 4) && s.len() >= 64 {
        // Cut the program at a bundle boundary (a group, a pair or a 128-byte one cut short).
        let keep = r.below((s.len() / 64) as u64) as usize;
        s.truncate(64 * keep);
    }
    if one_in(r, 2) && !s.is_empty() {
        // 1..=3 corruptions, at any position or at a byte a rule reads.
        for _ in 0..1 + r.below(3) {
            let bundle = 64 * r.below((s.len() / 64) as u64) as usize;
            let at = if one_in(r, 2) {
                bundle + r.pick(&RULE_BYTES)
            } else {
                r.below(s.len() as u64) as usize
            };
            s[at] = match r.below(4) {
                0 => s[at].wrapping_add(1),
                1 => s[at].wrapping_sub(1),
                2 => r.byte(),
                _ => s[at] ^ (1 << r.below(8)),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_whole_bundles_and_deterministic() {
        let (mut a, mut b) = (SplitMix64(7), SplitMix64(7));
        let (mut p, mut q) = (Vec::new(), Vec::new());
        let mut lens = std::collections::BTreeSet::new();
        for i in 0..500 {
            let arch = Generation::ALL[i % 4];
            program_into(&mut a, arch, &mut p);
            program_into(&mut b, arch, &mut q);
            assert_eq!(p.len() % 64, 0);
            assert_eq!(p, q);
            lens.insert(p.len() / 64);
        }
        // Empty, short and long programs (a 255-argument group is 257 bundles).
        assert!(
            lens.contains(&0) && lens.iter().any(|&n| n > 256),
            "{lens:?}"
        );
    }

    #[test]
    fn the_roster_is_the_isa_files() {
        // SPEC §0 / §2: v2 144, v3 149, v4 158, v5 164 named; 0x87 is v2 only; 0xBE is not v2;
        // 0xD4 is the one 128-byte opcode (SPEC §5.3).
        let r = roster();
        let counts: Vec<usize> = r.members.iter().map(Vec::len).collect();
        assert_eq!(counts, [144, 149, 158, 164]);
        assert!(r.members[0].contains(&0x87) && r.others[1].contains(&0x87));
        assert!(r.others[0].contains(&0xBE) && !r.members[0].contains(&0xBE));
        assert!(!r.members.iter().flatten().any(|&op| op == 0xFF));
        assert_eq!(r.long, [0xD4]);
    }

    #[test]
    fn programs_of_a_generation_draw_its_roster() {
        // Under v3, 0xBE (GET_SEQUENCE_BOUNDS, v3+) appears as an instruction's opcode and the
        // v2-only 0x87 is rare (only as "another generation's" pick or a random byte).
        let mut r = SplitMix64(3);
        let mut hist = [0u32; 256];
        let mut p = Vec::new();
        for _ in 0..400 {
            program_into(&mut r, Generation::V3, &mut p);
            for b in p.chunks(64) {
                hist[usize::from(b[0])] += 1;
            }
        }
        let members = &roster().members[1];
        let in_roster: u32 = members.iter().map(|&op| hist[usize::from(op)]).sum();
        let total: u32 = hist.iter().sum();
        assert!(hist[0xBE] > 0, "0xBE never drawn under v3");
        assert!(
            in_roster * 10 > total * 8,
            "{in_roster} of {total} in the v3 roster"
        );
    }
}
