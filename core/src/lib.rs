//! `tpb-core`: encoder, decoder and validators for the 64-byte TPB ISA bundles.
//!
//! Implements `SPEC.md` (`tpb-spec-1`). Citations: **S000** = seed 000 (CUSTOM_OP
//! validators), **S003** = seed 003 (cross-engine encoders), **F§n** = `docs/sources.md` §n
//! ([H] = the ISA headers), **D-n** = a SPEC §9 decision. Every wire function takes the
//! hardware [`Generation`] (v2 Sunda is the default).
//!
//! Every public function is total: no input of any length panics, and memory
//! use is bounded by the input length.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// An error enum whose every variant states its snake_case name beside it
/// (`Variant { .. } => "name",`): expands to the enum as written and
/// `fn $name_fn(&self) -> &'static str` returning that name, so the name
/// list and the variant list cannot drift apart.
macro_rules! named_error {
    (
        $(#[$fn_doc:meta])*
        fn $name_fn:ident;
        $(#[$m:meta])*
        pub enum $ty:ident {
            $(
                $(#[$vm:meta])*
                $v:ident $({ $($(#[$fm:meta])* $f:ident: $ft:ty),* $(,)? })? => $n:literal,
            )+
        }
    ) => {
        $(#[$m])*
        pub enum $ty {
            $(
                $(#[$vm])*
                $v $({ $($(#[$fm])* $f: $ft),* })?,
            )+
        }

        impl $ty {
            $(#[$fn_doc])*
            pub fn $name_fn(&self) -> &'static str {
                match self {
                    $($ty::$v { .. } => $n,)+
                }
            }
        }
    };
}

pub mod bundle;
pub mod engines;
pub mod events;
pub mod generation;
pub mod insn;
pub mod ir;
pub mod layout;
pub mod lint;
pub mod lower;
pub mod lut;
pub mod mnemonics;
pub mod stream;
pub mod validate;
pub mod walk;

pub use bundle::{Bundle, LengthError};
pub use generation::Generation;
pub use insn::{decode, DecodeError, EncodeError, FieldValue, Instruction};
pub mod sync;
