//! LUT ordinals and IR queries at the tables' and gates' edges.

use crate::arch::Arch;
use crate::subjects::{registry, IrQuery, LutTable, ScratchpadQuery, Subject};
use arbitrary::{Result, Unstructured};

/// The LUT ordinals at the SPEC §6 tables' edges, read from core's answers for each
/// [`LutTable`] (one source per fact): 0 and 1; per table, its first ordinal with a wire
/// byte and the one below, its last one and the two above, and the ordinals with no wire
/// byte between (FACTS §4: average, elemwise_mul; the CCE ops not shipped); far values.
pub fn lut_edge_ordinals() -> &'static [u32] {
    static EDGES: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    EDGES.get_or_init(|| {
        let core = registry::core_for(Arch::default());
        let mut v = vec![0, 1, 0x100, 0x1_0000, 0x8000_0000, u32::MAX];
        for t in LutTable::ALL {
            let ok: Vec<u32> = (0..0x100)
                .filter(|&n| matches!(core.lut(t, n), Ok(Ok(_))))
                .collect();
            let (Some(&first), Some(&last)) = (ok.first(), ok.last()) else {
                continue;
            };
            v.extend([first.saturating_sub(1), first, last, last + 1, last + 2]);
            v.extend((first..last).filter(|n| !ok.contains(n)));
        }
        v.sort_unstable();
        v.dedup();
        v
    })
}

/// An ordinal for the LUT targets, biased to [`lut_edge_ordinals`].
pub fn lut_ordinal(u: &mut Unstructured<'_>) -> Result<u32> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 | 1 => *u.choose(lut_edge_ordinals())?,
        2 => u.int_in_range(0..=40)?,
        _ => u.arbitrary()?,
    })
}

/// An IR query (SPEC §7), biased to each gate's boundary.
pub fn ir_query(u: &mut Unstructured<'_>) -> Result<IrQuery> {
    let mem = |u: &mut Unstructured<'_>| u.int_in_range(0..=3u8);
    let near = |u: &mut Unstructured<'_>, c: u64| -> Result<u64> {
        Ok(match u.int_in_range(0..=3u8)? {
            0 => c.saturating_sub(1),
            1 => c,
            2 => c.saturating_add(1),
            _ => u.arbitrary()?,
        })
    };
    Ok(match u.int_in_range(0..=5u8)? {
        0 => {
            let na = u.int_in_range(0..=4usize)?;
            let no = u.int_in_range(0..=2usize)?;
            let mut args = Vec::with_capacity(na);
            for _ in 0..na {
                args.push(mem(u)?);
            }
            let mut outputs = Vec::with_capacity(no);
            for _ in 0..no {
                outputs.push(mem(u)?);
            }
            IrQuery::CheckCustomOp {
                args,
                outputs,
                arch: mem(u)?,
            }
        }
        1 => {
            let n_args = if u.ratio(1, 8)? {
                u64::MAX - u.int_in_range(0..=2)?
            } else {
                u.int_in_range(0..=8)?
            };
            let n_outputs = u.int_in_range(0..=2)?;
            let n_scratch = near(u, n_args.wrapping_add(2).wrapping_add(n_outputs))?;
            IrQuery::SbScratchpad(ScratchpadQuery {
                kind: if u.ratio(3, 4)? { 0x30 } else { u.arbitrary()? },
                subkind: {
                    let c = 2 + u64::from(u.arbitrary::<bool>()?);
                    u32::try_from(near(u, c)?).unwrap_or(u32::MAX)
                },
                sb_arg_global: u.ratio(3, 4)?,
                n_args,
                n_outputs,
                n_scratch,
            })
        }
        2 => IrQuery::CcDim(u32::try_from(near(u, 1)?).unwrap_or(u32::MAX)),
        3 => IrQuery::RankIdOutput(u32::try_from(near(u, 11)?).unwrap_or(u32::MAX)),
        4 => IrQuery::Lnc(u32::try_from(near(u, 2)?).unwrap_or(u32::MAX)),
        _ => IrQuery::Route(near(u, 1024)?),
    })
}
