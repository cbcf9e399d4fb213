//! IR-level gates (SPEC §7).

coded_enum! {
    /// Memory space of an operand (D-11; S000 §C4 names SBUF | HBM): the state
    /// buffer, device HBM, PSUM, anything else.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    #[allow(missing_docs)]
    pub enum MemSpace { Sbuf = 0, Hbm = 1, Psum = 2, Other = 3 }
    /// From its code 0..=3.
    fn from_code(u8);
}

coded_enum! {
    /// Target architecture (D-11; S000 §C4 names Sunda/Tonga): Tonga, Sunda
    /// (CoreV2, arch 20), Cayman (CoreV3, arch 30), Mariana.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    #[allow(missing_docs)]
    pub enum Arch { Tonga = 0, Sunda = 1, Cayman = 2, Mariana = 3 }
    /// From its code 0..=3.
    fn from_code(u8);
}

named_error! {
    /// SPEC §7 error name.
    fn name + Display;
    /// Why an IR gate failed (SPEC §7).
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
    #[non_exhaustive]
    pub enum IrError {
        /// checkCustomOp: more than one output.
        TooManyOutputs {
            /// Number of outputs.
            n: usize,
        } => "too_many_outputs",
        /// checkCustomOp: an operand outside SBUF/HBM.
        BadMemorySpace {
            /// `false` = arg, `true` = output.
            is_output: bool,
            /// Position in its list.
            index: usize,
            /// The space.
            space: MemSpace,
        } => "bad_memory_space",
        /// checkCustomOp: arch not Sunda/Tonga.
        BadArch {
            /// The arch.
            arch: Arch,
        } => "bad_arch",
        /// isCCHavingSBScratchPad: kind != 0x30.
        NotCustomOp {
            /// The IR kind.
            kind: u32,
        } => "not_custom_op",
        /// isCCHavingSBScratchPad: subkind ∉ {2,3}.
        BadSubkind {
            /// The subkind.
            subkind: u32,
        } => "bad_subkind",
        /// isCCHavingSBScratchPad: not an SB-arg-global CC op.
        NotSbArgGlobal => "not_sb_arg_global",
        /// isCCHavingSBScratchPad: n_args + 2 + n_outputs != n_scratch.
        ScratchCountMismatch {
            /// n_args + 2 + n_outputs (no overflow).
            expected: u128,
            /// n_scratch.
            found: u64,
        } => "scratch_count_mismatch",
        /// cc_dim ∉ {0, 1}.
        BadCcDim {
            /// The dim.
            dim: u32,
        } => "bad_cc_dim",
        /// GetGlobalRankId output storage kind != 11.
        NotRegisterAccess {
            /// The storage kind.
            storage_kind: u32,
        } => "not_register_access",
        /// GPSIMDSB2SB: cores_per_lnc != 2.
        NotLnc2 {
            /// cores per LNC.
            cores_per_lnc: u32,
        } => "not_lnc2",
    }
}

/// checkCustomOp (S000 §C4, 0xfdbf90): ≤ 1 output; args then outputs in SBUF|HBM;
/// arch ∈ {Sunda, Tonga}.
pub fn check_custom_op(args: &[MemSpace], outputs: &[MemSpace], arch: Arch) -> Result<(), IrError> {
    if outputs.len() > 1 {
        return Err(IrError::TooManyOutputs { n: outputs.len() });
    }
    let ops = args
        .iter()
        .enumerate()
        .map(|(i, s)| (false, i, *s))
        .chain(outputs.iter().enumerate().map(|(i, s)| (true, i, *s)));
    for (is_output, index, space) in ops {
        if !matches!(space, MemSpace::Sbuf | MemSpace::Hbm) {
            return Err(IrError::BadMemorySpace {
                is_output,
                index,
                space,
            });
        }
    }
    if !matches!(arch, Arch::Sunda | Arch::Tonga) {
        return Err(IrError::BadArch { arch });
    }
    Ok(())
}

/// CustomOp IR kind (S000 §"SB-scratchpad bookkeeping" `I+0x58 != 0x30`).
pub const CUSTOM_OP_KIND: u32 = 0x30;

/// Inputs of `isCCHavingSBScratchPad`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ScratchPadQuery {
    /// IR kind (@I+0x58).
    pub kind: u32,
    /// Subkind (@I+0xF8).
    pub subkind: u32,
    /// isSBArgGlobalCCOp(I).
    pub sb_arg_global: bool,
    /// Length of the args list.
    pub n_args: u64,
    /// Length of the outputs list.
    pub n_outputs: u64,
    /// Length of the scratch list.
    pub n_scratch: u64,
}

/// isCCHavingSBScratchPad (S000, libBIR 0x312700); `Ok(())` means true.
pub fn is_cc_having_sb_scratchpad(q: &ScratchPadQuery) -> Result<(), IrError> {
    if q.kind != CUSTOM_OP_KIND {
        return Err(IrError::NotCustomOp { kind: q.kind });
    }
    // S000 `(I.subkind) - 2 > 1u` (unsigned)
    if q.subkind.wrapping_sub(2) > 1 {
        return Err(IrError::BadSubkind { subkind: q.subkind });
    }
    if !q.sb_arg_global {
        return Err(IrError::NotSbArgGlobal);
    }
    let expected = u128::from(q.n_args) + 2 + u128::from(q.n_outputs);
    if expected != u128::from(q.n_scratch) {
        return Err(IrError::ScratchCountMismatch {
            expected,
            found: q.n_scratch,
        });
    }
    Ok(())
}

/// cc_dim ∈ {0 Partition, 1 Free} (S003 §3.5).
pub fn check_cc_dim(dim: u32) -> Result<(), IrError> {
    if dim <= 1 {
        Ok(())
    } else {
        Err(IrError::BadCcDim { dim })
    }
}

/// RegisterAccess storage kind (S003 §8.1 `cmp $0xb`).
pub const REGISTER_ACCESS_KIND: u32 = 11;

/// GetGlobalRankId output must be a RegisterAccess (S003 §8.1).
pub fn check_rank_id_output(storage_kind: u32) -> Result<(), IrError> {
    if storage_kind == REGISTER_ACCESS_KIND {
        Ok(())
    } else {
        Err(IrError::NotRegisterAccess { storage_kind })
    }
}

/// GPSIMDSB2SB requires LNC2 (S003 §5 `cmpl $0x2,0x1A4(arch)`).
pub fn check_lnc(cores_per_lnc: u32) -> Result<(), IrError> {
    if cores_per_lnc == 2 {
        Ok(())
    } else {
        Err(IrError::NotLnc2 { cores_per_lnc })
    }
}

/// Lowering route of a local collective.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Route {
    /// GPSIMD SB2SB mover, opcode 0xBF.
    Sb2sb,
    /// DMA.
    Dma,
}

/// MaxBytesPerPartition (S003 §5 NOTE, libBIR @0x784a00 = 0x400).
pub const MAX_SB2SB_BYTES_PER_PARTITION: u64 = 1024;

/// ≤ 1024 bytes/partition → SB2SB, else DMA (S003 §5 NOTE).
pub fn route_local_collective(bytes_per_partition: u64) -> Route {
    if bytes_per_partition <= MAX_SB2SB_BYTES_PER_PARTITION {
        Route::Sb2sb
    } else {
        Route::Dma
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_op_gate_order() {
        use MemSpace::*;
        assert_eq!(check_custom_op(&[Sbuf, Hbm], &[Hbm], Arch::Sunda), Ok(()));
        assert_eq!(check_custom_op(&[], &[], Arch::Tonga), Ok(()));
        // too_many_outputs first, even with bad spaces and arch
        assert_eq!(
            check_custom_op(&[Psum], &[Sbuf, Other], Arch::Cayman)
                .unwrap_err()
                .name(),
            "too_many_outputs"
        );
        assert_eq!(
            check_custom_op(&[Psum], &[Sbuf], Arch::Cayman)
                .unwrap_err()
                .name(),
            "bad_memory_space"
        );
        assert_eq!(
            check_custom_op(&[Sbuf], &[Other], Arch::Sunda),
            Err(IrError::BadMemorySpace {
                is_output: true,
                index: 0,
                space: Other
            })
        );
        assert_eq!(
            check_custom_op(&[Sbuf], &[Hbm], Arch::Mariana)
                .unwrap_err()
                .name(),
            "bad_arch"
        );
        assert_eq!(
            check_custom_op(&[Sbuf], &[Hbm], Arch::Cayman)
                .unwrap_err()
                .name(),
            "bad_arch"
        );
    }

    #[test]
    fn scratchpad() {
        let ok = ScratchPadQuery {
            kind: 0x30,
            subkind: 2,
            sb_arg_global: true,
            n_args: 3,
            n_outputs: 1,
            n_scratch: 6,
        };
        assert_eq!(is_cc_having_sb_scratchpad(&ok), Ok(()));
        assert_eq!(
            is_cc_having_sb_scratchpad(&ScratchPadQuery { subkind: 3, ..ok }),
            Ok(())
        );
        assert_eq!(
            is_cc_having_sb_scratchpad(&ScratchPadQuery { kind: 0x31, ..ok })
                .unwrap_err()
                .name(),
            "not_custom_op"
        );
        for sk in [0u32, 1, 4, u32::MAX] {
            assert_eq!(
                is_cc_having_sb_scratchpad(&ScratchPadQuery { subkind: sk, ..ok })
                    .unwrap_err()
                    .name(),
                "bad_subkind"
            );
        }
        assert_eq!(
            is_cc_having_sb_scratchpad(&ScratchPadQuery {
                sb_arg_global: false,
                ..ok
            })
            .unwrap_err()
            .name(),
            "not_sb_arg_global"
        );
        assert_eq!(
            is_cc_having_sb_scratchpad(&ScratchPadQuery { n_scratch: 5, ..ok })
                .unwrap_err()
                .name(),
            "scratch_count_mismatch"
        );
        // no overflow: u64::MAX args
        let big = ScratchPadQuery {
            n_args: u64::MAX,
            n_outputs: u64::MAX,
            n_scratch: 0,
            ..ok
        };
        assert_eq!(
            is_cc_having_sb_scratchpad(&big).unwrap_err().name(),
            "scratch_count_mismatch"
        );
    }

    #[test]
    fn small_gates() {
        assert!(check_cc_dim(0).is_ok() && check_cc_dim(1).is_ok());
        assert_eq!(check_cc_dim(2).unwrap_err().name(), "bad_cc_dim");
        assert!(check_rank_id_output(11).is_ok());
        assert_eq!(
            check_rank_id_output(10).unwrap_err().name(),
            "not_register_access"
        );
        assert!(check_lnc(2).is_ok());
        assert_eq!(check_lnc(1).unwrap_err().name(), "not_lnc2");
        assert_eq!(route_local_collective(0), Route::Sb2sb);
        assert_eq!(route_local_collective(1024), Route::Sb2sb);
        assert_eq!(route_local_collective(1025), Route::Dma);
        assert_eq!(MemSpace::from_code(1), Some(MemSpace::Hbm));
        assert_eq!(MemSpace::from_code(4), None);
        assert_eq!(Arch::from_code(3), Some(Arch::Mariana));
        assert_eq!(Arch::from_code(4), None);
    }
}
