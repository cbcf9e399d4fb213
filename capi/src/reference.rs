//! The operations of include/tpb_subject.h as safe Rust over the reference:
//! tpb-core, reached through the harness's own core subject where the gate
//! compares through it (decode, encode, LUTs, stream), so this library
//! answers exactly what the gate's `core` answers. JSON shapes come from the
//! harness: decoded fields from `fields_json`, the decode answer object from
//! the protocol's `answer_object`, the IR input from `lower_input` (what
//! `tpbconform lower` reads) and the lowered module from core's
//! `Module::to_json` (what `tpbconform lower --format json` prints).

use std::borrow::Cow;
use std::fmt;
use tpb_core::validate::Predicate;
use tpb_core::Bundle;
use tpb_subjects::external::protocol::{opcode_fields_text, opcode_str, parse_opcode};
use tpb_subjects::fields_json::{decode_error_text, fields_from_json, fields_text};
use tpb_subjects::generation::Generation;
use tpb_subjects::lower_input::{parse_program, parse_program_text, PathError, MAX_INPUT_BYTES};
use tpb_subjects::strict_json::{get, Json};
use tpb_subjects::subjects::registry::reference_pair_for;
use tpb_subjects::subjects::{LutTable, Name, Reference, Reply, Validator};

/// Why a request was not answered (`TPB_ERROR`); each names the bad value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    /// The request text is not UTF-8 (byte offset of the first bad byte).
    NotUtf8(usize),
    /// The request is larger than [`MAX_INPUT_BYTES`] (its length).
    TooLarge(usize),
    /// The request is not JSON (the parser's message: line and column).
    NotJson(String),
    /// The request is JSON but not an object (its type).
    NotAnObject(&'static str),
    /// A key the request must not have.
    UnexpectedKey(String),
    /// A key the request must have.
    MissingKey(&'static str),
    /// `"opcode"` is not `"0xHH"` (the value).
    BadOpcode(String),
    /// `"fields"` is not an object of decode's field values (what is wrong).
    BadFields(String),
    /// The IR document is not `tpbconform lower` input (the JSON path and why).
    BadProgram(PathError),
    /// The IR document names another generation than `tpb_subject_init`.
    OtherGeneration {
        /// The document's `"generation"`.
        document: &'static str,
        /// The selected one.
        selected: &'static str,
    },
    /// The reference itself faulted (never expected; the fault).
    Reference(String),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NotUtf8(at) => write!(f, "not UTF-8 at byte offset {at}"),
            RequestError::TooLarge(n) => {
                write!(f, "{n} bytes; at most {MAX_INPUT_BYTES} are read")
            }
            RequestError::NotJson(e) => write!(f, "not JSON: {e}"),
            RequestError::NotAnObject(t) => write!(f, "expected a JSON object, got {t}"),
            RequestError::UnexpectedKey(k) => write!(f, "unexpected key {k:?}"),
            RequestError::MissingKey(k) => write!(f, "missing key {k:?}"),
            RequestError::BadOpcode(v) => write!(f, "\"opcode\": {v} is not \"0xHH\""),
            RequestError::BadFields(e) => write!(f, "\"fields\": {e}"),
            RequestError::BadProgram(e) => write!(f, "{e}"),
            RequestError::OtherGeneration { document, selected } => write!(
                f,
                "$.generation: {document:?}, but tpb_subject_init selected {selected:?}"
            ),
            RequestError::Reference(e) => write!(f, "the reference faulted: {e}"),
        }
    }
}

/// Core's answer (the gate's `core` subject serving `arch`) to `ask`; a
/// fault of it is the request's error.
pub fn core<T>(
    arch: Generation,
    ask: impl FnOnce(&dyn Reference) -> Reply<T>,
) -> Result<T, RequestError> {
    let (core, _) = reference_pair_for(arch);
    ask(&core).map_err(|f| RequestError::Reference(f.to_string()))
}

/// Core's validator: `None` = valid, else the first failing predicate.
pub fn validate(v: Validator, b: &[u8; 64], arch: Generation) -> Option<Predicate> {
    let b = Bundle(*b);
    let gen = arch;
    let r = match v {
        Validator::Header => tpb_core::validate::validate_header(&b, gen),
        Validator::Payload => tpb_core::validate::validate_payload(&b, gen),
    };
    r.err().map(|e| e.predicate())
}

/// The decode answer object, as text: `{"opcode":"0xD9","fields":{…}}`
/// (fields as `tpbconform decode` prints them) or
/// `{"error":{"field":…,"offset":…}}` (SPEC §5.1).
pub fn decode_json(b: &[u8; 64], arch: Generation) -> Result<String, RequestError> {
    // Written directly: a roundtrip case asks every bundle's decode, and
    // most bundles of a decode_any case fail.
    Ok(match core(arch, |c| c.decode(b))? {
        Ok(d) => format!(
            r#"{{"opcode":"{}","fields":{}}}"#,
            opcode_str(d.opcode),
            fields_text(&d.fields)
        ),
        Err(e) => decode_error_text(
            e.field.as_str(),
            u64::try_from(e.offset).unwrap_or(u64::MAX),
        ),
    })
}

/// Reads a request: UTF-8, bounded, strict JSON (no key twice).
fn json(bytes: &[u8]) -> Result<Json<'_>, RequestError> {
    let text = text(bytes)?;
    tpb_subjects::strict_json::parse(text).map_err(|e| RequestError::NotJson(e.to_string()))
}

/// A request's text: UTF-8, bounded.
fn text(bytes: &[u8]) -> Result<&str, RequestError> {
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(RequestError::TooLarge(bytes.len()));
    }
    std::str::from_utf8(bytes).map_err(|e| RequestError::NotUtf8(e.valid_up_to()))
}

fn object(v: Json<'_>) -> Result<Vec<(Cow<'_, str>, Json<'_>)>, RequestError> {
    match v {
        Json::Object(m) => Ok(m),
        Json::Null => Err(RequestError::NotAnObject("null")),
        Json::Bool(_) => Err(RequestError::NotAnObject("a boolean")),
        Json::U64(_) | Json::I64(_) | Json::F64(_) => Err(RequestError::NotAnObject("a number")),
        Json::Str(_) => Err(RequestError::NotAnObject("a string")),
        Json::Array(_) => Err(RequestError::NotAnObject("an array")),
    }
}

/// Core's encoder on the request `{"opcode":"0xD9","fields":{…}}`: the
/// bundle, or the name of what it refuses (SPEC §5.2).
pub fn encode(request: &[u8], arch: Generation) -> Result<Result<[u8; 64], Name>, RequestError> {
    // Read straight from the text; anything unusual through the tree,
    // which names the error.
    if let Some((opcode, fields)) = opcode_fields_text(text(request)?) {
        return core(arch, |c| c.encode(opcode, &fields));
    }
    let m = object(json(request)?)?;
    if let Some((k, _)) = m.iter().find(|(k, _)| k != "opcode" && k != "fields") {
        return Err(RequestError::UnexpectedKey(k.to_string()));
    }
    let opcode = match get(&m, "opcode") {
        None => return Err(RequestError::MissingKey("opcode")),
        Some(Json::Str(s)) => {
            parse_opcode(s).ok_or_else(|| RequestError::BadOpcode(format!("{s:?}")))?
        }
        Some(other) => return Err(RequestError::BadOpcode(other.to_string())),
    };
    let fields = match get(&m, "fields") {
        None => return Err(RequestError::MissingKey("fields")),
        Some(Json::Object(f)) => fields_from_json(f).map_err(RequestError::BadFields)?,
        Some(other) => return Err(RequestError::BadFields(format!("{other} is not an object"))),
    };
    core(arch, |c| c.encode(opcode, &fields))
}

/// Core's lookup table `table` on `input`: the wire value, or the SPEC §6
/// error class.
pub fn lut(
    table: LutTable,
    input: u32,
    arch: Generation,
) -> Result<Result<u8, Name>, RequestError> {
    core(arch, |c| c.lut(table, input))
}

/// Core's custom-op stream parser (SPEC §5.3): `None` = valid, else the
/// first stream error and the bundle index it is reported at (the stream
/// length in bytes for `trailing_bytes`).
pub fn validate_stream(
    bytes: &[u8],
    arch: Generation,
) -> Result<Option<(Name, usize)>, RequestError> {
    let parsed = core(arch, |c| c.parse_stream(bytes))?;
    Ok(parsed.err().map(|e| (e.name, e.index)))
}

/// Lowers one `tpbconform lower` document (SPEC §5.4) under the selected
/// generation, which the document must name: the module as core's
/// `Module::to_json` writes it (what `lower --format json` prints), or
/// `{"error":"<class>","instruction":i}` for the first instruction core
/// rejects (docs/subject-protocol.md, `lower`).
pub fn lower_json(ir: &[u8], arch: Generation) -> Result<String, RequestError> {
    use tpb_core::lower::{lower, Module};
    // Read straight from the text; anything unusual through the tree,
    // which names the error.
    let (gen, insns) = match parse_program_text(text(ir)?) {
        Some(p) => p,
        None => parse_program(&json(ir)?).map_err(RequestError::BadProgram)?,
    };
    if gen != arch {
        return Err(RequestError::OtherGeneration {
            document: gen.name(),
            selected: arch.name(),
        });
    }
    let mut module = Module::new(gen);
    for (i, insn) in insns.iter().enumerate() {
        if let Err(e) = lower(&mut module, insn) {
            // A SPEC §5.4 error name: no escapes.
            return Ok(format!(r#"{{"error":"{}","instruction":{i}}}"#, e.name()));
        }
    }
    Ok(module.to_json())
}
