//! Linting an instruction stream (SPEC §5.3 "Linting a stream", D-27, D-28), written from the
//! SPEC and the seeds, never from core: each instruction's verdict (the skeleton, then a body
//! where the chip has a record), the byte length of each instruction (own transcription of the
//! `length` column of isa/opcodes.tsv), and every stream error, in stream order.

use crate::codec::decode;
use crate::events::{is_member, UPDATE_MODE_MEMBERS, WAIT_MODE_MEMBERS};
use crate::profile::chip_emits;
use crate::roster::{is_named_opcode, Generation};
use crate::stream::takes_leg;
use crate::verdict::{header_verdict, payload_verdict};

/// Instructions longer than one 64-byte bundle: (opcode, bytes, source). FACTS §9 \[K\]: KLR
/// skips PseudoDmaDirect2d because it "is 128 bytes". (Its other two 128-byte formats, 0xD9 and
/// 0xDA, are one 64-byte record each, paired by the stream rule, SPEC DL-12.)
pub const LONG_INSTRUCTIONS: &[(u8, usize, &str)] =
    &[(0xD4, 128, "FACTS §9 [K] PseudoDmaDirect2d")];

/// Bytes on the wire of an instruction starting with `opcode`.
pub fn length_of(opcode: u8) -> usize {
    LONG_INSTRUCTIONS
        .iter()
        .find(|row| row.0 == opcode)
        .map_or(64, |row| row.1)
}

/// One instruction's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lint {
    Valid,
    /// The skeleton holds; no record of this chip describes the body.
    NotModelled,
    /// `predicate` failed at byte `offset`.
    Invalid {
        predicate: &'static str,
        offset: usize,
    },
}

/// The verdict of an instruction whose first 64 bytes are `b` (SPEC §5.3, D-27).
pub fn lint_one(b: &[u8; 64], chip: Generation) -> Lint {
    let opcode = b[0];
    let bad = |predicate, offset| Lint::Invalid { predicate, offset };
    if !is_named_opcode(chip, opcode) {
        return bad("valid_opcode", 0);
    }
    // 0xDA is stamped raw: no inst_word_len tag and no events band (S003 §3.2, D-3).
    if opcode != 0xDA {
        // S003 "inst_word_len = 0x10 (16 dwords = 64 bytes)", for every opcode (D-27).
        if b[1] != 0x10 {
            return bad("inst_word_len", 1);
        }
        for (offset, table) in [(4, WAIT_MODE_MEMBERS), (6, UPDATE_MODE_MEMBERS)] {
            if !is_member(table, u64::from(b[offset])) {
                return bad("has_valid_neuron_events", offset);
            }
        }
    }
    let validated = match opcode {
        0x85 => header_verdict(b, chip),
        0x86 => payload_verdict(b, chip),
        _ if chip_emits(chip, opcode) => {
            return match decode(b, chip) {
                Ok(_) => Lint::Valid,
                Err(r) => bad(r.field(), r.offset()),
            }
        }
        _ => return Lint::NotModelled,
    };
    match validated {
        Ok(()) => Lint::Valid,
        Err(r) => bad(r.predicate_name(), r.offset),
    }
}

/// One report of [`lint_stream`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    /// The instruction starting at bundle `index`.
    Instruction {
        index: usize,
        opcode: u8,
        length: usize,
        lint: Lint,
    },
    /// Stream error `name` detected at bundle `index` (one past the last at the end), belonging
    /// to the instruction at bundle `owner` with opcode `owner_opcode`.
    Fault {
        name: &'static str,
        index: usize,
        owner: usize,
        owner_opcode: u8,
    },
}

/// The stream is not whole bundles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotBundles {
    pub len: usize,
}

/// Lints a whole stream (SPEC §5.3): every instruction and stream error in stream order. At
/// each bundle: the pending 0xD9 leg (`missing_leg` / `leg_mismatch`), the open group a
/// non-0x86 closes (`short_group`), the instruction itself, then its own rule
/// (`payload_count_mismatch`, `stray_payload`, `stray_leg`). At the end: a 128-byte
/// instruction cut short, a leg never seen, a group never completed.
pub fn lint_stream(bytes: &[u8], chip: Generation) -> Result<Vec<Report>, NotBundles> {
    if !bytes.len().is_multiple_of(64) {
        return Err(NotBundles { len: bytes.len() });
    }
    let bundles: Vec<&[u8; 64]> = bytes
        .chunks(64)
        .filter_map(|c| <&[u8; 64]>::try_from(c).ok())
        .collect();
    let mut out = Vec::new();
    let fault = |name, index, owner: (usize, u8)| Report::Fault {
        name,
        index,
        owner: owner.0,
        owner_opcode: owner.1,
    };
    // (header index, payloads still owed)
    let mut group: Option<(usize, usize)> = None;
    // (0xD9 index, its bytes 0x0C..0x0F)
    let mut leg: Option<(usize, [u8; 3])> = None;
    let mut i = 0;
    while i < bundles.len() {
        let b = bundles[i];
        let opcode = b[0];
        let mut is_leg = false;
        if let Some((primary, trio)) = leg.take() {
            if opcode == 0xDA {
                is_leg = true;
                if b[0x0C..0x0F] != trio {
                    out.push(fault("leg_mismatch", i, (primary, 0xD9)));
                }
            } else {
                out.push(fault("missing_leg", i, (primary, 0xD9)));
            }
        }
        if opcode != 0x86 {
            if let Some((header, _)) = group.take() {
                out.push(fault("short_group", i, (header, 0x85)));
            }
        }
        let length = length_of(opcode);
        out.push(Report::Instruction {
            index: i,
            opcode,
            length,
            lint: lint_one(b, chip),
        });
        match opcode {
            0x85 => {
                let num_payloads = usize::from(b[0x0C]) | usize::from(b[0x0D]) << 8;
                let num_arguments = usize::from(b[0x0F]);
                if num_payloads != num_arguments + 2 {
                    out.push(fault("payload_count_mismatch", i, (i, 0x85)));
                }
                // D-28: the header's num_arguments + 1 payloads follow.
                group = Some((i, num_arguments + 1));
            }
            0x86 => match group {
                Some((header, owed)) => {
                    group = (owed > 1).then_some((header, owed - 1));
                }
                None => out.push(fault("stray_payload", i, (i, 0x86))),
            },
            0xDA if !is_leg => out.push(fault("stray_leg", i, (i, 0xDA))),
            0xD9 if takes_leg(b[0x0E]) => leg = Some((i, [b[0x0C], b[0x0D], b[0x0E]])),
            _ => {}
        }
        let next = i + length / 64;
        if next > bundles.len() {
            out.push(fault("truncated_instruction", bundles.len(), (i, opcode)));
        }
        i = next;
    }
    let end = bundles.len();
    if let Some((primary, _)) = leg {
        out.push(fault("missing_leg", end, (primary, 0xD9)));
    }
    if let Some((header, _)) = group {
        out.push(fault("short_group", end, (header, 0x85)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compare the length transcription with `isa/opcodes.tsv`'s `length` column.
    #[test]
    fn length_transcription_matches_the_isa_file() {
        let mut rows = include_str!("../../isa/opcodes.tsv")
            .lines()
            .filter(|l| !l.starts_with('#'));
        let header: Vec<&str> = rows.next().expect("header").split('\t').collect();
        let col = header.iter().position(|h| *h == "length").expect("length");
        let mut seen = 0;
        for row in rows {
            let cells: Vec<&str> = row.split('\t').collect();
            let op = u8::from_str_radix(&cells[0][2..], 16).expect("hex");
            assert_eq!(length_of(op).to_string(), cells[col], "{op:#04x}");
            seen += 1;
        }
        assert!(seen > 100, "{seen} rows");
    }

    #[test]
    fn a_128_byte_instruction_keeps_sync() {
        let mut s = vec![0u8; 64 * 3];
        s[0] = 0xD4;
        s[1] = 0x10;
        s[64] = 0x86; // second half of the 0xD4: not an opcode
        s[128] = 0x01;
        s[129] = 0x10;
        let r = lint_stream(&s, Generation::Sunda).expect("bundles");
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r.iter().all(|x| matches!(
            x,
            Report::Instruction {
                lint: Lint::NotModelled,
                ..
            }
        )));
    }
}
