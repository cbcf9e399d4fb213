//! The hardware generation a run targets (`v2` … `v5`): core's
//! [`Generation`], the one type for it in the harness (the `arch` of the
//! `tpb-subject/1` hello and of `--arch`; not the compiler's IR arch, which
//! is [`crate::subjects::ir_arch_name`]).

pub use tpb_core::generation::{Generation, GenerationError};
