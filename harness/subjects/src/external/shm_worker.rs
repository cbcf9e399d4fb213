//! The worker of a `lib:` subject (`tpbconform subject-worker --shm REGION
//! --arch vN lib:PATH`, docs/subject-protocol.md "Shared-memory worker"):
//! maps the region, loads the library, writes its hello, then answers one
//! hand-off per doorbell byte, stamping each single call's entry first.

use super::ffi::{
    Status, SubjectLib, VerdictCode, NOT_UTF8_REFUSAL, UNWRITTEN_TEXT, UNWRITTEN_VERDICT,
};
use super::protocol::put_answer;
use super::protocol::{Hello, MAX_LINE, PROTOCOL};
use super::shm::{self, Arena, Field, Region};
use crate::subjects::{Capabilities, LutTable};
use std::ffi::CStr;
use std::io::{Read, Write};
use std::path::Path;

pub const WORKER_SUBCOMMAND: &str = "subject-worker";

/// Test-only: set, the worker leaves the last entry of every hand-off
/// unwritten (the off-by-one of issue 31), so the tests see the gate name
/// it a harness fault, never a divergence of the library.
pub const PLANT_SKIP_LAST_ENV: &str = "TPB_TEST_WORKER_SKIP_LAST";

/// Test-only: set, the worker writes every answer record one byte short,
/// so the tests see the gate name a malformed record a harness fault.
pub const PLANT_CUT_RECORDS_ENV: &str = "TPB_TEST_WORKER_CUT_RECORDS";

/// Test-only: `before`, the worker exits on every doorbell before running
/// an entry; `after`, once it has answered every entry but before saying
/// so: either way no input is running when it dies, so the tests see the
/// gate blame none.
pub const PLANT_EXIT_ENV: &str = "TPB_TEST_WORKER_EXIT";

/// Runs the worker until its stdin ends (a failed load or init: an error,
/// written into the region too).
pub fn serve(lib_path: &str, region: &Path, arch: &str) -> Result<(), String> {
    let (mut bell_in, mut bell_out) = shm::private_stdio()?;
    let mut r = Region::open(region)?;
    let (lib, state) = match start(lib_path, arch, &mut r) {
        Ok(started) => started,
        Err(e) => {
            r.set_error(&e);
            r.set(Field::Ready, shm::READY_FAILED);
            let _ = ring(&mut bell_out);
            return Err(e);
        }
    };
    r.set(Field::Ready, state);
    ring(&mut bell_out)?;
    let mut arena = Arena::default();
    let mut scratch = LutScratch::default();
    let mut byte = [0u8; 1];
    let skip_last = std::env::var_os(PLANT_SKIP_LAST_ENV).is_some();
    let cut = std::env::var_os(PLANT_CUT_RECORDS_ENV).is_some();
    let exit = std::env::var(PLANT_EXIT_ENV).unwrap_or_default();
    let exit_at = |when: &str| {
        if exit == when {
            std::process::exit(3);
        }
    };
    loop {
        match bell_in.read(&mut byte) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the doorbell: {e}")),
        }
        exit_at("before");
        let seq = r.get(Field::Seq);
        let t = std::time::Instant::now();
        arena.reset();
        r.set(Field::Full, 0);
        let n = r.get(Field::N);
        if skip_last {
            r.set(Field::N, n.saturating_sub(1));
        }
        run_handoff(&lib, &mut r, &mut arena, &mut scratch, cut);
        exit_at("after");
        if skip_last && r.get(Field::Full) == 0 {
            r.set(Field::Done, n);
        }
        r.clear_stamp();
        let us = u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX);
        r.set(Field::Busy, us);
        r.set(Field::Finished, seq);
        ring(&mut bell_out)?;
    }
}

/// Loads and initialises the library, writes its hello and batch flags;
/// the ready state.
fn start(lib_path: &str, arch: &str, r: &mut Region) -> Result<(SubjectLib, u32), String> {
    let lib = SubjectLib::load(lib_path)?;
    let state = match lib.init(arch) {
        Status::Ok(()) => shm::READY_OK,
        Status::Unsupported => shm::READY_UNSUPPORTED,
        Status::Error(e) => return Err(format!("tpb_subject_init({arch:?}): {e}")),
    };
    let ops = if matches!(state, shm::READY_OK) {
        lib.ops()
    } else {
        Capabilities::NONE
    };
    // `tables` only when some tables are left out.
    let tables = lib.lut_tables();
    let some = ops.covers(Capabilities::LUTS) && tables.len() < LutTable::ALL.len();
    let tables = some.then(|| tables.to_vec());
    let hello = Hello {
        protocol: PROTOCOL,
        name: lib.name().to_string(),
        ops,
        tables,
        framings: Vec::new(),
    }
    .to_string();
    if shm::put_record(r.areas().answers, &mut 0, Some(0), &[hello.as_bytes()]).is_none() {
        return Err("hello too long".into());
    }
    let flag = |op, has: bool| u32::from(has) * shm::batch_flag(op);
    let flags = flag(shm::OP_VALIDATE_HEADER, lib.has_batch(false))
        | flag(shm::OP_VALIDATE_PAYLOAD, lib.has_batch(true))
        | flag(shm::OP_LUT, lib.has_lut_batch());
    r.set(Field::Flags, flags);
    Ok((lib, state))
}

fn ring(out: &mut std::fs::File) -> Result<(), String> {
    out.write_all(&[1])
        .map_err(|e| format!("ringing the gate: {e}"))
}

/// A batch answer in the reserved codes is a name (`tpb_verdict id N`).
fn reserve(r: &mut Region, arena: &mut Arena, i: usize) {
    let c = r.areas().codes[i];
    if c == shm::CODE_UNSET {
        // Never run (ffi answers the library's own 0xFFFB as unwritten):
        // the gate names it a harness fault.
        return;
    }
    if c == UNWRITTEN_VERDICT {
        let o = arena.put(r.areas().arena, UNWRITTEN_TEXT);
        r.set_entry(i, (shm::CODE_ERROR, o));
    } else if c >= shm::CODE_RESERVED {
        let o = arena.put(r.areas().arena, &format!("tpb_verdict id {c}"));
        r.set_entry(i, (shm::CODE_NAMED, o));
    }
}

/// True if the batch call answered entry `k`; else its status is the answer.
fn batch_answered(r: &mut Region, arena: &mut Arena, k: usize, status: &Status<()>) -> bool {
    match status {
        Status::Ok(()) => return true,
        Status::Unsupported => r.areas().codes[k] = shm::CODE_UNSUPPORTED,
        Status::Error(e) => {
            let o = arena.put(r.areas().arena, e);
            r.set_entry(k, (shm::CODE_ERROR, o));
        }
    }
    false
}

#[derive(Default)]
struct LutScratch {
    inputs: Vec<u32>,
    wires: Vec<u32>,
    refused: Vec<*const std::ffi::c_char>,
}

fn refusal(arena: &mut Arena, texts: &mut [u8], why: &CStr) -> Result<u32, String> {
    let s = std::str::from_utf8(why.to_bytes()).map_err(|_| NOT_UTF8_REFUSAL.to_string())?;
    Ok(arena.put(texts, s))
}

/// Runs entries `start..n` as one `call(r, i, end)` (`batch`) or one per
/// entry, stamping before and moving `done` after; false stops the run.
fn stepped(
    r: &mut Region,
    (start, n): (usize, usize),
    batch: bool,
    mut call: impl FnMut(&mut Region, usize, usize) -> bool,
) {
    let step = if batch { (n - start).max(1) } else { 1 };
    let mut i = start;
    while i < n {
        let end = (i + step).min(n);
        r.set_stamp(i);
        if !call(r, i, end) {
            return;
        }
        r.set(Field::Done, u32::try_from(end).unwrap_or(u32::MAX));
        i = end;
    }
}

/// LUT entries `span` through `tpb_lut_batch`: one call, or one per entry
/// (`single`: re-running a batch that crashed or hung).
#[allow(clippy::too_many_arguments)]
fn lut_batch(
    lib: &SubjectLib,
    r: &mut Region,
    arena: &mut Arena,
    sc: &mut LutScratch,
    t: LutTable,
    (start, n): (usize, usize),
    single: bool,
) {
    sc.inputs.clear();
    sc.inputs.extend(
        r.areas().inputs[start * 4..n * 4]
            .chunks_exact(4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])),
    );
    sc.wires.resize(n - start, 0);
    sc.refused.resize(n - start, std::ptr::null());
    stepped(r, (start, n), !single, |r, i, end| {
        let (lo, hi) = (i - start, end - start);
        let shm::Areas {
            codes,
            values,
            arena: texts,
            ..
        } = r.areas();
        let why = |why: &CStr| match refusal(arena, texts, why) {
            Ok(o) => (shm::CODE_REFUSED, o),
            Err(e) => (shm::CODE_ERROR, arena.put(texts, &e)),
        };
        let (codes, values) = (&mut codes[i..end], &mut values[i..end]);
        let put = |k: usize, a: Result<u32, (u16, u32)>| {
            (codes[k], values[k]) = a.map_or_else(|a| a, |w| (shm::CODE_WIRE, w));
        };
        let scratch = (&mut sc.wires[lo..hi], &mut sc.refused[lo..hi]);
        let status = lib.lut_batch(t, &sc.inputs[lo..hi], scratch, why, put);
        for k in i..end {
            batch_answered(r, arena, k, &status);
        }
        true
    });
}

fn word(r: &mut Region, i: usize) -> u32 {
    let b = &r.areas().inputs[i * 4..i * 4 + 4];
    u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

fn run_handoff(
    lib: &SubjectLib,
    r: &mut Region,
    arena: &mut Arena,
    sc: &mut LutScratch,
    cut: bool,
) {
    let op = r.get(Field::Op);
    let n = (r.get(Field::N) as usize).min(shm::CHUNK);
    let span = ((r.get(Field::Start) as usize).min(n), n);
    let single = r.get(Field::Mode) == 1;
    let table = LutTable::ALL.get(r.get(Field::Table) as usize).copied();
    let payload = op == shm::OP_VALIDATE_PAYLOAD;
    let set = |r: &mut Region, i: usize, answer| {
        r.set_entry(i, answer);
        true
    };
    match (op, table) {
        (shm::OP_RECORDS, _) => records(lib, r, span, cut),
        (shm::OP_LUT, Some(t)) if lib.has_lut_batch() => {
            lut_batch(lib, r, arena, sc, t, span, single);
        }
        (shm::OP_LUT, t) => stepped(r, span, false, |r, i, _| {
            let Some(t) = t else {
                let e = arena.put(r.areas().arena, "worker: unknown LUT table index");
                return set(r, i, (shm::CODE_ERROR, e));
            };
            let ord = word(r, i);
            let (arena_, texts) = (&mut *arena, r.areas().arena);
            let put = |why: &CStr| refusal(arena_, texts, why);
            let answer = match lib.lut_with(t, ord, put) {
                Status::Ok(Ok(w)) => (shm::CODE_WIRE, w),
                Status::Ok(Err(offset)) => (shm::CODE_REFUSED, offset),
                Status::Unsupported => (shm::CODE_UNSUPPORTED, 0),
                Status::Error(e) => (shm::CODE_ERROR, arena.put(r.areas().arena, &e)),
            };
            set(r, i, answer)
        }),
        // One batch call, or (re-running one that crashed or hung) one per entry.
        _ if lib.has_batch(payload) => stepped(r, span, !single, |r, i, end| {
            let status = {
                let a = r.areas();
                lib.validate_batch(payload, &a.inputs[i * 64..end * 64], &mut a.codes[i..end])
            };
            for k in i..end {
                if batch_answered(r, arena, k, &status) {
                    reserve(r, arena, k);
                }
            }
            true
        }),
        _ => stepped(r, span, false, |r, i, _| {
            let answer = match lib.validate_code(payload, &r.areas().inputs[i * 64..i * 64 + 64]) {
                Status::Ok(VerdictCode::Id(id)) => (id, 0),
                Status::Ok(VerdictCode::Named(s)) => {
                    (shm::CODE_NAMED, arena.put(r.areas().arena, &s))
                }
                Status::Unsupported => (shm::CODE_UNSUPPORTED, 0),
                Status::Error(e) => (shm::CODE_ERROR, arena.put(r.areas().arena, &e)),
            };
            set(r, i, answer)
        }),
    }
}

/// Request records `span`, one stamped call each; stops early (`full`)
/// when the next answer does not fit.
fn records(lib: &SubjectLib, r: &mut Region, span: (usize, usize), cut: bool) {
    let mut used = 0usize;
    stepped(r, span, false, |r, i, _| {
        let at = word(r, i);
        let answer = match shm::record(r.areas().requests, at as usize) {
            Some(rec) => lib.answer_record(rec),
            None => Err("bad request record".into()),
        };
        let mut rec = put_answer(&answer);
        if rec.len() > MAX_LINE {
            rec = put_answer(&Err(format!("answer longer than {MAX_LINE} bytes")));
        }
        if cut {
            rec.pop();
        }
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let Some(off) = shm::put_record(r.areas().answers, &mut used, Some(index), &[&rec]) else {
            r.set(Field::Full, 1);
            return false;
        };
        r.set_entry(i, (shm::CODE_RECORD, off));
        true
    });
}
