//! The swarm [`Config`] and the opcode draw.

use crate::generation::Generation;
use crate::layout::OPCODES;
use arbitrary::{Result, Unstructured};

/// Largest `k` a [`Config`] can ask for.
pub const MAX_K: u8 = 3;

/// The one generator configuration (swarm: drawn once per fuzz input, it skews the case
/// mix): the generation, the opcode weights, the near-valid rate and violations, the sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The generation the cases are built and labelled for (its roster, emitted opcodes,
    /// dtype column, encoder; SPEC §0).
    pub arch: Generation,
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
    /// The default generation, uniform opcodes, `k = 1`, half near-valid, up to 4 group args.
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
    /// The effective number of violations per near-valid case (1..=[`MAX_K`]).
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
