//! A subject library with the C ABI of `include/tpb_subject.h` (versions 1
//! and 2): every call into it is here, run in the worker process
//! ([`super::shm_worker`]), never in the gate, so a library that crashes or
//! hangs takes down only its worker.
#![allow(unsafe_code)]

use super::protocol::{
    answer_of, decode_answer_text, get_request, in_place, Answer, InPlace, Request,
};
use super::supervisor::clip;
use super::verdict::verdict_of;
use crate::strict_json::Json;
use crate::subjects::{Capabilities, Capability, LutTable, Validator};
use libloading::{Library, Symbol};
use std::ffi::{c_char, c_int, CStr, CString};

/// `TPB_SUBJECT_ABI_VERSION`.
pub const ABI_VERSION: u32 = 2;
pub const ABI_VERSIONS: [u32; 2] = [1, 2];

/// `tpb_status` codes.
const TPB_OK: c_int = 0;
const TPB_UNSUPPORTED: c_int = 1;
const TPB_BUFFER_TOO_SMALL: c_int = 2;

/// `TPB_CAP_*` bit of the protocol op carrying `op` (tpb_subject.h): the
/// op's position in protocol order; 0: none carries it.
pub fn cap_bit(op: Capability) -> u32 {
    let ops = Capabilities::all().ops();
    let at = ops.iter().position(|o| Some(*o) == op.op());
    at.map_or(0, |i| 1 << i)
}

/// The first decode / lower buffers (tpb_subject.h), and the largest
/// answer accepted after a retry.
const DECODE_CAP: usize = 4096;
const LOWER_CAP: usize = 1 << 16;
const DECODE_MAX: usize = 1 << 20;

type AbiVersionFn = unsafe extern "C" fn() -> u32;
type NameFn = unsafe extern "C" fn() -> *const c_char;
type CapsFn = unsafe extern "C" fn() -> u32;
type InitFn = unsafe extern "C" fn(*const c_char) -> c_int;
type ValidateFn = unsafe extern "C" fn(*const u8, *mut *const c_char) -> c_int;
type DecodeFn = unsafe extern "C" fn(*const u8, *mut c_char, usize, *mut usize) -> c_int;
type EncodeFn = unsafe extern "C" fn(*const c_char, usize, *mut u8, *mut *const c_char) -> c_int;
type LutFn = unsafe extern "C" fn(*const c_char, u32, *mut u32, *mut *const c_char) -> c_int;
type LutTablesFn = unsafe extern "C" fn() -> u32;
type StreamFn = unsafe extern "C" fn(*const u8, usize, *mut *const c_char, *mut usize) -> c_int;
type LowerFn = unsafe extern "C" fn(*const c_char, usize, *mut c_char, usize, *mut usize) -> c_int;
type BatchFn = unsafe extern "C" fn(*const u8, usize, *mut u16) -> c_int;
type LutBatchFn =
    unsafe extern "C" fn(*const c_char, *const u32, usize, *mut u32, *mut *const c_char) -> c_int;

/// A validator answer: a `tpb_verdict` id, or a name outside that enum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerdictCode {
    Id(u16),
    Named(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status<T> {
    Ok(T),
    Unsupported,
    /// Any other code, or an answer that breaks the ABI, with what was wrong.
    Error(String),
}

/// An entry a batch validator left unwritten: no `tpb_verdict` id is this
/// large (include/tpb_subject.h).
pub const UNWRITTEN_VERDICT: u16 = u16::MAX;

/// The gate's marker of an entry not answered (`shm::CODE_UNSET`); a batch
/// validator writing it is answered as [`UNWRITTEN_VERDICT`].
pub const GATE_UNSET: u16 = 0xFFFB;

pub const UNWRITTEN_TEXT: &str = "the batch call left this entry unwritten (no tpb_verdict id)";

pub struct SubjectLib {
    name: String,
    caps: u32,
    /// Indexed by `payload`, as `batches`.
    validators: [Option<ValidateFn>; 2],
    decode: Option<DecodeFn>,
    encode: Option<EncodeFn>,
    lut: Option<LutFn>,
    /// `tpb_subject_lut_tables()`, or every table without it.
    tables: Vec<LutTable>,
    table_names: Vec<CString>,
    validate_stream: Option<StreamFn>,
    lower: Option<LowerFn>,
    batches: [Option<BatchFn>; 2],
    lut_batch: Option<LutBatchFn>,
    init: InitFn,
    // Keeps the function pointers above valid; dropped last.
    _lib: Library,
}

thread_local! {
    /// [`text_out`]'s buffer, kept (a fresh one costs page faults), and
    /// how far the last call may have written into it.
    static OUT: std::cell::RefCell<(Vec<u8>, usize)> = const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// Bytes past an answer a call may have written (its NUL and a little more).
const OVERSHOOT: usize = 64;

/// Calls `call(buf, cap, &mut len)` of an operation writing JSON text into a
/// caller buffer: with `first` bytes, once more with the size asked for on
/// `TPB_BUFFER_TOO_SMALL` (at most `max`); reads the text in place. Each
/// call gets a zeroed buffer (only what the last call may have written is
/// zeroed again).
fn text_out<T>(
    what: &str,
    first: usize,
    max: usize,
    mut call: impl FnMut(*mut c_char, usize, &mut usize) -> c_int,
    read: impl FnOnce(&str) -> T,
) -> Status<T> {
    OUT.with_borrow_mut(|(buf, dirty)| {
        let mut cap = first;
        for _ in 0..2 {
            let clean = (*dirty).min(buf.len());
            buf[..clean].fill(0);
            if buf.len() < cap {
                buf.resize(cap, 0);
            }
            let mut len = 0usize;
            let rc = call(buf.as_mut_ptr().cast(), cap, &mut len);
            *dirty = if rc == TPB_OK && len <= cap {
                len.saturating_add(OVERSHOOT).min(cap)
            } else {
                cap
            };
            match rc {
                TPB_OK if len <= cap => {
                    return match std::str::from_utf8(&buf[..len]) {
                        Ok(s) => Status::Ok(read(s)),
                        Err(_) => Status::Error(format!("{what} answer is not UTF-8")),
                    };
                }
                TPB_OK => return Status::Error(format!("{what} length {len} > capacity {cap}")),
                TPB_BUFFER_TOO_SMALL if len > cap && len <= max => cap = len,
                TPB_BUFFER_TOO_SMALL => {
                    return Status::Error(format!("{what} needs {len} bytes (capacity {cap})"))
                }
                TPB_UNSUPPORTED => return Status::Unsupported,
                n => return Status::Error(format!("{what} returned {n}")),
            }
        }
        Status::Error(format!("{what} buffer still too small after a retry"))
    })
}

pub const NOT_UTF8_REFUSAL: &str = "the refusal is not UTF-8";

/// # Safety
/// `p` must be null or point to a NUL-terminated string that stays valid for
/// the call (tpb_subject.h requires strings to live until unload).
unsafe fn text(p: *const c_char, what: &str) -> Result<Option<String>, String> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, NUL-terminated and live per the caller's contract.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map(|s| Some(s.to_string()))
        .map_err(|_| format!("{what} is not UTF-8"))
}

fn sym<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    // SAFETY: `T` is the tpb_subject.h signature of `name`; a library
    // exporting that name with another signature breaks the ABI.
    let s: Result<Symbol<T>, _> = unsafe { lib.get(name.as_bytes()) };
    s.map(|s| *s)
        .map_err(|e| format!("missing symbol `{name}`: {e}"))
}

/// A library's operation symbols: a declared operation's `tpb_<op>` must
/// be there; version 2: its `tpb_<op>_batch` is optional (tpb_subject.h).
struct Ops<'a> {
    lib: &'a Library,
    caps: u32,
    version: u32,
}

impl Ops<'_> {
    fn declared<T: Copy>(&self, op: Capability) -> Result<Option<T>, String> {
        let name = format!("tpb_{}", op.op().unwrap_or_default());
        (self.caps & cap_bit(op) != 0)
            .then(|| sym(self.lib, &name))
            .transpose()
    }

    fn batch<T: Copy>(&self, op: Capability) -> Option<T> {
        let name = format!("tpb_{}_batch", op.op().unwrap_or_default());
        let v2 = self.version >= 2 && self.caps & cap_bit(op) != 0;
        v2.then(|| sym(self.lib, &name).ok()).flatten()
    }
}

impl SubjectLib {
    /// Loads `path`, checking the required symbols, the ABI version and a
    /// symbol for every declared capability.
    pub fn load(path: &str) -> Result<SubjectLib, String> {
        // SAFETY: loading runs the library's initialisers; that is the point
        // of a `lib:` subject, and it happens in the worker process only.
        let lib = unsafe { Library::new(path) }.map_err(|e| format!("cannot load {path}: {e}"))?;
        let abi: AbiVersionFn = sym(&lib, "tpb_subject_abi_version")?;
        let name_fn: NameFn = sym(&lib, "tpb_subject_name")?;
        let caps_fn: CapsFn = sym(&lib, "tpb_subject_capabilities")?;
        let init: InitFn = sym(&lib, "tpb_subject_init")?;
        // SAFETY: required ABI functions without arguments.
        let v = unsafe { abi() };
        if !ABI_VERSIONS.contains(&v) {
            return Err(format!(
                "tpb_subject_abi_version() = {v}; this harness speaks versions 1 and {ABI_VERSION}"
            ));
        }
        // SAFETY: as above; the string lives until unload (ABI contract).
        let name = unsafe { text(name_fn(), "tpb_subject_name()") }?
            .filter(|s| !s.trim().is_empty())
            .ok_or("tpb_subject_name() is null or empty")?;
        // SAFETY: as above.
        let caps = unsafe { caps_fn() };
        let known = Capability::ALL.iter().fold(0, |m, &o| m | cap_bit(o));
        if caps & !known != 0 {
            return Err(format!(
                "tpb_subject_capabilities() = {caps:#x} sets undefined bits {:#x}",
                caps & !known
            ));
        }
        let ops = Ops {
            lib: &lib,
            caps,
            version: v,
        };
        let validate_header = ops.declared(Capability::ValidateHeader)?;
        let validate_payload = ops.declared(Capability::ValidatePayload)?;
        let decode = ops.declared(Capability::Decode)?;
        let encode = ops.declared(Capability::Encode)?;
        let lut: Option<LutFn> = ops.declared(Capability::LUT_OP)?;
        let tables = if lut.is_none() {
            Vec::new()
        } else if let Ok(f) = sym::<LutTablesFn>(&lib, "tpb_subject_lut_tables") {
            // SAFETY: an optional ABI function without arguments.
            let bits = unsafe { f() };
            let known = LutTable::ALL.iter().fold(0, |m, t| m | t.abi_bit());
            if bits & !known != 0 {
                return Err(format!(
                    "tpb_subject_lut_tables() = {bits:#x} sets undefined bits {:#x}",
                    bits & !known
                ));
            }
            LutTable::ALL
                .into_iter()
                .filter(|t| bits & t.abi_bit() != 0)
                .collect()
        } else {
            LutTable::ALL.to_vec()
        };
        let validate_stream = ops.declared(Capability::ValidateStream)?;
        let lower = ops.declared(Capability::Lower)?;
        let batches = [
            ops.batch(Capability::ValidateHeader),
            ops.batch(Capability::ValidatePayload),
        ];
        let lut_batch = ops.batch(Capability::LUT_OP);
        Ok(SubjectLib {
            name,
            caps,
            validators: [validate_header, validate_payload],
            decode,
            encode,
            lut,
            table_names: tables
                .iter()
                .map(|t| CString::new(t.name()).unwrap_or_default())
                .collect(),
            tables,
            validate_stream,
            lower,
            batches,
            lut_batch,
            init,
            _lib: lib,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn ops(&self) -> Capabilities {
        Capability::ALL
            .into_iter()
            .filter(|&o| self.caps & cap_bit(o) != 0)
            .collect()
    }

    pub fn lut_tables(&self) -> &[LutTable] {
        &self.tables
    }

    pub fn init(&self, arch: &str) -> Status<()> {
        let Ok(c) = CString::new(arch) else {
            return Status::Error("arch holds a NUL byte".into());
        };
        // SAFETY: `c` is a valid NUL-terminated string for the call.
        let rc = unsafe { (self.init)(c.as_ptr()) };
        returned(rc, "tpb_subject_init returned", || Status::Ok(()))
    }

    pub fn has_batch(&self, payload: bool) -> bool {
        self.batches[usize::from(payload)].is_some()
    }

    /// A batch validator on `bundles` (64 bytes each), one id per bundle
    /// into `out`; an entry left unwritten reads [`UNWRITTEN_VERDICT`].
    pub fn validate_batch(&self, payload: bool, bundles: &[u8], out: &mut [u16]) -> Status<()> {
        let Some(f) = self.batches[usize::from(payload)] else {
            return Status::Unsupported;
        };
        let n = (bundles.len() / 64).min(out.len());
        out[..n].fill(UNWRITTEN_VERDICT);
        // SAFETY: `bundles` holds n × 64 readable bytes and `out` n writable
        // u16s, as the ABI requires.
        let rc = unsafe { f(bundles.as_ptr(), n, out.as_mut_ptr()) };
        returned(rc, "batch validator returned status", || {
            // The library's wrong id, kept apart from the gate's marker.
            for c in &mut out[..n] {
                if *c == GATE_UNSET {
                    *c = UNWRITTEN_VERDICT;
                }
            }
            Status::Ok(())
        })
    }

    /// One validator call (a known name: its id, no allocation).
    pub fn validate_code(&self, payload: bool, b: &[u8]) -> Status<VerdictCode> {
        let Some(f) = self.validators[usize::from(payload)] else {
            return Status::Unsupported;
        };
        if b.len() < 64 {
            return Status::Error("bundle shorter than 64 bytes".into());
        }
        let mut failed: *const c_char = std::ptr::null();
        // SAFETY: `b` has 64 readable bytes; `failed` is a valid out-pointer.
        let rc = unsafe { f(b.as_ptr(), &mut failed) };
        returned(rc, "validator returned status", || {
            if failed.is_null() {
                return Status::Ok(VerdictCode::Id(super::verdict::VALID));
            }
            // SAFETY: the ABI requires a live NUL-terminated string.
            let c = unsafe { CStr::from_ptr(failed) }.to_bytes();
            match super::verdict::id_of_name(c) {
                Some(id) => Status::Ok(VerdictCode::Id(id)),
                None if c.is_empty() => Status::Error("empty predicate name".into()),
                None => match std::str::from_utf8(c) {
                    Ok(s) => Status::Ok(VerdictCode::Named(s.to_string())),
                    Err(_) => Status::Error("the failed predicate is not UTF-8".into()),
                },
            }
        })
    }

    pub fn decode<T>(&self, b: &[u8; 64], read: impl FnOnce(&str) -> T) -> Status<T> {
        let Some(f) = self.decode else {
            return Status::Unsupported;
        };
        let call = |buf, cap, len: &mut usize| {
            // SAFETY: `b` is 64 bytes; `buf` has `cap` writable bytes; `len`
            // is a valid out-pointer.
            unsafe { f(b.as_ptr(), buf, cap, len) }
        };
        text_out("tpb_decode", DECODE_CAP, DECODE_MAX, call, read)
    }

    pub fn validate_stream(&self, bytes: &[u8]) -> Status<Option<(String, u64)>> {
        let Some(f) = self.validate_stream else {
            return Status::Unsupported;
        };
        let mut error: *const c_char = std::ptr::null();
        let mut index = 0usize;
        // SAFETY: `bytes` is `len` readable bytes; the out-pointers are valid.
        let rc = unsafe { f(bytes.as_ptr(), bytes.len(), &mut error, &mut index) };
        // SAFETY: the ABI requires a null or a live NUL-terminated string.
        returned(rc, "tpb_validate_stream returned", || {
            match unsafe { text(error, "the stream error") } {
                Ok(None) => Status::Ok(None),
                Ok(Some(e)) if e.is_empty() => Status::Error("empty stream error name".into()),
                Ok(Some(e)) => Status::Ok(Some((e, index as u64))),
                Err(e) => Status::Error(e),
            }
        })
    }

    pub fn lower<T>(&self, ir: &str, read: impl FnOnce(&str) -> T) -> Status<T> {
        let Some(f) = self.lower else {
            return Status::Unsupported;
        };
        let call = |buf, cap, len: &mut usize| {
            // SAFETY: `ir` is `ir.len()` readable bytes; `buf` has `cap`
            // writable bytes; `len` is a valid out-pointer.
            unsafe { f(ir.as_ptr().cast(), ir.len(), buf, cap, len) }
        };
        text_out("tpb_lower", LOWER_CAP, DECODE_MAX, call, read)
    }

    pub fn encode(&self, request: &str) -> Status<Result<[u8; 64], String>> {
        let Some(f) = self.encode else {
            return Status::Unsupported;
        };
        let mut out = [0u8; 64];
        let mut refused: *const c_char = std::ptr::null();
        // SAFETY: `request` is `len` readable bytes; `out` 64 writable bytes;
        // `refused` a valid out-pointer.
        let rc = unsafe {
            f(
                request.as_ptr().cast(),
                request.len(),
                out.as_mut_ptr(),
                &mut refused,
            )
        };
        // SAFETY: `refused` was written by the call (the ABI: null or a
        // live NUL-terminated string).
        returned(rc, "tpb_encode returned", || {
            match unsafe { text(refused, "the refusal") } {
                Ok(None) => Status::Ok(Ok(out)),
                Ok(Some(r)) => Status::Ok(Err(r)),
                Err(e) => Status::Error(e),
            }
        })
    }

    /// The name `tpb_lut` gets for `table`, or the status of an undeclared one.
    fn table_arg<T>(&self, table: LutTable) -> Result<&CString, Status<T>> {
        let k = self
            .tables
            .iter()
            .position(|&t| t == table)
            .ok_or(Status::Unsupported)?;
        self.table_names
            .get(k)
            .filter(|c| !c.is_empty())
            .ok_or_else(|| Status::Error("table name holds a NUL byte".into()))
    }

    pub fn has_lut_batch(&self) -> bool {
        self.lut_batch.is_some()
    }

    /// `tpb_lut_batch` over the shortest of the slices; on `TPB_OK`,
    /// `each(k, answer)` in order, a refusal as what `why` made of its text
    /// (once per pointer, before the next library call).
    pub fn lut_batch<R: Copy>(
        &self,
        table: LutTable,
        inputs: &[u32],
        (wires, refused): (&mut [u32], &mut [*const c_char]),
        mut why: impl FnMut(&CStr) -> R,
        mut each: impl FnMut(usize, Result<u32, R>),
    ) -> Status<()> {
        let Some(f) = self.lut_batch else {
            return Status::Unsupported;
        };
        let t = match self.table_arg(table) {
            Ok(t) => t,
            Err(s) => return s,
        };
        let n = inputs.len().min(wires.len()).min(refused.len());
        // Unwritten: no refusal, wire u32::MAX (not a byte: a finding).
        refused[..n].fill(std::ptr::null());
        wires[..n].fill(u32::MAX);
        // SAFETY: `t` is NUL-terminated; `inputs` holds n readable u32s,
        // `wires` and `refused` n writable slots each, as the ABI requires.
        let rc = unsafe {
            f(
                t.as_ptr(),
                inputs.as_ptr(),
                n,
                wires.as_mut_ptr(),
                refused.as_mut_ptr(),
            )
        };
        returned(rc, "tpb_lut_batch returned", || {
            let mut last: Option<(*const c_char, R)> = None;
            for (k, (&w, &p)) in wires[..n].iter().zip(&refused[..n]).enumerate() {
                if p.is_null() {
                    each(k, Ok(w));
                    continue;
                }
                let r = match last {
                    Some((q, r)) if q == p => r,
                    // SAFETY: the ABI: null or a live NUL-terminated
                    // string; read before the next library call.
                    _ => why(unsafe { CStr::from_ptr(p) }),
                };
                last = Some((p, r));
                each(k, Err(r));
            }
            Status::Ok(())
        })
    }

    /// `tpb_lut`: a refusal as what `refused` made of its live text; an
    /// `Err` of `refused` is the call's error.
    #[inline]
    pub fn lut_with<R>(
        &self,
        table: LutTable,
        input: u32,
        refused: impl FnOnce(&CStr) -> Result<R, String>,
    ) -> Status<Result<u32, R>> {
        let Some(f) = self.lut else {
            return Status::Unsupported;
        };
        let t = match self.table_arg(table) {
            Ok(t) => t,
            Err(s) => return s,
        };
        let mut wire = 0u32;
        let mut why: *const c_char = std::ptr::null();
        // SAFETY: `t` is NUL-terminated; the out-pointers are valid.
        let rc = unsafe { f(t.as_ptr(), input, &mut wire, &mut why) };
        returned(rc, "tpb_lut returned", || {
            if why.is_null() {
                return Status::Ok(Ok(wire));
            }
            // SAFETY: the ABI requires a null or a live NUL-terminated
            // string; it is read before the next library call.
            match refused(unsafe { CStr::from_ptr(why) }) {
                Ok(r) => Status::Ok(Err(r)),
                Err(e) => Status::Error(e),
            }
        })
    }
}

/// A call's status code: `ok()` on `TPB_OK`, else unsupported or an error
/// (`what`: how it names the call).
#[inline]
fn returned<T>(rc: c_int, what: &str, ok: impl FnOnce() -> Status<T>) -> Status<T> {
    match rc {
        TPB_OK => ok(),
        TPB_UNSUPPORTED => Status::Unsupported,
        n => Status::Error(format!("{what} {n}")),
    }
}

/// A library call's status as an answer.
fn status<T>(s: Status<T>, ok: impl FnOnce(T) -> Result<Answer, String>) -> Result<Answer, String> {
    match s {
        Status::Ok(v) => ok(v),
        Status::Unsupported => Ok(Answer::Unsupported),
        Status::Error(e) => Err(e),
    }
}

/// The JSON answer object `what` wrote, read once, strictly.
fn object(text: &str, op: Capability, what: &str) -> Result<Answer, String> {
    if op == Capability::Decode {
        if let Some(a) = decode_answer_text(text) {
            return Ok(a);
        }
    }
    match crate::strict_json::parse(text) {
        Ok(Json::Object(m)) => {
            answer_of(&m, op).map_err(|e| format!("{e}; {what} wrote: {}", clip(text)))
        }
        _ => Err(format!("{what} wrote no JSON object: {}", clip(text))),
    }
}

impl SubjectLib {
    /// One request record through the library, as its answer (`Err`: the
    /// library's error, a protocol finding on the input, tpb_subject.h).
    pub fn answer_record(&self, rec: &[u8]) -> Result<Answer, String> {
        let request = in_place(rec).and_then(|p| match p {
            Some(InPlace::Stream(s)) => Ok(self.stream_answer(s)),
            Some(InPlace::Lower(ir)) => Ok(self.lower_answer(ir)),
            None => get_request(rec).map(|r| self.answer(&r)),
        });
        request.unwrap_or_else(|e| Err(format!("bad request record: {e}")))
    }

    fn stream_answer(&self, s: &[u8]) -> Result<Answer, String> {
        status(self.validate_stream(s), |v| Ok(Answer::Stream(v)))
    }

    fn lower_answer(&self, ir: &str) -> Result<Answer, String> {
        let answer = self.lower(ir, |t| object(t, Capability::Lower, "tpb_lower"));
        status(answer, |a| a)
    }

    fn answer(&self, r: &Request) -> Result<Answer, String> {
        match r {
            Request::Validate(v, b) => {
                let payload = *v == Validator::Payload;
                status(self.validate_code(payload, b), |v| {
                    Ok(Answer::Verdict(match v {
                        VerdictCode::Id(id) => verdict_of(id).map(|p| p.name().to_string()),
                        VerdictCode::Named(s) => Some(s),
                    }))
                })
            }
            Request::Decode(b) => {
                let answer = self.decode(b, |t| object(t, Capability::Decode, "tpb_decode"));
                status(answer, |a| a)
            }
            Request::Encode { .. } => status(self.encode(&r.input_text()), |v| {
                Ok(v.map_or_else(Answer::Refused, Answer::Encoded))
            }),
            Request::Lut { table, input } => {
                let refused = |why: &CStr| {
                    why.to_str()
                        .map(str::to_string)
                        .map_err(|_| NOT_UTF8_REFUSAL.into())
                };
                status(self.lut_with(*table, *input, refused), |v| {
                    Ok(v.map_or_else(Answer::Refused, |w| Answer::Wire(u64::from(w))))
                })
            }
            Request::ValidateStream(bytes) => self.stream_answer(bytes),
            Request::Lower(ir) => self.lower_answer(&ir.text),
        }
    }
}
