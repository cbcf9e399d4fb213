//! Custom-op groups and multi-bundle streams (SPEC §5.3).

use super::cases::{near_valid_case, valid_case};
use super::config::Config;
use super::rng::SplitMix64;
use super::valid::{scratch, sync, EncodeRefused, GenError};
use crate::generation::Generation;
use arbitrary::{Result, Unstructured};
use tpb_core::insn::{CustomOpGroup, CustomOpHeader, Instruction};

/// A valid custom-op group of [`Config::max_args`] args at most.
pub fn group(u: &mut Unstructured<'_>, cfg: &Config) -> Result<CustomOpGroup> {
    let hi = if cfg.max_args & 0x80 != 0 {
        u8::MAX
    } else {
        cfg.max_args % 16
    };
    let n = u.int_in_range(0..=hi)?;
    group_of(u, n)
}

fn group_of(u: &mut Unstructured<'_>, n: u8) -> Result<CustomOpGroup> {
    let (b10, d14, d18, b1c) = scratch(u)?;
    // Two argument patterns from the input, the rest from a PRNG seeded by it (104 bytes).
    let mut bulk = SplitMix64(u.arbitrary()?);
    let mut args = Vec::with_capacity(usize::from(n));
    for i in 0..n {
        if i < 2 {
            args.push(u.arbitrary()?);
        } else {
            let mut a = [0u8; 48];
            bulk.fill(&mut a);
            args.push(a);
        }
    }
    Ok(CustomOpGroup {
        sync: sync(u)?,
        function_id: u.arbitrary()?,
        has_scratch_space: b10,
        scratch_space_addr: d14,
        scratch_space_size: d18,
        scratch_space_num_partitions: b1c,
        output: u.arbitrary()?,
        args,
    })
}

pub fn encode_group(g: &CustomOpGroup, arch: Generation) -> std::result::Result<Vec<u8>, GenError> {
    match g.encode(arch) {
        Ok(bs) => Ok(bs.iter().flat_map(|b| b.0).collect()),
        Err(e) => Err(GenError::Encode(Box::new(EncodeRefused {
            instruction: Instruction::CustomOpHeader(CustomOpHeader::default()),
            error: format!("group of {} args: {e:?}", g.args.len()),
        }))),
    }
}

/// One valid group of the next byte's argument count (a byte comparison tracing can set),
/// half the time followed by a valid non-group bundle (SPEC §5.3).
pub fn wide_group(
    u: &mut Unstructured<'_>,
    cfg: &Config,
) -> std::result::Result<Vec<u8>, GenError> {
    let n: u8 = u.arbitrary()?;
    let mut out = encode_group(&group_of(u, n)?, cfg.arch)?;
    if u.arbitrary()? {
        out.extend(valid_case(u, cfg)?.bundle);
    }
    Ok(out)
}

/// A stream (SPEC §5.3) of up to 6 valid or broken groups and bundles; rarely trailing bytes.
pub fn stream(u: &mut Unstructured<'_>, cfg: &Config) -> std::result::Result<Vec<u8>, GenError> {
    let mut out = Vec::new();
    let items = u.int_in_range(1..=6u8)?;
    for _ in 0..items {
        match u.int_in_range(0..=7u8)? {
            3 => out.extend(valid_case(u, cfg)?.bundle),
            4 => out.extend(near_valid_case(u, cfg)?.bundle),
            pick => {
                let mut g = encode_group(&group(u, cfg)?, cfg.arch)?;
                let last = g.len() - 64;
                // A whole group, its last payload cut, one too many, or its count off by one.
                match pick {
                    5 => g.truncate(last),
                    6 => g.extend_from_within(last..),
                    7 => {
                        let np = u16::from_le_bytes([g[0x0C], g[0x0D]]);
                        let np = np.wrapping_add(if u.arbitrary()? { 1 } else { u16::MAX });
                        g[0x0C..0x0E].copy_from_slice(&np.to_le_bytes());
                    }
                    _ => {}
                }
                out.extend(g);
            }
        }
    }
    // 1 in 16, never on exhausted bytes (`ratio` would say yes there).
    if u.int_in_range(0..=15u8)? == 15 {
        let n = u.int_in_range(1..=63usize)?;
        out.extend(vec![0u8; n]);
    }
    Ok(out)
}
