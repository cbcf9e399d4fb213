//! `tpb-core`: encoder, decoder and validators for the 64-byte TPB ISA bundles.
//!
//! Implements `SPEC.md` (`tpb-spec-1`). Citations: **S000** = seed 000 (CUSTOM_OP
//! validators), **S003** = seed 003 (cross-engine encoders), **F§n** = `docs/sources.md` §n
//! (\[H\] = the ISA headers), **D-n** = a SPEC §9 decision. Every wire function takes the
//! hardware [`Generation`] (v2 Sunda is the default).
//!
//! Every public function is total: no input of any length panics, and memory
//! use is bounded by the input length.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// An error enum whose every variant states its snake_case name beside it
/// (`Variant { .. } => "name",`): expands to the enum as written and
/// `fn $name_fn(&self) -> &'static str` returning that name, so the name
/// list and the variant list cannot drift apart. `fn name + Display;` also
/// implements `Display` (the name) and `Error`.
macro_rules! named_error {
    (
        $(#[$fn_doc:meta])*
        fn $name_fn:ident $(+ $display:ident)?;
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

        $(
            impl core::fmt::$display for $ty {
                fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                    f.write_str(self.$name_fn())
                }
            }

            impl std::error::Error for $ty {}
        )?
    };
}

/// A fieldless enum whose codes are `0, 1, 2, …` in declaration order
/// (`Variant = 0,`): expands to the enum as written, `ALL` (every variant,
/// in code order) and `fn $from(code) -> Option<Self>`, an index into
/// `ALL`; a build error if a code is out of order. With `-> $to` also
/// `fn $to(self)`, the code; with `names $names` (code → name table
/// lookup) also `name()` and its inverse `from_name()`.
macro_rules! coded_enum {
    (
        $(#[$m:meta])*
        pub enum $ty:ident {
            $($(#[$vm:meta])* $v:ident = $code:literal),+ $(,)?
        }
        $(#[$from_doc:meta])*
        fn $from:ident($int:ty) $(-> $to:ident)?;
        $(names $names:path;)?
    ) => {
        $(#[$m])*
        pub enum $ty {
            $($(#[$vm])* $v = $code,)+
        }

        impl $ty {
            /// Every variant, in code order.
            pub const ALL: [$ty; [$($code),+].len()] = [$($ty::$v),+];

            $(#[$from_doc])*
            pub fn $from(code: $int) -> Option<$ty> {
                usize::try_from(code).ok().and_then(|i| $ty::ALL.get(i)).copied()
            }

            $(
                /// The code.
                pub fn $to(self) -> $int {
                    self as $int
                }
            )?

            $(
                /// The name (from the table lookup named in the declaration).
                pub fn name(self) -> &'static str {
                    $names(self as $int).unwrap_or("")
                }

                /// Inverse of `name()`.
                pub fn from_name(s: &str) -> Option<$ty> {
                    $ty::ALL.iter().copied().find(|v| $names(*v as $int) == Some(s))
                }
            )?
        }

        const _: () = {
            let mut i = 0;
            while i < $ty::ALL.len() {
                assert!($ty::ALL[i] as usize == i, "codes out of order");
                i += 1;
            }
        };
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
