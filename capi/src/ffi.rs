//! The exported functions of include/tpb_subject.h (version 1 and the
//! version-2 block). The only module of this crate with `unsafe`: it checks
//! every pointer (null → `TPB_ERROR`), copies the caller's bytes into safe
//! Rust, calls [`crate::reference`], and writes the answer back.
//!
//! No panic crosses the boundary: every export runs its body under
//! `catch_unwind`, and a panic is `TPB_ERROR` (for the functions without a
//! status: a null name, no capability, no table, which declare nothing).
//! Every `TPB_ERROR` writes one line naming the reason to stderr (the
//! gate keeps a subject's stderr tail in its report).
#![allow(unsafe_code)]

use crate::abi::{self, Status};
use crate::generation;
use crate::names::c_name;
use crate::reference::{self, RequestError};
use std::ffi::{c_char, c_int, CStr};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tpb_subjects::generation::Generation;
use tpb_subjects::subjects::{Name, Validator};

/// Why a call failed (`TPB_ERROR`).
enum CallError {
    /// A pointer argument was null (its parameter name).
    Null(&'static str),
    /// No generation is selected.
    NoInit,
    /// `n` bundles do not fit in memory (`n`).
    Overflow(usize),
    /// A length no object can have (the length).
    TooLong(usize),
    /// `verdicts` is not aligned for `uint16_t` (its address).
    Misaligned(usize),
    /// The request was refused.
    Request(RequestError),
    /// A returned name cannot cross.
    Name(crate::names::NameError),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Null(p) => write!(f, "`{p}` is NULL"),
            CallError::NoInit => f.write_str(
                "no generation selected: call tpb_subject_init(\"v2\"…\"v5\") first (it returned \
                 TPB_UNSUPPORTED, or was not called)",
            ),
            CallError::Overflow(n) => write!(f, "n = {n} bundles overflow the address space"),
            CallError::TooLong(n) => write!(f, "a length of {n} bytes is more than any object"),
            CallError::Misaligned(a) => write!(f, "`verdicts` = {a:#x} is not 2-byte aligned"),
            CallError::Request(e) => write!(f, "{e}"),
            CallError::Name(e) => write!(f, "{e}"),
        }
    }
}

impl From<RequestError> for CallError {
    fn from(e: RequestError) -> CallError {
        CallError::Request(e)
    }
}

/// Runs `body` with no unwinding out: `Ok(status)`, or `TPB_ERROR` with a
/// stderr line naming `func` and the reason (or the panic).
fn guarded(func: &str, body: impl FnOnce() -> Result<Status, CallError>) -> c_int {
    let why = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(s)) => return s.code(),
        Ok(Err(e)) => e.to_string(),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("panicked: {msg}")
        }
    };
    let _ = writeln!(std::io::stderr(), "tpb_reference: {func}: {why}");
    Status::Error.code()
}

/// Runs `body`, or `fallback` if it panics (functions without a status).
fn or_fallback<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

fn arch() -> Result<Generation, CallError> {
    generation::selected().ok_or(CallError::NoInit)
}

fn non_null<T>(p: *const T, name: &'static str) -> Result<(), CallError> {
    if p.is_null() {
        Err(CallError::Null(name))
    } else {
        Ok(())
    }
}

/// An export's body: `TPB_ERROR` naming the first null pointer of `ptrs`, or
/// with no generation selected; otherwise `body` with the selected generation
/// bound to `arch`; all under [`guarded`].
macro_rules! with_generation {
    ($func:expr, [$($ptr:ident),+], |$arch:ident| $body:block) => {
        guarded($func, || {
            $(non_null($ptr, stringify!($ptr))?;)+
            let $arch = arch()?;
            $body
        })
    };
}

/// The header and the payload export of one validator shape: each calls
/// `$inner` with its own C name and [`Validator`] (the same contract).
macro_rules! validator_exports {
    (
        $(#[$hdoc:meta])* $header:ident,
        $(#[$pdoc:meta])* $payload:ident,
        $inner:ident($($arg:ident: $ty:ty),+)
    ) => {
        $(#[$hdoc])*
        #[no_mangle]
        pub unsafe extern "C" fn $header($($arg: $ty),+) -> c_int {
            // SAFETY: the same contract.
            unsafe { $inner(stringify!($header), Validator::Header, $($arg),+) }
        }

        $(#[$pdoc])*
        #[no_mangle]
        pub unsafe extern "C" fn $payload($($arg: $ty),+) -> c_int {
            // SAFETY: the same contract.
            unsafe { $inner(stringify!($payload), Validator::Payload, $($arg),+) }
        }
    };
}

fn name_ptr(n: &Name) -> Result<*const c_char, CallError> {
    c_name(n.as_str())
        .map(CStr::as_ptr)
        .map_err(CallError::Name)
}

/// Delivers an answer that is either a value (`accept` writes it; `*refused`
/// becomes null) or a refusal (its name in `*refused`, nothing else written).
///
/// # Safety
/// `refused` is non-null and writable, and `accept` writes only where the
/// caller's contract allows.
unsafe fn answer_or_refusal<T>(
    answer: Result<T, Name>,
    refused: *mut *const c_char,
    accept: impl FnOnce(T),
) -> Result<Status, CallError> {
    let p = match answer {
        Ok(v) => {
            accept(v);
            std::ptr::null()
        }
        Err(why) => name_ptr(&why)?,
    };
    // SAFETY: non-null and writable per the caller's contract.
    unsafe { *refused = p };
    Ok(Status::Ok)
}

/// Copies the 64 bytes at `p`.
///
/// # Safety
/// `p` is non-null and points to 64 readable bytes (the header's
/// `const uint8_t bundle[64]`).
unsafe fn bundle_at(p: *const u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    // SAFETY: the caller's contract; `b` is 64 writable bytes, no overlap.
    unsafe { std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), 64) };
    b
}

/// The `len` bytes at `p` (`len` may be 0; `p` is still required); a `len`
/// no object can have (over `isize::MAX`) is refused.
///
/// # Safety
/// `p` is non-null and points to `len` readable bytes that outlive the call.
unsafe fn bytes_at<'a>(p: *const u8, len: usize) -> Result<&'a [u8], CallError> {
    if isize::try_from(len).is_err() {
        return Err(CallError::TooLong(len));
    }
    // SAFETY: the caller's contract; `len` fits a slice.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Writes `text` to `out` (capacity `cap`) and its length to `*len`: the
/// header's buffer rule (`TPB_BUFFER_TOO_SMALL` with the size needed; a
/// NUL after the text when there is room, for C callers).
///
/// # Safety
/// `out` points to `cap` writable bytes, `len` to a writable `size_t`.
unsafe fn write_text(text: &str, out: *mut c_char, cap: usize, len: *mut usize) -> Status {
    // SAFETY: `len` is writable per the contract.
    unsafe { *len = text.len() };
    if text.len() > cap {
        return Status::BufferTooSmall;
    }
    // SAFETY: `out` has `cap >= text.len()` writable bytes; no overlap with
    // our own string.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), text.len());
        if text.len() < cap {
            *out.add(text.len()) = 0;
        }
    }
    Status::Ok
}

/// `tpb_subject_abi_version()`.
#[no_mangle]
pub extern "C" fn tpb_subject_abi_version() -> u32 {
    // 0 is a version no harness accepts.
    or_fallback(0, || abi::ABI_VERSION)
}

/// `tpb_subject_name()`: `tpb-reference <version> (tpb-core, <spec>)`.
#[no_mangle]
pub extern "C" fn tpb_subject_name() -> *const c_char {
    or_fallback(std::ptr::null(), || {
        let name = format!(
            "tpb-reference {} (tpb-core, {})",
            env!("CARGO_PKG_VERSION"),
            tpb_subjects::SPEC_VERSION
        );
        c_name(&name).map_or(std::ptr::null(), CStr::as_ptr)
    })
}

/// `tpb_subject_capabilities()`.
#[no_mangle]
pub extern "C" fn tpb_subject_capabilities() -> u32 {
    or_fallback(0, abi::capabilities)
}

/// `tpb_subject_lut_tables()` (version 2): every table.
#[no_mangle]
pub extern "C" fn tpb_subject_lut_tables() -> u32 {
    or_fallback(0, abi::lut_tables)
}

/// `tpb_subject_init(arch)`: selects the generation; any `arch` but
/// `"v2"` … `"v5"` is `TPB_UNSUPPORTED` and selects none.
///
/// # Safety
/// `arch` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn tpb_subject_init(arch: *const c_char) -> c_int {
    guarded("tpb_subject_init", || {
        non_null(arch, "arch")?;
        // SAFETY: non-null and NUL-terminated per the contract.
        let s = unsafe { CStr::from_ptr(arch) };
        let selected = match s.to_str() {
            Ok(s) => generation::select(s).is_ok(),
            Err(_) => {
                generation::clear();
                false
            }
        };
        Ok(if selected {
            Status::Ok
        } else {
            Status::Unsupported
        })
    })
}

/// One validator call: the predicate's name in `*failed` (null = valid).
///
/// # Safety
/// As `tpb_validate_header`.
unsafe fn validate_one(
    func: &str,
    v: Validator,
    bundle: *const u8,
    failed: *mut *const c_char,
) -> c_int {
    with_generation!(func, [bundle, failed], |arch| {
        // SAFETY: non-null; 64 readable bytes per the contract.
        let b = unsafe { bundle_at(bundle) };
        let answer = match reference::validate(v, &b, arch) {
            None => std::ptr::null(),
            Some(p) => crate::names::predicate(p)
                .map_err(CallError::Name)?
                .as_ptr(),
        };
        // SAFETY: non-null and writable per the contract.
        unsafe { *failed = answer };
        Ok(Status::Ok)
    })
}

validator_exports! {
    /// `tpb_validate_header(bundle, failed)` (SPEC §3).
    ///
    /// # Safety
    /// `bundle` is null or 64 readable bytes; `failed` null or writable.
    tpb_validate_header,
    /// `tpb_validate_payload(bundle, failed)` (SPEC §4).
    ///
    /// # Safety
    /// As [`tpb_validate_header`].
    tpb_validate_payload,
    validate_one(bundle: *const u8, failed: *mut *const c_char)
}

/// One batch validator call: one `tpb_verdict` id per bundle.
///
/// # Safety
/// As `tpb_validate_header_batch`.
unsafe fn validate_batch(
    func: &str,
    v: Validator,
    bundles: *const u8,
    n: usize,
    verdicts: *mut u16,
) -> c_int {
    with_generation!(func, [bundles, verdicts], |arch| {
        let bytes = n
            .checked_mul(64)
            .filter(|b| isize::try_from(*b).is_ok())
            .ok_or(CallError::Overflow(n))?;
        if verdicts.align_offset(std::mem::align_of::<u16>()) != 0 {
            return Err(CallError::Misaligned(verdicts as usize));
        }
        // SAFETY: non-null; `n * 64` readable bytes and `n` writable u16s
        // (alignment 2, as the caller's `uint16_t *`) per the contract.
        let (input, out) = unsafe {
            (
                bytes_at(bundles, bytes)?,
                std::slice::from_raw_parts_mut(verdicts, n),
            )
        };
        for (b, slot) in input.chunks_exact(64).zip(out.iter_mut()) {
            let mut one = [0u8; 64];
            one.copy_from_slice(b);
            *slot = abi::verdict_id(reference::validate(v, &one, arch));
        }
        Ok(Status::Ok)
    })
}

validator_exports! {
    /// `tpb_validate_header_batch(bundles, n, verdicts)` (version 2).
    ///
    /// # Safety
    /// `bundles` is null or `n * 64` readable bytes; `verdicts` null or `n`
    /// writable, aligned `uint16_t`s.
    tpb_validate_header_batch,
    /// `tpb_validate_payload_batch(bundles, n, verdicts)` (version 2).
    ///
    /// # Safety
    /// As [`tpb_validate_header_batch`].
    tpb_validate_payload_batch,
    validate_batch(bundles: *const u8, n: usize, verdicts: *mut u16)
}

/// `tpb_decode(bundle, out, cap, len)` (SPEC §5.1).
///
/// # Safety
/// `bundle` is null or 64 readable bytes; `out` null or `cap` writable
/// bytes; `len` null or writable.
#[no_mangle]
pub unsafe extern "C" fn tpb_decode(
    bundle: *const u8,
    out: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> c_int {
    with_generation!("tpb_decode", [bundle, out, len], |arch| {
        // SAFETY: non-null; 64 readable bytes per the contract.
        let b = unsafe { bundle_at(bundle) };
        let text = reference::decode_json(&b, arch)?;
        // SAFETY: non-null; `cap` writable bytes and a writable `len`.
        Ok(unsafe { write_text(&text, out, cap, len) })
    })
}

/// `tpb_encode(request, request_len, out, refused)` (SPEC §5.2).
///
/// # Safety
/// `request` is null or `request_len` readable bytes; `out` null or 64
/// writable bytes; `refused` null or writable.
#[no_mangle]
pub unsafe extern "C" fn tpb_encode(
    request: *const c_char,
    request_len: usize,
    out: *mut u8,
    refused: *mut *const c_char,
) -> c_int {
    with_generation!("tpb_encode", [request, out, refused], |arch| {
        // SAFETY: non-null; `request_len` readable bytes per the contract.
        let text = unsafe { bytes_at(request.cast::<u8>(), request_len) }?;
        let answer = reference::encode(text, arch)?;
        // SAFETY: non-null; 64 writable bytes at `out` and a writable
        // `refused` per the contract.
        unsafe {
            answer_or_refusal(answer, refused, |bundle| {
                std::ptr::copy_nonoverlapping(bundle.as_ptr(), out, 64);
            })
        }
    })
}

/// `tpb_lut(table, input, wire, refused)` (SPEC §6); a table name that is
/// not one of SPEC §6's is `TPB_UNSUPPORTED`.
///
/// # Safety
/// `table` is null or a NUL-terminated string; `wire` and `refused` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn tpb_lut(
    table: *const c_char,
    input: u32,
    wire: *mut u32,
    refused: *mut *const c_char,
) -> c_int {
    with_generation!("tpb_lut", [table, wire, refused], |arch| {
        // SAFETY: non-null and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(table) };
        let Some(t) = name.to_str().ok().and_then(abi::lut_table) else {
            return Ok(Status::Unsupported);
        };
        let answer = reference::lut(t, input, arch)?;
        // SAFETY: `wire` and `refused` non-null and writable per the contract.
        unsafe { answer_or_refusal(answer, refused, |w| *wire = u32::from(w)) }
    })
}

/// `tpb_lut_batch(table, inputs, n, wires, refused)` (version 2, SPEC §6):
/// `tpb_lut` on each of the `n` inputs; a table name that is not one of
/// SPEC §6's is `TPB_UNSUPPORTED` for the whole batch.
///
/// # Safety
/// `table` is null or a NUL-terminated string; `inputs` null or `n`
/// readable, aligned `uint32_t`s; `wires` and `refused` null or `n`
/// writable, aligned slots each.
#[no_mangle]
pub unsafe extern "C" fn tpb_lut_batch(
    table: *const c_char,
    inputs: *const u32,
    n: usize,
    wires: *mut u32,
    refused: *mut *const c_char,
) -> c_int {
    with_generation!("tpb_lut_batch", [table, inputs, wires, refused], |arch| {
        // SAFETY: non-null and NUL-terminated per the contract.
        let name = unsafe { CStr::from_ptr(table) };
        let Some(t) = name.to_str().ok().and_then(abi::lut_table) else {
            return Ok(Status::Unsupported);
        };
        if n.checked_mul(8).is_none_or(|b| isize::try_from(b).is_err()) {
            return Err(CallError::Overflow(n));
        }
        for (p, align) in [
            (inputs as usize, std::mem::align_of::<u32>()),
            (wires as usize, std::mem::align_of::<u32>()),
            (refused as usize, std::mem::align_of::<*const c_char>()),
        ] {
            if p % align != 0 {
                return Err(CallError::Misaligned(p));
            }
        }
        // SAFETY: non-null, aligned; `n` readable inputs and `n` writable
        // wires and refusal slots per the contract.
        let (ins, ws, rs) = unsafe {
            (
                std::slice::from_raw_parts(inputs, n),
                std::slice::from_raw_parts_mut(wires, n),
                std::slice::from_raw_parts_mut(refused, n),
            )
        };
        for ((&input, w), r) in ins.iter().zip(ws.iter_mut()).zip(rs.iter_mut()) {
            *r = match reference::lut(t, input, arch)? {
                Ok(wire) => {
                    *w = u32::from(wire);
                    std::ptr::null()
                }
                Err(why) => name_ptr(&why)?,
            };
        }
        Ok(Status::Ok)
    })
}

/// `tpb_validate_stream(bytes, len, error, index)` (version 2, SPEC §5.3).
///
/// # Safety
/// `bytes` is null or `len` readable bytes; `error` and `index` null or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn tpb_validate_stream(
    bytes: *const u8,
    len: usize,
    error: *mut *const c_char,
    index: *mut usize,
) -> c_int {
    with_generation!("tpb_validate_stream", [bytes, error, index], |arch| {
        // SAFETY: non-null; `len` readable bytes per the contract.
        let stream = unsafe { bytes_at(bytes, len) }?;
        let (name, at) = match reference::validate_stream(stream, arch)? {
            None => (std::ptr::null(), 0),
            Some((name, at)) => (name_ptr(&name)?, at),
        };
        // SAFETY: non-null and writable per the contract.
        unsafe {
            *error = name;
            *index = at;
        }
        Ok(Status::Ok)
    })
}

/// `tpb_lower(ir, ir_len, out, cap, len)` (version 2, SPEC §5.4).
///
/// # Safety
/// `ir` is null or `ir_len` readable bytes; `out` null or `cap` writable
/// bytes; `len` null or writable.
#[no_mangle]
pub unsafe extern "C" fn tpb_lower(
    ir: *const c_char,
    ir_len: usize,
    out: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> c_int {
    with_generation!("tpb_lower", [ir, out, len], |arch| {
        // SAFETY: non-null; `ir_len` readable bytes per the contract.
        let doc = unsafe { bytes_at(ir.cast::<u8>(), ir_len) }?;
        let text = reference::lower_json(doc, arch)?;
        // SAFETY: non-null; `cap` writable bytes and a writable `len`.
        Ok(unsafe { write_text(&text, out, cap, len) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_tpb_error_and_never_unwinds_out() {
        let code = guarded("test", || panic!("planted"));
        assert_eq!(code, Status::Error.code());
        assert_eq!(or_fallback(7u32, || panic!("planted")), 7);
        assert_eq!(guarded("test", || Ok(Status::Unsupported)), 1);
        assert_eq!(
            guarded("test", || Err(CallError::Null("bundle"))),
            Status::Error.code()
        );
    }

    #[test]
    fn text_answers_follow_the_headers_buffer_rule() {
        let mut out = [b'x' as c_char; 8];
        let mut len = 0usize;
        // SAFETY: `out` has 8 writable bytes; `len` is writable.
        let s = unsafe { write_text("abcdefghi", out.as_mut_ptr(), 8, &mut len) };
        assert_eq!((s, len), (Status::BufferTooSmall, 9));
        assert!(out.iter().all(|&c| c == b'x' as c_char), "nothing written");
        // SAFETY: as above.
        let s = unsafe { write_text("abc", out.as_mut_ptr(), 8, &mut len) };
        assert_eq!((s, len), (Status::Ok, 3));
        assert_eq!(&out[..5], &[97, 98, 99, 0, b'x' as c_char]);
    }
}
