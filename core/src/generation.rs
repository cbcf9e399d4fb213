//! Hardware generations and their profiles (SPEC §2): v2 Sunda, v3 Cayman, v4 Mariana,
//! v5 Maverick. A profile answers four questions per generation:
//!
//! - is a byte a member of the header's `NEURON_ISA_TPB_OPCODE` enum (FACTS §1 \[H\], generated
//!   at build time from `isa/opcodes.tsv`, the one source);
//! - which record opcodes this generation's compiler can encode (isa/records.tsv `since`;
//!   seed 003 §"At a glance": 0xBE, 0xBF and 0xD8 are CoreV3+);
//! - which dtype column the compiler uses and which tags the header `NEURON_ISA_TPB_DTYPE`
//!   enum knows (FACTS §6);
//! - which ALU-op wire bytes the header knows (FACTS §4).
//!
//! v2 is the default: the seeds trace the `core_v2` validators (seed 000 last NOTE).

use crate::lut::{DtypeColumn, DTYPE_TABLE};
use core::fmt;

include!(concat!(env!("OUT_DIR"), "/opcodes.rs"));

/// A TPB hardware generation (FACTS "Generations").
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum Generation {
    /// NC-v2 Sunda: the seeds' `core_v2` path. The default.
    #[default]
    V2,
    /// NC-v3 Cayman.
    V3,
    /// NC-v4 Mariana.
    V4,
    /// NC-v5 Maverick.
    V5,
}

/// `--arch` names and codenames, in generation order (FACTS "Generations").
const NAMES: [(Generation, &str, &str); 4] = [
    (Generation::V2, "v2", "Sunda"),
    (Generation::V3, "v3", "Cayman"),
    (Generation::V4, "v4", "Mariana"),
    (Generation::V5, "v5", "Maverick"),
];

// The record opcodes and the first generation whose compiler encodes each one, generated from
// isa/records.tsv's `since` column (seed 003 §"At a glance": CoreV2 owns 0xD9/0xDA, 0xCB, 0xDC,
// 0xDB, 0xDE, 0x85/0x86; CoreV3 adds 0xBE, 0xD8, 0xBF; "CoreV4 inherits these"; v5 inherits v4,
// SPEC D-22).
include!(concat!(env!("OUT_DIR"), "/emitted_since.rs"));

/// Header `NEURON_ISA_TPB_DTYPE` members, as inclusive ranges with the first generation that
/// has them (FACTS §6 \[H\]); INVALID 0x00 is not a member.
const DTYPE_MEMBERS: [(u8, u8, Generation); 4] = [
    (0x01, 0x0F, Generation::V2),
    (0x10, 0x10, Generation::V4), // FP4_EXP2
    (0x11, 0x16, Generation::V5), // FP8_EXP2, INT4, SFP8 variants
    (0x19, 0x1F, Generation::V4), // CPTC1..7
];

/// Header ALU-op wire members, as (first, last, since, until) inclusive ranges (FACTS §4 \[H\]):
/// the base band 0x00..=0x1D on every generation; ABS_MAX..SQUARE 0x20..=0x23 from v4;
/// SYMMETRIC_CLAMP 0x24 on v5; the integer band 0xC4..=0xC6 on v2 and 0xC4..=0xE1 from v3.
const ALU_MEMBERS: [(u8, u8, Generation, Generation); 5] = [
    (0x00, 0x1D, Generation::V2, Generation::V5),
    (0x20, 0x23, Generation::V4, Generation::V5),
    (0x24, 0x24, Generation::V5, Generation::V5),
    (0xC4, 0xC6, Generation::V2, Generation::V2),
    (0xC4, 0xE1, Generation::V3, Generation::V5),
];

/// Bit of a generation in [`OPCODE_ROWS`]' membership column (build.rs).
const fn bit(g: Generation) -> u8 {
    match g {
        Generation::V2 => 1,
        Generation::V3 => 2,
        Generation::V4 => 4,
        Generation::V5 => 8,
    }
}

/// 256-bit opcode membership per generation, built at compile time from [`OPCODE_ROWS`].
const fn roster_bitmap(g: Generation) -> [u64; 4] {
    let mut map = [0u64; 4];
    let mut i = 0;
    while i < OPCODE_ROWS.len() {
        let (op, _, gens) = OPCODE_ROWS[i];
        if gens & bit(g) != 0 {
            map[(op >> 6) as usize] |= 1u64 << (op & 63);
        }
        i += 1;
    }
    map
}

const ROSTERS: [[u64; 4]; 4] = [
    roster_bitmap(Generation::V2),
    roster_bitmap(Generation::V3),
    roster_bitmap(Generation::V4),
    roster_bitmap(Generation::V5),
];

/// Why a generation name was not understood.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum GenerationError {
    /// Not one of `v2`, `v3`, `v4`, `v5`.
    UnknownName {
        /// The name given.
        name: String,
    },
}

impl fmt::Display for GenerationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GenerationError::UnknownName { name } => {
                write!(f, "unknown generation {name:?} (expected v2, v3, v4 or v5)")
            }
        }
    }
}

impl std::error::Error for GenerationError {}

impl Generation {
    /// Every generation, oldest first.
    pub const ALL: [Generation; 4] = [
        Generation::V2,
        Generation::V3,
        Generation::V4,
        Generation::V5,
    ];

    fn index(self) -> usize {
        match self {
            Generation::V2 => 0,
            Generation::V3 => 1,
            Generation::V4 => 2,
            Generation::V5 => 3,
        }
    }

    /// `v2` … `v5`.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(g, _, _)| *g == self)
            .map_or("", |(_, n, _)| n)
    }

    /// `Sunda` … `Maverick`.
    pub fn codename(self) -> &'static str {
        NAMES
            .iter()
            .find(|(g, _, _)| *g == self)
            .map_or("", |(_, _, c)| c)
    }

    /// From `v2` … `v5`.
    pub fn from_name(s: &str) -> Result<Generation, GenerationError> {
        NAMES
            .iter()
            .find(|(_, n, _)| *n == s)
            .map(|(g, _, _)| *g)
            .ok_or_else(|| GenerationError::UnknownName {
                name: s.to_string(),
            })
    }

    /// `is_valid_enum_opcode`: `op` is a member of this generation's opcode enum
    /// (FACTS §1 \[H\]; 0xFF INVALID never is).
    #[inline(always)]
    pub fn is_valid_opcode(self, op: u8) -> bool {
        let word = ROSTERS
            .get(self.index())
            .and_then(|m| m.get(usize::from(op >> 6)))
            .copied()
            .unwrap_or(0);
        (word >> (op & 63)) & 1 == 1
    }

    /// Can this generation's compiler encode `op` (a record opcode)? Seed 003 §"At a glance".
    pub fn emits(self, op: u8) -> bool {
        EMITTED_SINCE
            .iter()
            .any(|&(o, since)| o == op && since <= self)
    }

    /// The dtype column the compiler uses (FACTS §6): pre-v4 on v2/v3, v4 on v4/v5 (D-22).
    pub fn dtype_column(self) -> DtypeColumn {
        if self >= Generation::V4 {
            DtypeColumn::V4
        } else {
            DtypeColumn::PreV4
        }
    }

    /// `tag` is a tag this generation's dtype column can produce (what decode accepts).
    pub fn emits_dtype_tag(self, tag: u8) -> bool {
        let col = self.dtype_column();
        DTYPE_TABLE.iter().any(|&(_, pre, v4)| {
            tag == match col {
                DtypeColumn::PreV4 => pre,
                DtypeColumn::V4 => v4,
            }
        })
    }

    /// `tag` is a member of this generation's header DTYPE enum (FACTS §6 \[H\]).
    pub fn is_dtype_member(self, tag: u8) -> bool {
        DTYPE_MEMBERS
            .iter()
            .any(|&(lo, hi, since)| since <= self && (lo..=hi).contains(&tag))
    }

    /// `wire` is a member of this generation's header ALU-op enum (FACTS §4 \[H\]).
    pub fn is_alu_member(self, wire: u8) -> bool {
        ALU_MEMBERS.iter().any(|&(lo, hi, since, until)| {
            since <= self && self <= until && (lo..=hi).contains(&wire)
        })
    }

    /// Number of named opcodes in this generation's enum.
    pub fn opcode_count(self) -> usize {
        (0..=255u8).filter(|&op| self.is_valid_opcode(op)).count()
    }
}

impl core::str::FromStr for Generation {
    type Err = GenerationError;
    /// [`Generation::from_name`]: `v2` … `v5`.
    fn from_str(s: &str) -> Result<Generation, GenerationError> {
        Generation::from_name(s)
    }
}

/// The `--arch` name, `v2` … `v5` (what the harness prints in replay commands and keys).
impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The header name of an opcode in any generation's enum (`isa/opcodes.tsv`).
pub fn opcode_name(op: u8) -> Option<&'static str> {
    OPCODE_ROWS
        .iter()
        .find(|(o, _, _)| *o == op)
        .map(|(_, n, _)| *n)
}

/// The generations whose enum holds `op`, oldest first.
pub fn generations_with(op: u8) -> impl Iterator<Item = Generation> {
    Generation::ALL
        .into_iter()
        .filter(move |g| g.is_valid_opcode(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `isa/opcodes.tsv` at test time, by a different route than build.rs (whitespace
    /// split, column lookup by header name), and compares it with the compiled rosters.
    #[test]
    fn rosters_match_the_isa_file() {
        let text = include_str!("../../isa/opcodes.tsv");
        let mut lines = text.lines().filter(|l| !l.starts_with('#'));
        let header: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
        let mut in_file = [[false; 256]; 4];
        for line in lines {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let op = u8::from_str_radix(cols[0].trim_start_matches("0x"), 16).expect("hex");
            assert_eq!(opcode_name(op), Some(cols[1]), "name of {op:#04x}");
            for g in Generation::ALL {
                let col = header.iter().position(|h| *h == g.name()).expect("column");
                in_file[g.index()][usize::from(op)] = cols[col] == "1";
            }
        }
        for g in Generation::ALL {
            for op in 0..=255u8 {
                assert_eq!(
                    g.is_valid_opcode(op),
                    in_file[g.index()][usize::from(op)],
                    "{g} opcode {op:#04x}"
                );
            }
        }
        // The length column (FACTS §9 [K], SPEC D-27): 128 for exactly the LONG_OPCODES.
        let length_col = header
            .iter()
            .position(|h| *h == "length")
            .expect("length column");
        for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let op = u8::from_str_radix(cols[0].trim_start_matches("0x"), 16).expect("hex");
            assert_eq!(
                cols[length_col] == "128",
                LONG_OPCODES.contains(&op),
                "{op:#04x}"
            );
        }
        // The banner's counts (FACTS §1: v2 144, v3 149, v4 158, v5 164), typed by hand.
        let counts: Vec<usize> = Generation::ALL.iter().map(|g| g.opcode_count()).collect();
        assert_eq!(counts, [144, 149, 158, 164]);
    }

    /// FACTS §1 statements, typed by hand.
    #[test]
    fn roster_facts() {
        for g in Generation::ALL {
            assert!(!g.is_valid_opcode(0xFF), "INVALID");
            assert!(!g.is_valid_opcode(0xB7), "UcodeConfig");
            assert!(!g.is_valid_opcode(0xEB), "Hint");
            assert!(g.is_valid_opcode(0xD8), "PseudoCoreBarrier in every enum");
            assert!(g.is_valid_opcode(0x85) && g.is_valid_opcode(0x86));
        }
        for op in [0x87u8, 0x88, 0x8A, 0x8B, 0x8C, 0x8D, 0x8F] {
            assert!(Generation::V2.is_valid_opcode(op), "{op:#x} v2");
            for g in [Generation::V3, Generation::V4, Generation::V5] {
                assert!(!g.is_valid_opcode(op), "{op:#x} {g}");
            }
        }
        for op in [0xBEu8, 0xBF] {
            assert!(!Generation::V2.is_valid_opcode(op));
            assert!(Generation::V3.is_valid_opcode(op));
        }
    }

    #[test]
    fn emitted_opcodes() {
        let v3_plus = [0xBEu8, 0xBF, 0xD8];
        for op in crate::mnemonics::seed_opcodes() {
            assert_eq!(Generation::V2.emits(op), !v3_plus.contains(&op), "{op:#x}");
            for g in [Generation::V3, Generation::V4, Generation::V5] {
                assert!(g.emits(op), "{op:#x} {g}");
                assert!(
                    g.is_valid_opcode(op),
                    "an emitted opcode is a header member"
                );
            }
        }
        assert!(!Generation::V5.emits(0x87));
    }

    #[test]
    fn dtype_profiles() {
        for g in Generation::ALL {
            for tag in 0..=255u8 {
                if g.emits_dtype_tag(tag) {
                    assert!(g.is_dtype_member(tag), "{g} emits non-member {tag:#x}");
                }
            }
            assert!(!g.is_dtype_member(0x00), "INVALID");
            assert!(!g.is_dtype_member(0x17) && !g.is_dtype_member(0x18));
        }
        use Generation::{V3, V4, V5};
        for (g, want) in [(V3, false), (V4, true), (V5, true)] {
            assert_eq!(g.emits_dtype_tag(0x10), want, "{g}");
        }
        for (g, tag, want) in [
            (V3, 0x10, false),
            (V4, 0x1F, true),
            (V4, 0x11, false),
            (V5, 0x16, true),
        ] {
            assert_eq!(g.is_dtype_member(tag), want, "{g} {tag:#x}");
        }
    }

    #[test]
    fn alu_profiles() {
        for g in Generation::ALL {
            for w in 0x00..=0x1Du8 {
                assert!(g.is_alu_member(w));
            }
            assert!(!g.is_alu_member(0x1E) && !g.is_alu_member(0xFF));
            assert!(g.is_alu_member(0xC4) && g.is_alu_member(0xC6));
        }
        use Generation::{V2, V3, V4, V5};
        let members = [(V2, 0xC7, false), (V3, 0xE1, true), (V3, 0x20, false)];
        let more = [(V4, 0x23, true), (V4, 0x24, false), (V5, 0x24, true)];
        for (g, w, want) in members.into_iter().chain(more) {
            assert_eq!(g.is_alu_member(w), want, "{g} {w:#x}");
        }
    }

    #[test]
    fn names() {
        for g in Generation::ALL {
            assert_eq!(Generation::from_name(g.name()), Ok(g));
            // Display is the `--arch` name and parses back (the harness's
            // replay commands and keys print it).
            assert_eq!(g.to_string(), g.name());
            assert_eq!(g.to_string().parse::<Generation>(), Ok(g));
        }
        assert!("v1".parse::<Generation>().is_err());
        assert_eq!(Generation::default(), Generation::V2);
        assert_eq!(Generation::V5.codename(), "Maverick");
        assert!(Generation::from_name("v6").is_err());
        assert!(Generation::from_name("V2").is_err());
    }
}
