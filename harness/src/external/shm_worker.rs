//! The batch worker of a `lib:` subject: `tpbconform subject-worker --shm
//! REGION --arch vN lib:PATH` maps the region the gate made
//! ([`super::shm`]), loads the library ([`super::ffi`]), and then answers
//! one hand-off per doorbell byte on its stdin: the chunk's inputs are in
//! the region, the answers go back into it, and one byte on stdout says it
//! is done. Before each single call it stamps the entry's index into the
//! region, so when the library crashes or hangs the gate reads which input
//! it was on (docs/subject-protocol.md "Shared-memory worker").

use super::ffi::{Status, SubjectLib, VerdictCode, NOT_UTF8_REFUSAL};
use super::protocol::LUT_TABLES;
use super::shm::{self, Arena, Field, Region};
use std::io::{Read, Write};
use std::path::Path;

/// Runs the worker until its stdin ends. A region or library that does not
/// open is an error (after writing it into the region when it is mapped).
pub fn serve(lib_path: &str, region: &Path, arch: &str) -> Result<(), String> {
    let (mut bell_in, mut bell_out) = shm::private_stdio()?;
    let mut r = Region::open(region).map_err(|e| e.0)?;
    let lib = match SubjectLib::load(lib_path) {
        Ok(l) => l,
        Err(e) => return Err(fail(&mut r, &mut bell_out, e)),
    };
    let state = match lib.init(arch) {
        Status::Ok(()) => shm::READY_OK,
        Status::Unsupported => shm::READY_UNSUPPORTED,
        Status::Error(e) => {
            return Err(fail(
                &mut r,
                &mut bell_out,
                format!("tpb_subject_init({arch:?}): {e}"),
            ))
        }
    };
    let flags = (u32::from(lib.has_batch(false)) * shm::FLAG_HEADER_BATCH)
        | (u32::from(lib.has_batch(true)) * shm::FLAG_PAYLOAD_BATCH);
    r.set(Field::Flags, flags);
    r.set(Field::Ready, state);
    ring(&mut bell_out)?;
    let mut arena = Arena::new();
    let mut byte = [0u8; 1];
    loop {
        match bell_in.read(&mut byte) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the doorbell: {e}")),
        }
        let seq = r.get(Field::Seq);
        let t = std::time::Instant::now();
        arena.reset();
        run_handoff(&lib, &mut r, &mut arena);
        r.clear_stamp();
        let us = u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX);
        r.set(Field::Busy, us);
        r.set(Field::Finished, seq);
        ring(&mut bell_out)?;
    }
}

fn fail(r: &mut Region, out: &mut std::fs::File, e: String) -> String {
    r.set_error(&e);
    r.set(Field::Ready, shm::READY_FAILED);
    let _ = ring(out);
    e
}

fn ring(out: &mut std::fs::File) -> Result<(), String> {
    out.write_all(&[1])
        .map_err(|e| format!("ringing the gate: {e}"))
}

/// A batch answer in the codes the worker reserves for itself is a name
/// (`tpb_verdict id N`), never taken for one of those codes.
fn reserve(r: &mut Region, arena: &mut Arena, i: usize) {
    let c = r.codes()[i];
    if c >= shm::CODE_NAMED {
        let o = arena.put(r.arena(), &format!("tpb_verdict id {c}"));
        r.codes()[i] = shm::CODE_NAMED;
        r.values()[i] = o;
    }
}

/// Runs entries `start..n` of the hand-off in the region.
fn run_handoff(lib: &SubjectLib, r: &mut Region, arena: &mut Arena) {
    let op = r.get(Field::Op);
    let n = (r.get(Field::N) as usize).min(shm::CHUNK);
    let start = (r.get(Field::Start) as usize).min(n);
    let single = r.get(Field::Mode) == shm::MODE_SINGLE;
    let table = LUT_TABLES.get(r.get(Field::Table) as usize).copied();
    // The last LUT refusal of this hand-off and its arena offset (NONE:
    // none yet).
    const NONE: u32 = u32::MAX - 1;
    let mut last_refusal: (Vec<u8>, u32) = (Vec::new(), NONE);
    let payload = op == shm::OP_VALIDATE_PAYLOAD;
    if op != shm::OP_LUT && !single && lib.has_batch(payload) {
        r.set_stamp(start);
        r.set(Field::InBatch, 1);
        let status = {
            let (input, codes, _) = r.io();
            lib.validate_batch(payload, &input[start * 64..n * 64], &mut codes[start..n])
        };
        r.set(Field::InBatch, 0);
        for i in start..n {
            match &status {
                Status::Ok(()) => reserve(r, arena, i),
                Status::Unsupported => r.codes()[i] = shm::CODE_UNSUPPORTED,
                Status::Error(e) => {
                    let o = arena.put(r.arena(), e);
                    r.codes()[i] = shm::CODE_ERROR;
                    r.values()[i] = o;
                }
            }
        }
        r.set(Field::Done, u32::try_from(n).unwrap_or(u32::MAX));
        return;
    }
    for i in start..n {
        r.set_stamp(i);
        let (code, value) = match (op, table) {
            (shm::OP_LUT, Some(t)) => {
                let ord = {
                    let input = r.inputs();
                    u32::from_ne_bytes([
                        input[i * 4],
                        input[i * 4 + 1],
                        input[i * 4 + 2],
                        input[i * 4 + 3],
                    ])
                };
                let (arena, texts, last) = (&mut *arena, r.arena(), &mut last_refusal);
                let put = |why: &std::ffi::CStr| {
                    // A library answers the same few refusals over and
                    // over: the last one's offset is reused when the text
                    // is the same (the pointer alone may be a reused buffer).
                    let bytes = why.to_bytes();
                    if last.1 != NONE && last.0.as_slice() == bytes {
                        return Ok(last.1);
                    }
                    let s = std::str::from_utf8(bytes).map_err(|_| NOT_UTF8_REFUSAL.to_string())?;
                    let o = arena.put(texts, s);
                    last.0.clear();
                    last.0.extend_from_slice(bytes);
                    last.1 = o;
                    Ok(o)
                };
                match lib.lut_with(t, ord, put) {
                    Status::Ok(Ok(w)) => (shm::CODE_WIRE, w),
                    Status::Ok(Err(offset)) => (shm::CODE_REFUSED, offset),
                    Status::Unsupported => (shm::CODE_UNSUPPORTED, 0),
                    Status::Error(e) => (shm::CODE_ERROR, arena.put(r.arena(), &e)),
                }
            }
            (shm::OP_LUT, None) => (
                shm::CODE_ERROR,
                arena.put(r.arena(), "worker: unknown LUT table index"),
            ),
            _ => {
                let answer = if lib.has_batch(payload) {
                    // Re-running a batch one bundle at a time: the same entry point.
                    let (input, codes, _) = r.io();
                    match lib.validate_batch(
                        payload,
                        &input[i * 64..i * 64 + 64],
                        &mut codes[i..=i],
                    ) {
                        Status::Ok(()) if codes[i] >= shm::CODE_NAMED => {
                            Status::Ok(VerdictCode::Named(format!("tpb_verdict id {}", codes[i])))
                        }
                        Status::Ok(()) => Status::Ok(VerdictCode::Id(codes[i])),
                        Status::Unsupported => Status::Unsupported,
                        Status::Error(e) => Status::Error(e),
                    }
                } else {
                    let input = r.inputs();
                    let b = &input[i * 64..i * 64 + 64];
                    lib.validate_code(payload, b)
                };
                match answer {
                    Status::Ok(VerdictCode::Id(id)) => (id, 0),
                    Status::Ok(VerdictCode::Named(s)) => {
                        (shm::CODE_NAMED, arena.put(r.arena(), &s))
                    }
                    Status::Unsupported => (shm::CODE_UNSUPPORTED, 0),
                    Status::Error(e) => (shm::CODE_ERROR, arena.put(r.arena(), &e)),
                }
            }
        };
        r.codes()[i] = code;
        r.values()[i] = value;
        r.set(Field::Done, u32::try_from(i + 1).unwrap_or(u32::MAX));
    }
}
