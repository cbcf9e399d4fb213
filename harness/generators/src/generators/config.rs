//! The swarm [`Config`] and the opcode draw.

use crate::arch::Arch;
use crate::layout::OPCODES;
use arbitrary::{Arbitrary, Result, Unstructured};
use tpb_core::Generation;

/// The generation the generators build images and labels for: v2, the default (SPEC §0).
pub const GEN: Generation = Generation::V2;
/// [`GEN`] as the harness spells it.
pub const ARCH: Arch = Arch::V2;

/// Largest `k` a [`Config`] can ask for.
pub const MAX_K: u8 = 3;

/// Swarm configuration: drawn once per fuzz input, it skews the case mix.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Relative weight of each opcode, in [`OPCODES`] order (all zero = uniform).
    pub weights: [u8; OPCODES.len()],
    /// Violations per near-valid case: `1 + k % MAX_K`.
    pub k: u8,
    /// Out of 256: how often [`case`] returns a near-valid case.
    pub near: u8,
    /// Most arguments in a generated group: `max_args % 16`, or (bit 7 set)
    /// the whole 0..=255 range (SPEC §5.3).
    pub max_args: u8,
}

impl Default for Config {
    /// Uniform opcodes, `k = 1`, half near-valid, up to 4 group args.
    fn default() -> Self {
        Config {
            weights: [1; OPCODES.len()],
            k: 0,
            near: 128,
            max_args: 4,
        }
    }
}

impl Config {
    /// The effective number of violations per near-valid case (1..=[`MAX_K`]).
    pub fn violations(&self) -> usize {
        usize::from(1 + self.k % MAX_K)
    }
}

/// Picks an opcode [`GEN`]'s compiler emits by the config's weights (seed 003 §"At a glance").
pub fn opcode(u: &mut Unstructured<'_>, cfg: &Config) -> Result<u8> {
    let weight = |i: usize, w: u8| {
        if GEN.emits(OPCODES[i]) {
            u32::from(w)
        } else {
            0
        }
    };
    let total: u32 = cfg
        .weights
        .iter()
        .enumerate()
        .map(|(i, &w)| weight(i, w))
        .sum();
    if total == 0 {
        let emitted: Vec<u8> = OPCODES.iter().copied().filter(|&o| GEN.emits(o)).collect();
        return u.choose(&emitted).copied();
    }
    let mut x = u.int_in_range(0..=total - 1)?;
    for (i, &w) in cfg.weights.iter().enumerate() {
        let w = weight(i, w);
        if x < w {
            return Ok(OPCODES[i]);
        }
        x -= w;
    }
    Ok(OPCODES[OPCODES.len() - 1])
}
