//! `tpb-core`: encoder, decoder and validators for the 64-byte TPB ISA bundles.
//!
//! Implements `SPEC.md` (`tpb-spec-1`). Seed citations: **S000** =
//! `shared/seeds/000_a9843df13f9040c1.txt` (CUSTOM_OP validators), **S003** =
//! `shared/seeds/003_62e527863da4764e.txt` (cross-engine encoders), **F§n** =
//! `shared/FACTS.md` section n, **D-n** = a SPEC §9 decision.
//!
//! Every public function is total: no input of any length panics, and memory
//! use is bounded by the input length.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bundle;
pub mod insn;
pub mod ir;
pub mod layout;
pub mod lower;
pub mod lut;
pub mod roster;
pub mod stream;
pub mod validate;

pub use bundle::{Bundle, LengthError};
pub use insn::{decode, DecodeError, EncodeError, FieldValue, Instruction};
pub mod sync;
