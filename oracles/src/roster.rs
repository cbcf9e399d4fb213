//! Chips (hardware generations) and their `NEURON_ISA_TPB_OPCODE` enums, transcribed by hand
//! from FACTS §1 \[H\] / the repository's `isa/opcodes.tsv` as "common to every chip" ranges plus
//! per-chip additions and removals. A test re-reads the TSV and compares.

/// A TPB chip, named as FACTS names the generations (v2 Sunda … v5 Maverick).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Generation {
    /// v2, the seeds' `core_v2` path; the default.
    #[default]
    Sunda,
    /// v3.
    Cayman,
    /// v4.
    Mariana,
    /// v5.
    Maverick,
}

/// `(arch name, chip)`: the `--arch` spelling of each chip (FACTS "Generations").
pub const CHIPS: &[(&str, Generation)] = &[
    ("v2", Generation::Sunda),
    ("v3", Generation::Cayman),
    ("v4", Generation::Mariana),
    ("v5", Generation::Maverick),
];

impl Generation {
    /// The chip spelled `v2` … `v5`, or None.
    pub fn from_arch(name: &str) -> Option<Generation> {
        CHIPS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }

    /// `v2` … `v5`.
    pub fn arch(self) -> &'static str {
        CHIPS
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(n, _)| n)
    }
}

/// Opcodes in every chip's enum (FACTS §1; isa/opcodes.tsv rows `1 1 1 1`), inclusive hex ranges.
const EVERY_CHIP: &[(u8, u8)] = &[
    (0x01, 0x05),
    (0x21, 0x24),
    (0x30, 0x30),
    (0x41, 0x4F),
    (0x51, 0x54),
    (0x58, 0x58),
    (0x5E, 0x74),
    (0x76, 0x7F),
    (0x82, 0x86),
    (0x8E, 0x8E),
    (0x92, 0x96),
    (0x98, 0xAB),
    (0xB0, 0xB3),
    (0xB5, 0xB5),
    (0xB8, 0xB8),
    (0xBB, 0xBB),
    (0xC1, 0xD6),
    (0xD8, 0xDF),
    (0xE5, 0xE8),
    (0xEA, 0xEA),
    (0xF0, 0xF0),
];

/// Sunda only: the BF16 and dual-arith tensor ops later chips dropped (FACTS §1).
const SUNDA_ONLY: &[u8] = &[0x87, 0x88, 0x8A, 0x8B, 0x8C, 0x8D, 0x8F];

/// Added by a chip and kept by every later one: `(first chip, opcodes)`.
const ADDED: &[(Generation, &[u8])] = &[
    (
        Generation::Cayman,
        &[
            0x06, 0x07, 0x81, 0xBC, 0xBD, 0xBE, 0xBF, 0xD7, 0xE4, 0xE9, 0xF1, 0xF2,
        ],
    ),
    (
        Generation::Mariana,
        &[0x08, 0x09, 0x0A, 0x25, 0xB4, 0xE0, 0xE1, 0xE2, 0xE3],
    ),
    (Generation::Maverick, &[0x26, 0xB6, 0xB9, 0xBA, 0xF3, 0xF4]),
];

/// `is_valid_enum(OPCODE, op)` on `chip`: is `op` a named member of its opcode enum?
pub fn is_named_opcode(chip: Generation, op: u8) -> bool {
    EVERY_CHIP.iter().any(|&(lo, hi)| lo <= op && op <= hi)
        || (chip == Generation::Sunda && SUNDA_ONLY.contains(&op))
        || ADDED
            .iter()
            .any(|&(since, ops)| since <= chip && ops.contains(&op))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Compare with `isa/opcodes.tsv`, read as a whole-file token stream (seven tokens a row).
    #[test]
    fn transcription_matches_the_isa_file() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../isa/opcodes.tsv");
        let text = std::fs::read_to_string(path).expect("isa/opcodes.tsv");
        let data: String = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .collect::<Vec<_>>()
            .join("\n");
        let tokens: Vec<&str> = data.split_whitespace().collect();
        assert_eq!(tokens.len() % 7, 0);
        let mut listed = [[false; 4]; 256];
        for row in tokens.chunks(7) {
            let op = usize::from_str_radix(&row[0][2..], 16).expect("hex");
            for k in 0..4 {
                listed[op][k] = row[2 + k] == "1";
            }
        }
        for (k, (_, chip)) in CHIPS.iter().enumerate() {
            for op in 0..=255u8 {
                assert_eq!(
                    is_named_opcode(*chip, op),
                    listed[usize::from(op)][k],
                    "{chip:?} {op:#04x}"
                );
            }
        }
    }

    #[test]
    fn counts_from_the_banner() {
        let counts: Vec<usize> = CHIPS
            .iter()
            .map(|(_, c)| (0..=255u8).filter(|&op| is_named_opcode(*c, op)).count())
            .collect();
        assert_eq!(counts, [144, 149, 158, 164]);
    }
}
