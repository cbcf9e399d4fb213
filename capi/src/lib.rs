//! `tpb_reference`: the reference implementation (tpb-core) behind the C
//! ABI of `include/tpb_subject.h`, version 1 and the version-2 block, built
//! as a shared library (`cargo build --release -p tpb-capi` →
//! `target/release/libtpb_reference.so`).
//!
//! Two uses: a compiler's own C or C++ unit tests link it to call the
//! reference validators, decoder, encoder, lookup tables, stream parser and
//! lowering directly; and `tpbconform gate --subject lib:<it>` runs it as a
//! subject, which drives the whole library path against core itself.
//!
//! - [`abi`]: the header's numbers (version, status codes, capability and
//!   table bits, verdict ids), checked against the header by its tests;
//! - [`generation`]: the generation `tpb_subject_init` selected;
//! - [`reference`](mod@reference): the operations in safe Rust, answers shaped by the
//!   harness's own JSON functions;
//! - [`names`]: the NUL-terminated names handed to C, kept until unload;
//! - `ffi`: the exports, the crate's only `unsafe`.

pub mod abi;
mod ffi;
pub mod generation;
pub mod names;
pub mod reference;
