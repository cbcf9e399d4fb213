//! The library worker: `tpbconform subject-worker lib:PATH` loads a C ABI
//! subject ([`super::ffi`]) and serves `tpb-subject/1` on stdin/stdout, so a
//! `lib:` subject is driven by the same client as a `cmd:` one and a crash
//! or hang inside the library ends only this process.
//!
//! A library call that returns `TPB_ERROR` (or breaks the ABI) is answered
//! with a line the client rejects (`{"id":N,"worker_error":…}`), which makes
//! it a protocol finding with the input, as tpb_subject.h promises.

use super::ffi::{Status, SubjectLib};
use super::protocol::{answer_line, parse_request, Answer, Hello, Incoming, Request, PROTOCOL};
use serde_json::{Map, Value};
use std::io::{BufRead, BufReader, Read, Write};

/// The hidden subcommand the `lib:` workers run as.
pub const WORKER_SUBCOMMAND: &str = "subject-worker";

fn error_line(id: u64, why: &str) -> String {
    serde_json::json!({"id": id, "worker_error": why}).to_string()
}

fn answer<T>(id: u64, s: Status<T>, ok: impl FnOnce(T) -> Answer) -> String {
    match s {
        Status::Ok(v) => answer_line(id, &ok(v)),
        Status::Unsupported => answer_line(id, &Answer::Unsupported),
        Status::Error(e) => error_line(id, &e),
    }
}

/// Splices `"id"` in front of the JSON object the library's decoder (or
/// lowering) wrote; `what` names the function.
fn object_line(id: u64, what: &str, text: &str) -> String {
    match crate::strict_json::parse(text) {
        Ok(Value::Object(m)) => {
            let mut out = Map::new();
            out.insert("id".into(), Value::from(id));
            out.extend(m);
            Value::Object(out).to_string()
        }
        _ => error_line(id, &format!("{what} wrote no JSON object: {text:?}")),
    }
}

fn handle(lib: &SubjectLib, id: u64, r: &Request) -> String {
    match r {
        Request::ValidateHeader(b) => answer(id, lib.validate(false, b), Answer::Verdict),
        Request::ValidatePayload(b) => answer(id, lib.validate(true, b), Answer::Verdict),
        Request::Decode(b) => match lib.decode(b) {
            Status::Ok(text) => object_line(id, "tpb_decode", &text),
            Status::Unsupported => answer_line(id, &Answer::Unsupported),
            Status::Error(e) => error_line(id, &e),
        },
        Request::Encode { .. } => {
            // The library gets the request's {"opcode":…,"fields":…} object.
            answer(id, lib.encode(&r.input_text()), |v| match v {
                Ok(b) => Answer::Encoded(b),
                Err(why) => Answer::Refused(why),
            })
        }
        Request::Lut { table, input } => answer(id, lib.lut(*table, *input), |v| match v {
            Ok(w) => Answer::Wire(u64::from(w)),
            Err(why) => Answer::Refused(why),
        }),
        Request::ValidateStream(bytes) => answer(id, lib.validate_stream(bytes), Answer::Stream),
        Request::Lower(_) => match lib.lower(&r.input_text()) {
            Status::Ok(text) => object_line(id, "tpb_lower", &text),
            Status::Unsupported => answer_line(id, &Answer::Unsupported),
            Status::Error(e) => error_line(id, &e),
        },
    }
}

/// Serves the protocol for the library at `path` until `input` ends.
/// Errors (a library that does not load, a request line the worker cannot
/// parse) are returned for the caller to print and exit non-zero.
pub fn serve(path: &str, input: impl Read, output: impl Write) -> Result<(), String> {
    let lib = SubjectLib::load(path)?;
    let mut out = std::io::BufWriter::new(output);
    let mut input = BufReader::new(input);
    let mut line = String::new();
    let mut ready = false;
    loop {
        line.clear();
        let n = input
            .read_line(&mut line)
            .map_err(|e| format!("reading stdin: {e}"))?;
        if n == 0 {
            return out.flush().map_err(|e| e.to_string());
        }
        let l = line.trim_end_matches(['\n', '\r']);
        let reply = match parse_request(l).map_err(|e| format!("bad request line: {e}: {l}"))? {
            Incoming::Hello { arch } => {
                let ops = match lib.init(&arch) {
                    Status::Ok(()) => lib.ops(),
                    // The generation is not served: declare nothing.
                    Status::Unsupported => Vec::new(),
                    Status::Error(e) => return Err(format!("tpb_subject_init({arch:?}): {e}")),
                };
                ready = true;
                // `tables` only when the library declared some tables only.
                let tables = (ops.contains(&super::protocol::Op::Lut) && !lib.all_tables())
                    .then(|| lib.lut_tables().to_vec());
                Hello {
                    protocol: PROTOCOL,
                    name: lib.name().to_string(),
                    ops,
                    tables,
                    framings: Vec::new(),
                }
                .to_line()
            }
            _ if !ready => return Err("request before hello".into()),
            Incoming::Request { id, request } => handle(&lib, id, &request),
            Incoming::Unknown { id } => answer_line(id, &Answer::Unsupported),
        };
        // Flush every answer before the next library call: if that call
        // crashes, the harness must have seen every earlier answer, or it
        // would blame an earlier input.
        writeln!(out, "{reply}")
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
}
