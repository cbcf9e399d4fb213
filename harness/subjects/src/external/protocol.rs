//! The operations of `tpb-subject/1` (docs/subject-protocol.md), each whole
//! here: request and answer as JSON lines (read strictly: a missing, extra
//! or mistyped key, or the wrong id, is an error naming it), as a `lib:`
//! worker's binary records, and typed for the judge ([`request_of`], [`said`]).

use super::lower_json::{exact_keys, LOWERED_KEYS};
use super::record::{bytes, put_fields, put_module, u64_, Reader};
use super::verdict::foreign;
pub use crate::fields_json::parse_bundle_hex;
use crate::fields_json::{fields_from_json, fields_from_text};
use crate::generation::Generation;
use crate::layout::mnemonic;
use crate::strict_json::{get, Json, Object, Scan};
use crate::subjects::{
    Capabilities, Capability, DecodeFail, Decoded, Fault, FieldName, IrInstruction, LoweredModule,
    LutTable, ModuleAnswer, Question, Reply, Said, StreamFail, Validator,
};
use serde_json::json;
use std::borrow::Cow;
use std::sync::Arc;

/// `"protocol":1`.
pub const PROTOCOL: u64 = 1;
/// Requests in flight (sent, not yet answered) at most.
pub const MAX_IN_FLIGHT: usize = 256;
/// The longest answer line accepted, in bytes; longer is a protocol finding.
pub const MAX_LINE: usize = 1 << 20;

/// The longest stream a `validate_stream` request carries: the largest
/// corpus file the gate reads, so every stream case can be sent.
pub const MAX_STREAM: usize = 1 << 20;

/// One request after the hello (the harness adds the `"id"`); each line's
/// shape is in docs/subject-protocol.md.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    Validate(Validator, [u8; 64]),
    Decode([u8; 64]),
    /// The fields are sent exactly as `tpbconform decode` prints them.
    Encode {
        opcode: u8,
        fields: Vec<(FieldName, crate::subjects::Value)>,
    },
    Lut {
        table: LutTable,
        input: u32,
    },
    /// Shared with the batch that holds it (not copied to be asked).
    ValidateStream(Arc<Vec<u8>>),
    Lower(IrDocument),
}

/// A `lower` request's JSON text, and the batch's module it was written
/// from (so [`asks`] finds it by address). Requests compare by text.
#[derive(Clone, Debug)]
pub struct IrDocument {
    pub text: String,
    pub module: Option<Arc<Vec<IrInstruction>>>,
}

impl PartialEq for IrDocument {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl From<String> for IrDocument {
    fn from(text: String) -> IrDocument {
        IrDocument { text, module: None }
    }
}

impl Request {
    /// The operation (a LUT: its table's), the unit of give-up.
    pub fn capability(&self) -> Capability {
        match self {
            Request::Validate(v, _) => Capability::of_validator(*v),
            Request::Decode(_) => Capability::Decode,
            Request::Encode { .. } => Capability::Encode,
            Request::Lut { table, .. } => Capability::Lut(*table),
            Request::ValidateStream(_) => Capability::ValidateStream,
            Request::Lower(_) => Capability::Lower,
        }
    }

    pub fn to_line(&self, id: u64) -> String {
        let op = self.capability().op().unwrap_or_default();
        match self {
            Request::Encode { .. } => {
                format!(r#"{{"id":{id},"op":"{op}",{}"#, &self.input_text()[1..])
            }
            Request::Lut { table, input } => format!(
                r#"{{"id":{id},"op":"{op}","table":"{}","input":{input}}}"#,
                table.name()
            ),
            Request::Lower(ir) => format!(r#"{{"id":{id},"op":"{op}","ir":{}}}"#, ir.text),
            _ => format!(r#"{{"id":{id},"op":"{op}","hex":"{}"}}"#, self.input_text()),
        }
    }

    /// The input as a report shows it: the bundle's hex, the encode
    /// request's JSON, or `table input`.
    pub fn input_text(&self) -> String {
        match self {
            Request::Validate(_, b) | Request::Decode(b) => crate::subjects::hex(b),
            Request::Encode { opcode, fields } => format!(
                r#"{{"opcode":"{}","fields":{}}}"#,
                opcode_str(*opcode),
                crate::fields_json::fields_text(fields)
            ),
            Request::Lut { table, input } => format!("{} {input}", table.name()),
            Request::ValidateStream(bytes) => crate::subjects::hex(bytes),
            Request::Lower(ir) => ir.text.clone(),
        }
    }
}

/// A typed answer (docs/subject-protocol.md has each line).
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// `None`: valid; else the first failed predicate.
    Verdict(Option<String>),
    /// Fields in the subject's order ([`crate::fields_json`]).
    Decoded {
        opcode: u8,
        fields: Vec<(FieldName, crate::subjects::Value)>,
    },
    /// SPEC §5.1 field and byte offset.
    DecodeError {
        field: String,
        offset: u64,
    },
    Encoded([u8; 64]),
    /// An encode or LUT refusal.
    Refused(String),
    Wire(u64),
    /// `None`: valid; else the SPEC §5.3 stream error and its index.
    Stream(Option<(String, u64)>),
    /// The instruction count is checked against the request by the asker.
    Lowered {
        generation: String,
        module: LoweredModule,
    },
    /// SPEC §5.4 error class of the first rejected instruction, its index.
    LowerRejected {
        error: String,
        instruction: u64,
    },
    Unsupported,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hello {
    pub protocol: u64,
    pub name: String,
    /// The capabilities the ops carry (`lut`: every table).
    pub ops: Capabilities,
    /// Deduplicated, in [`LutTable::ALL`] order; absent: every table.
    pub tables: Option<Vec<LutTable>>,
    /// Framings also spoken on a second instance ([`super::batch_framing`]).
    pub framings: Vec<String>,
}

impl Hello {
    /// The tables the subject implements (none without the `lut` op).
    pub fn lut_tables(&self) -> Vec<LutTable> {
        if !self.ops.covers(Capabilities::LUTS) {
            return Vec::new();
        }
        self.tables
            .clone()
            .unwrap_or_else(|| LutTable::ALL.to_vec())
    }
}

/// The hello answer line: `tables` only when given.
impl std::fmt::Display for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ops = self.ops.ops();
        let mut v = json!({"protocol": self.protocol, "name": self.name, "ops": ops});
        if let Some(t) = &self.tables {
            v["tables"] = json!(t.iter().map(|t| t.name()).collect::<Vec<_>>());
        }
        if !self.framings.is_empty() {
            v["framings"] = json!(self.framings);
        }
        write!(f, "{v}")
    }
}

/// `0xHH`, as `tpbconform decode` prints opcodes.
pub fn opcode_str(op: u8) -> String {
    format!("0x{op:02X}")
}

/// Parses `0xHH` (two hex digits, either case).
pub fn parse_opcode(s: &str) -> Option<u8> {
    let h = s.strip_prefix("0x")?;
    if h.len() != 2 || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(h, 16).ok()
}

pub fn hello_line(arch: &str) -> String {
    format!(r#"{{"op":"hello","protocol":{PROTOCOL},"arch":"{arch}"}}"#)
}

fn object(line: &str) -> Result<Entries<'_>, String> {
    match crate::strict_json::parse(line) {
        Ok(Json::Object(m)) => Ok(m),
        Ok(_) => Err("not a JSON object".into()),
        Err(e) => Err(format!("not JSON ({e})")),
    }
}

type Entries<'a> = Vec<(Cow<'a, str>, Json<'a>)>;

fn string<'a>(m: &'a Object<'_>, k: &str) -> Result<&'a str, String> {
    get(m, k)
        .and_then(Json::as_str)
        .ok_or_else(|| format!("`{k}` is not a string"))
}

fn uint(m: &Object<'_>, k: &str) -> Result<u64, String> {
    get(m, k)
        .and_then(Json::as_u64)
        .ok_or_else(|| format!("`{k}` is not a non-negative integer"))
}

fn strings<T>(
    v: Option<&Json<'_>>,
    k: &str,
    read: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let list = v.and_then(Json::as_array);
    (list.ok_or_else(|| format!("`{k}` is not an array"))?.iter())
        .map(|x| {
            read(
                x.as_str()
                    .ok_or_else(|| format!("`{k}` holds a non-string"))?,
            )
        })
        .collect()
}

/// Parses the hello answer (`framings` it does not know are kept, unused).
pub fn parse_hello(line: &str) -> Result<Hello, String> {
    let mut m = object(line)?;
    let framings = match m.iter().position(|(k, _)| k == "framings") {
        None => Vec::new(),
        Some(i) => strings(Some(&m.swap_remove(i).1), "framings", |s| Ok(s.to_string()))?,
    };
    let keys = ["protocol", "name", "ops", "tables"];
    exact_keys(&m, &keys[..3 + usize::from(get(&m, "tables").is_some())])?;
    let protocol = uint(&m, "protocol")?;
    if protocol != PROTOCOL {
        return Err(format!(
            "protocol {protocol} (this harness speaks {PROTOCOL})"
        ));
    }
    let name = string(&m, "name")?.to_string();
    if name.trim().is_empty() {
        return Err("`name` is empty".into());
    }
    let ops = strings(get(&m, "ops"), "ops", |s| match Capabilities::of_op(s) {
        c if c.is_empty() => Err(format!("unknown op `{s}` in `ops`")),
        c => Ok(c),
    })?;
    let ops: Capabilities = ops.into_iter().flat_map(Capabilities::iter).collect();
    let tables = match get(&m, "tables") {
        None => None,
        Some(v) => Some(strings(Some(v), "tables", |s| {
            LutTable::from_name(s).ok_or_else(|| {
                format!(
                    "unknown table `{s}` in `tables` (expected one of: {})",
                    LutTable::ALL.map(LutTable::name).join(", ")
                )
            })
        })?),
    };
    if tables.as_ref().is_some_and(|t| !t.is_empty()) && !ops.covers(Capabilities::LUTS) {
        return Err("`tables` lists tables but `ops` has no `lut`".into());
    }
    let tables = tables.map(|mut t| {
        t.sort();
        t.dedup();
        t
    });
    Ok(Hello {
        protocol,
        name,
        ops,
        tables,
        framings,
    })
}

impl Answer {
    pub fn answers(&self, op: Capability) -> bool {
        use Capability as C;
        matches!(
            (self, op),
            (Answer::Unsupported, _)
                | (Answer::Verdict(_), C::ValidateHeader | C::ValidatePayload)
                | (
                    Answer::Decoded { .. } | Answer::DecodeError { .. },
                    C::Decode
                )
                | (Answer::Encoded(_), C::Encode)
                | (Answer::Refused(_), C::Encode | C::Lut(_))
                | (Answer::Wire(_), C::Lut(_))
                | (Answer::Stream(_), C::ValidateStream)
                | (
                    Answer::Lowered { .. } | Answer::LowerRejected { .. },
                    C::Lower
                )
        )
    }
}

pub fn parse_answer(line: &str, id: u64, op: Capability) -> Result<Answer, String> {
    let mut m = object(line)?;
    let Some(i) = m.iter().position(|(k, _)| k == "id") else {
        return Err("missing key `id`".into());
    };
    match m.remove(i).1 {
        v if v.as_u64() == Some(id) => {}
        v => return Err(format!("answer has id {v}, expected {id}")),
    }
    answer_of(&m, op)
}

/// `{"opcode":"0xHH","fields":{…}}` read straight from the text; `None`
/// wherever unsure (then the tree reader names the error).
pub fn opcode_fields_text(text: &str) -> Option<(u8, Vec<(FieldName, crate::subjects::Value)>)> {
    let mut s = Scan::new(text);
    let (mut opcode, mut fields) = (None, None);
    s.entries(|s, k| {
        match k {
            "opcode" if opcode.is_none() => opcode = Some(parse_opcode(s.str()?)?),
            "fields" if fields.is_none() => fields = Some(fields_from_text(s)?),
            _ => return None,
        }
        Some(())
    })?;
    s.end()?;
    Some((opcode?, fields?))
}

/// [`answer_of`] for [`Capability::Decode`] read straight from the text.
pub fn decode_answer_text(text: &str) -> Option<Answer> {
    if let Some((opcode, fields)) = opcode_fields_text(text) {
        return Some(Answer::Decoded { opcode, fields });
    }
    let mut s = Scan::new(text);
    let mut error = None;
    s.entries(|s, k| {
        if k != "error" || error.is_some() {
            return None;
        }
        let (mut field, mut offset) = (None, None);
        s.entries(|s, k| {
            match k {
                "field" if field.is_none() => field = Some(s.str()?),
                "offset" if offset.is_none() => offset = Some(s.u64()?),
                _ => return None,
            }
            Some(())
        })?;
        error = Some((field?, offset?));
        Some(())
    })?;
    s.end()?;
    let (field, offset) = error?;
    Some(Answer::DecodeError {
        field: field.to_string(),
        offset,
    })
}

/// `{"k":true}` as `yes`; `None` without `k`.
fn flag(m: &Object<'_>, k: &str, yes: Answer) -> Result<Option<Answer>, String> {
    let Some(v) = get(m, k) else { return Ok(None) };
    exact_keys(m, &[k])?;
    match v {
        Json::Bool(true) => Ok(Some(yes)),
        _ => Err(format!("`{k}` is not true")),
    }
}

/// The answer object `m` without its `"id"` (a line's, or what `tpb_decode`
/// / `tpb_lower` wrote) to an `op` request.
pub fn answer_of(m: &Object<'_>, op: Capability) -> Result<Answer, String> {
    if let Some(a) = flag(m, "unsupported", Answer::Unsupported)? {
        return Ok(a);
    }
    match op {
        Capability::ValidateHeader | Capability::ValidatePayload => {
            exact_keys(m, &["failed"])?;
            match get(m, "failed") {
                Some(Json::Null) => Ok(Answer::Verdict(None)),
                Some(Json::Str(s)) if !s.is_empty() => Ok(Answer::Verdict(Some(s.to_string()))),
                _ => Err("`failed` is neither null nor a predicate name".into()),
            }
        }
        Capability::Decode => {
            if let Some(e) = get(m, "error") {
                exact_keys(m, &["error"])?;
                let Json::Object(e) = e else {
                    return Err("`error` is not an object".into());
                };
                exact_keys(e, &["field", "offset"])?;
                let field = string(e, "field")?.to_string();
                let offset = uint(e, "offset")?;
                return Ok(Answer::DecodeError { field, offset });
            }
            exact_keys(m, &["opcode", "fields"])?;
            let s = string(m, "opcode")?;
            let opcode = parse_opcode(s).ok_or_else(|| format!("`opcode` {s:?} is not 0xHH"))?;
            match get(m, "fields") {
                Some(Json::Object(f)) => Ok(Answer::Decoded {
                    opcode,
                    fields: fields_from_json(f).map_err(|e| format!("`fields`: {e}"))?,
                }),
                _ => Err("`fields` is not an object".into()),
            }
        }
        Capability::Encode | Capability::Lut(_) if get(m, "refused").is_some() => {
            exact_keys(m, &["refused"])?;
            Ok(Answer::Refused(string(m, "refused")?.to_string()))
        }
        Capability::Encode => {
            exact_keys(m, &["hex"])?;
            let s = string(m, "hex")?;
            parse_bundle_hex(s)
                .map(Answer::Encoded)
                .ok_or_else(|| "`hex` is not 128 hex digits".into())
        }
        Capability::Lut(_) => {
            exact_keys(m, &["wire"])?;
            Ok(Answer::Wire(uint(m, "wire")?))
        }
        Capability::ValidateStream => {
            if let Some(a) = flag(m, "valid", Answer::Stream(None))? {
                return Ok(a);
            }
            exact_keys(m, &["stream_error", "index"])?;
            let e = string(m, "stream_error")?;
            if e.is_empty() {
                return Err("`stream_error` is empty".into());
            }
            Ok(Answer::Stream(Some((e.to_string(), uint(m, "index")?))))
        }
        Capability::Lower => {
            if get(m, "error").is_some() {
                exact_keys(m, &["error", "instruction"])?;
                let e = string(m, "error")?;
                if e.is_empty() {
                    return Err("`error` is empty".into());
                }
                return Ok(Answer::LowerRejected {
                    error: e.to_string(),
                    instruction: uint(m, "instruction")?,
                });
            }
            exact_keys(m, &LOWERED_KEYS)?;
            Ok(Answer::Lowered {
                generation: string(m, "generation")?.to_string(),
                module: super::lower_json::module_from_json(m)?,
            })
        }
        _ => Err(format!("no protocol op carries {}", op.name())),
    }
}

// The operations asked one input at a time ([`Question`]): the request,
// and the answer typed (another kind is a protocol fault).

pub fn wrong_kind(a: &Answer) -> Fault {
    Fault::Protocol(format!("answer of the wrong kind: {a:?}"))
}

/// The request asking `q`; a stream over [`MAX_STREAM`] is `Unsupported`.
pub fn request_of(q: Question<'_>, gen: Generation) -> Reply<Request> {
    Ok(match q {
        Question::Decode(b) => Request::Decode(*b),
        Question::Encode(opcode, fields) => Request::Encode {
            opcode,
            fields: fields.to_vec(),
        },
        Question::ValidateStream(b) if b.len() > MAX_STREAM => return Err(Fault::Unsupported),
        Question::ValidateStream(b) => return stream_request(Arc::new(b.to_vec())),
        Question::LowerModule(insns) => {
            Request::Lower(super::lower_json::ir_document(gen, insns).into())
        }
    })
}

pub fn stream_request(s: Arc<Vec<u8>>) -> Reply<Request> {
    match s.len() {
        n if n > MAX_STREAM => Err(Fault::Unsupported),
        _ => Ok(Request::ValidateStream(s)),
    }
}

pub fn lower_request(module: Arc<Vec<IrInstruction>>, gen: Generation) -> Request {
    Request::Lower(IrDocument {
        text: super::lower_json::ir_document(gen, &module),
        module: Some(module),
    })
}

/// True if `r` is [`request_of`]`(q, gen)`, without building it.
pub fn asks(q: Question<'_>, r: &Request, gen: Generation) -> bool {
    match (q, r) {
        (Question::Decode(b), Request::Decode(x)) => b == x,
        (Question::Encode(op, f), Request::Encode { opcode, fields }) => {
            op == *opcode && f == fields.as_slice()
        }
        // The batch's own stream, else an equal one.
        (Question::ValidateStream(b), Request::ValidateStream(x)) => {
            std::ptr::eq(b, x.as_slice()) || b == x.as_slice()
        }
        // The batch's own module, else one with the same document.
        (Question::LowerModule(insns), Request::Lower(ir)) => {
            ir.module
                .as_deref()
                .is_some_and(|m| std::ptr::eq(m.as_slice(), insns))
                || ir.text == super::lower_json::ir_document(gen, insns)
        }
        _ => false,
    }
}

pub fn said(q: Question<'_>, a: Answer, gen: Generation) -> Reply<Said> {
    Ok(match (q, a) {
        (Question::Decode(_), Answer::Decoded { opcode, fields }) => Said::Decode(Ok(Decoded {
            opcode,
            mnemonic: mnemonic(opcode).unwrap_or("?").into(),
            fields,
        })),
        (Question::Decode(_), Answer::DecodeError { field, offset }) => {
            Said::Decode(Err(DecodeFail {
                field: foreign(&field),
                offset: usize::try_from(offset).unwrap_or(usize::MAX),
            }))
        }
        (Question::Encode(..), Answer::Encoded(b)) => Said::Encode(Ok(b)),
        (Question::Encode(..), Answer::Refused(why)) => Said::Encode(Err(foreign(&why))),
        (Question::ValidateStream(_), Answer::Stream(None)) => Said::ValidateStream(Ok(())),
        (Question::ValidateStream(_), Answer::Stream(Some((e, index)))) => {
            Said::ValidateStream(Err(StreamFail {
                name: foreign(&e),
                index: usize::try_from(index).unwrap_or(usize::MAX),
            }))
        }
        (Question::LowerModule(insns), Answer::Lowered { generation, module }) => {
            if generation != gen.name() {
                return Err(Fault::Protocol(format!(
                    "lower answer: `generation` is not \"{}\"",
                    gen.name()
                )));
            }
            super::lower_json::check_count(&module, insns.len())
                .map_err(|e| Fault::Protocol(format!("lower answer: {e}")))?;
            Said::LowerModule(ModuleAnswer::Lowered(module))
        }
        (Question::LowerModule(insns), Answer::LowerRejected { error, instruction }) => {
            let asked = insns.len();
            match usize::try_from(instruction) {
                Ok(i) if i < asked => Said::LowerModule(ModuleAnswer::Rejected {
                    instruction: i,
                    name: foreign(&error),
                }),
                _ => {
                    return Err(Fault::Protocol(format!(
                        "lower answer: instruction {instruction} of {asked} asked"
                    )))
                }
            }
        }
        (_, other) => return Err(wrong_kind(&other)),
    })
}

// A `lib:` worker's binary records ([`super::record`]): a request is a
// kind byte and its input, an answer a tag and its parts.

const REQ_HEADER: u8 = b'H';
const REQ_PAYLOAD: u8 = b'P';
const REQ_DECODE: u8 = b'D';
const REQ_ENCODE: u8 = b'E';
const REQ_LUT: u8 = b'T';
const REQ_STREAM: u8 = b'S';
const REQ_LOWER: u8 = b'L';

/// The request record of `r` in two parts (a stream or IR document uncopied).
pub fn request_parts(r: &Request) -> (Vec<u8>, &[u8]) {
    match r {
        Request::Validate(Validator::Header, b) => (vec![REQ_HEADER], b),
        Request::Validate(Validator::Payload, b) => (vec![REQ_PAYLOAD], b),
        Request::Decode(b) => (vec![REQ_DECODE], b),
        Request::Encode { opcode, fields } => {
            let mut o = vec![REQ_ENCODE, *opcode];
            put_fields(&mut o, fields);
            (o, &[])
        }
        Request::Lut { table, input } => {
            // The table's position in `LutTable::ALL`.
            let mut o = vec![REQ_LUT, *table as u8];
            o.extend_from_slice(&input.to_le_bytes());
            (o, &[])
        }
        Request::ValidateStream(b) => (vec![REQ_STREAM], b),
        Request::Lower(ir) => (vec![REQ_LOWER], ir.text.as_bytes()),
    }
}

/// A request record's stream or IR document, read where it lies (the
/// library is asked on the region's bytes, not a copy).
pub enum InPlace<'a> {
    Stream(&'a [u8]),
    Lower(&'a str),
}

/// The stream or IR document of a request record; `Ok(None)` for others.
pub fn in_place(b: &[u8]) -> Result<Option<InPlace<'_>>, String> {
    Ok(match b.split_first() {
        Some((&REQ_STREAM, s)) => Some(InPlace::Stream(s)),
        Some((&REQ_LOWER, ir)) => Some(InPlace::Lower(
            std::str::from_utf8(ir).map_err(|_| "IR not UTF-8")?,
        )),
        _ => None,
    })
}

pub fn get_request(b: &[u8]) -> Result<Request, String> {
    match in_place(b)? {
        Some(InPlace::Stream(s)) => return Ok(Request::ValidateStream(Arc::new(s.to_vec()))),
        Some(InPlace::Lower(ir)) => return Ok(Request::Lower(ir.to_string().into())),
        None => {}
    }
    let bundle = |b: &[u8]| <[u8; 64]>::try_from(b).map_err(|_| "not 64 bytes".to_string());
    let Some((&kind, rest)) = b.split_first() else {
        return Err("empty".into());
    };
    Ok(match kind {
        REQ_HEADER => Request::Validate(Validator::Header, bundle(rest)?),
        REQ_PAYLOAD => Request::Validate(Validator::Payload, bundle(rest)?),
        REQ_DECODE => Request::Decode(bundle(rest)?),
        REQ_ENCODE => {
            let (&opcode, fields) = rest.split_first().ok_or("no opcode")?;
            let mut r = Reader(fields);
            let fields = r.fields()?;
            if !r.0.is_empty() {
                return Err("bytes past the fields".into());
            }
            Request::Encode { opcode, fields }
        }
        REQ_LUT => match rest {
            [t, a, b, c, d] => Request::Lut {
                table: *LutTable::ALL
                    .get(usize::from(*t))
                    .ok_or("LUT table index")?,
                input: u32::from_le_bytes([*a, *b, *c, *d]),
            },
            _ => return Err("not a table and an ordinal".into()),
        },
        k => return Err(format!("request kind {k}")),
    })
}

const UNSUPPORTED: u8 = 0;
/// The library answered `TPB_ERROR` or broke the ABI: the text says how.
const ERROR: u8 = 1;
const VERDICT: u8 = 2;
const VALID: u8 = 3;
const DECODED: u8 = 4;
const DECODE_ERROR: u8 = 5;
const ENCODED: u8 = 6;
const REFUSED: u8 = 7;
const WIRE: u8 = 8;
const STREAM_OK: u8 = 9;
const STREAM_ERROR: u8 = 10;
const LOWERED: u8 = 11;
const LOWER_REJECTED: u8 = 12;

/// `a` (or the library's error text) as an answer record: its tag, then
/// its text, its number, its fields or module, as it has them.
pub fn put_answer(a: &Result<Answer, String>) -> Vec<u8> {
    let mut o = Vec::with_capacity(80);
    let (tag, text, n): (u8, Option<&str>, Option<u64>) = match a {
        Err(e) => (ERROR, Some(e), None),
        Ok(Answer::Unsupported) => (UNSUPPORTED, None, None),
        Ok(Answer::Verdict(None)) => (VALID, None, None),
        Ok(Answer::Verdict(Some(p))) => (VERDICT, Some(p), None),
        Ok(Answer::Decoded { .. }) => (DECODED, None, None),
        Ok(Answer::DecodeError { field, offset }) => (DECODE_ERROR, Some(field), Some(*offset)),
        Ok(Answer::Encoded(_)) => (ENCODED, None, None),
        Ok(Answer::Refused(why)) => (REFUSED, Some(why), None),
        Ok(Answer::Wire(w)) => (WIRE, None, Some(*w)),
        Ok(Answer::Stream(None)) => (STREAM_OK, None, None),
        Ok(Answer::Stream(Some((e, i)))) => (STREAM_ERROR, Some(e), Some(*i)),
        Ok(Answer::Lowered { generation, .. }) => (LOWERED, Some(generation), None),
        Ok(Answer::LowerRejected { error, instruction }) => {
            (LOWER_REJECTED, Some(error), Some(*instruction))
        }
    };
    o.push(tag);
    if let Some(t) = text {
        bytes(&mut o, t.as_bytes());
    }
    if let Some(n) = n {
        u64_(&mut o, n);
    }
    match a {
        Ok(Answer::Decoded { opcode, fields }) => {
            o.push(*opcode);
            put_fields(&mut o, fields);
        }
        Ok(Answer::Encoded(b)) => o.extend_from_slice(b),
        Ok(Answer::Lowered { module, .. }) => put_module(&mut o, module),
        _ => {}
    }
    o
}

/// The answer record `b`: `Ok(Err(text))` the library's error; `Err` a
/// malformed record (the worker's fault).
pub fn get_answer(b: &[u8]) -> Result<Result<Answer, String>, String> {
    let mut r = Reader(b);
    let a = match r.u8()? {
        ERROR => return Ok(Err(r.text()?)),
        UNSUPPORTED => Answer::Unsupported,
        VALID => Answer::Verdict(None),
        VERDICT => Answer::Verdict(Some(r.text()?)),
        DECODED => Answer::Decoded {
            opcode: r.u8()?,
            fields: r.fields()?,
        },
        DECODE_ERROR => Answer::DecodeError {
            field: r.text()?,
            offset: r.u64()?,
        },
        ENCODED => Answer::Encoded(r.take(64)?.try_into().unwrap_or([0; 64])),
        REFUSED => Answer::Refused(r.text()?),
        WIRE => Answer::Wire(r.u64()?),
        STREAM_OK => Answer::Stream(None),
        STREAM_ERROR => Answer::Stream(Some((r.text()?, r.u64()?))),
        LOWERED => Answer::Lowered {
            generation: r.text()?,
            module: r.module()?,
        },
        LOWER_REJECTED => Answer::LowerRejected {
            error: r.text()?,
            instruction: r.u64()?,
        },
        t => return Err(format!("answer record tag {t}")),
    };
    if !r.0.is_empty() {
        return Err("answer record has bytes past its end".into());
    }
    Ok(Ok(a))
}

#[cfg(test)]
pub(crate) mod tests;
