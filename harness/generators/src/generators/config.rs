//! The swarm [`Config`] and the opcode draw.

use crate::generation::Generation;
use crate::layout::OPCODES;
use arbitrary::{Result, Unstructured};

pub const MAX_K: u8 = 3;

/// The one generator configuration (swarm: drawn once per fuzz input): the generation built
/// and labelled for (SPEC §0), opcode weights in [`OPCODES`] order (all zero = uniform),
/// violations per near-valid case (`1 + k % MAX_K`), the near-valid rate out of 256, and
/// group arguments (`max_args % 16`, or with bit 7 any of 0..=255, SPEC §5.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub arch: Generation,
    pub weights: [u8; OPCODES.len()],
    pub k: u8,
    pub near: u8,
    pub max_args: u8,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            arch: Generation::default(),
            weights: [1; OPCODES.len()],
            k: 0,
            near: 128,
            max_args: 4,
        }
    }
}

impl Config {
    pub fn violations(&self) -> usize {
        usize::from(1 + self.k % MAX_K)
    }
}

/// Picks an opcode the config's generation emits by its weights (seed 003 §"At a glance").
pub fn opcode(u: &mut Unstructured<'_>, cfg: &Config) -> Result<u8> {
    let gen = cfg.arch;
    let weight = |i: usize, w: u8| {
        if gen.emits(OPCODES[i]) {
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
        let emitted: Vec<u8> = OPCODES.iter().copied().filter(|&o| gen.emits(o)).collect();
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
