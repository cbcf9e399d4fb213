//! The `batch64` framing of `cmd:` subjects (docs/subject-protocol.md
//! "Batch framing"): a second instance answering validator frames of raw
//! bundles with `u16` verdict ids. A wrong answer frame is a protocol fault
//! on each record; after a crash or timeout the JSON lines name the input.

use super::process::{describe_exit, Output};
use super::supervisor::Supervisor;
use crate::strict_json::Json;
use crate::subjects::Fault;
use crate::subjects::{Capability, Validator};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::ChildStdin;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

pub const BATCH64: &str = "batch64";
/// Records per frame the harness sends at most.
pub const MAX_RECORDS: usize = 8192;
/// Frame ops: SPEC §3 header, §4 payload validator.
pub const FRAME_VALIDATE_HEADER: u8 = 1;
pub const FRAME_VALIDATE_PAYLOAD: u8 = 2;

pub fn hello_line(arch: &str) -> String {
    format!(
        r#"{{"op":"hello","protocol":{},"arch":"{arch}","framing":"{BATCH64}"}}"#,
        super::protocol::PROTOCOL
    )
}

pub fn encode_frame(seq: u32, op: u8, bundles: &[[u8; 64]]) -> Vec<u8> {
    let n = u32::try_from(bundles.len()).unwrap_or(u32::MAX);
    let mut f = Vec::with_capacity(12 + 64 * bundles.len());
    f.extend_from_slice(&seq.to_le_bytes());
    f.extend_from_slice(&n.to_le_bytes());
    f.extend_from_slice(&[op, 0, 0, 0]);
    for b in bundles {
        f.extend_from_slice(b);
    }
    f
}

enum Event {
    Hello(String),
    Frame { seq: u32, ids: Vec<u16> },
    Bad(String),
    Eof,
}

fn write_loop(stdin: ChildStdin, from: Receiver<Vec<u8>>) {
    let mut w = stdin;
    while let Ok(buf) = from.recv() {
        if w.write_all(&buf).and_then(|()| w.flush()).is_err() {
            return;
        }
    }
}

fn read_loop(out: Output, tx: Sender<Event>) {
    let _ = tx.send(read_frames(&mut BufReader::new(out), &tx).unwrap_or(Event::Eof));
}

/// The hello line, then answer frames, up to the last event.
fn read_frames(r: &mut impl BufRead, tx: &Sender<Event>) -> std::io::Result<Event> {
    let mut line = Vec::new();
    r.take(1 << 16).read_until(b'\n', &mut line)?;
    if line.pop() != Some(b'\n') {
        return Ok(Event::Eof);
    }
    let _ = tx.send(Event::Hello(String::from_utf8_lossy(&line).into_owned()));
    loop {
        let mut h = [0u8; 8];
        r.read_exact(&mut h)?;
        let seq = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let n = u32::from_le_bytes([h[4], h[5], h[6], h[7]]) as usize;
        if n > MAX_RECORDS {
            return Ok(Event::Bad(format!(
                "answer frame announces {n} records (at most {MAX_RECORDS} are ever sent)"
            )));
        }
        let mut body = vec![0u8; 2 * n];
        r.read_exact(&mut body)?;
        let ids = body
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        if tx.send(Event::Frame { seq, ids }).is_err() {
            return Ok(Event::Eof);
        }
    }
}

type Running = super::process::Running<Vec<u8>, Event>;
use super::process::Ring;

/// The batch instance of a `cmd:` subject; its own [`Supervisor`] (on the
/// JSON lines' stderr ring) gives the framing up per validator, the JSON
/// lines then carrying it.
pub struct BatchProcess {
    command: String,
    arch: String,
    timeout: Duration,
    running: Option<Running>,
    seq: u32,
    sup: Supervisor,
    hello: Value,
}

fn spawn(
    command: &str,
    arch: &str,
    timeout: Duration,
    ring: &Ring,
) -> Result<(Running, Value), String> {
    let mut run = Running::spawn(command, ring, write_loop, read_loop)?;
    let mut hello = hello_line(arch);
    hello.push('\n');
    let line = match run.hello(hello.into_bytes(), timeout, Event::Eof) {
        Ok(Event::Hello(l)) => l,
        _ => {
            let st = run.kill();
            return Err(format!("no batch64 hello answer ({})", describe_exit(st)));
        }
    };
    match crate::strict_json::parse(&line) {
        Ok(v) if v.get("framing").and_then(Json::as_str) == Some(BATCH64) => {
            Ok((run, v.to_value()))
        }
        _ => {
            run.kill();
            Err(format!("hello answer does not switch to {BATCH64}: {line}"))
        }
    }
}

impl BatchProcess {
    pub fn start(
        command: &str,
        arch: &str,
        timeout: Duration,
        stderr: Ring,
    ) -> Result<BatchProcess, String> {
        let (running, hello) = spawn(command, arch, timeout, &stderr)?;
        let mut sup = Supervisor::default();
        sup.stderr = stderr;
        Ok(BatchProcess {
            command: command.to_string(),
            arch: arch.to_string(),
            timeout,
            running: Some(running),
            seq: 0,
            sup,
            hello,
        })
    }

    pub fn usable(&self, v: Validator) -> bool {
        self.sup.given_up_on(Capability::of_validator(v)).is_none()
    }

    /// One frame of `v` (at most [`MAX_RECORDS`]), its ids. A protocol
    /// `Err`: a finding on each record; others: the records not judged.
    pub fn run(&mut self, v: Validator, bundles: &[[u8; 64]]) -> Result<Vec<u16>, Fault> {
        let cap = Capability::of_validator(v);
        if self.running.is_none() {
            let (command, arch, timeout) = (&self.command, &self.arch, self.timeout);
            let ring = self.sup.stderr_ring();
            self.running = self.sup.restart(
                &self.hello,
                || spawn(command, arch, timeout, &ring),
                |r| _ = r.kill(),
            );
        }
        let r = self.frame(v, bundles);
        let input = || format!("a frame of {} bundles", bundles.len());
        self.sup.count(cap, r.as_ref().err().map(|f| (f, input())));
        if r.is_err() {
            self.running.take().map(Running::kill);
        }
        r
    }

    fn frame(&mut self, v: Validator, bundles: &[[u8; 64]]) -> Result<Vec<u16>, Fault> {
        let Some(run) = self.running.as_mut() else {
            return Err(Fault::Crash("batch instance not running".into()));
        };
        self.seq = self.seq.wrapping_add(1);
        let (seq, timeout) = (self.seq, self.timeout);
        let op = FRAME_VALIDATE_HEADER + u8::from(v == Validator::Payload);
        if !run.send(encode_frame(seq, op, bundles)) {
            return Err(Fault::Crash("batch instance gone".into()));
        }
        let bad = match run.wait(timeout, Event::Eof) {
            Ok(Event::Frame { seq: s, .. }) if s != seq => {
                format!("batch answer frame has seq {s}, expected {seq} (out of order)")
            }
            Ok(Event::Frame { ids, .. }) if ids.len() != bundles.len() => format!(
                "batch answer frame has {} records for {} bundles",
                ids.len(),
                bundles.len()
            ),
            Ok(Event::Frame { ids, .. }) => return Ok(ids),
            Ok(Event::Bad(e)) => e,
            Ok(Event::Hello(_)) => "a second hello".into(),
            Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                let st = self.running.take().and_then(Running::kill);
                return Err(Fault::Crash(format!(
                    "{} before answering the frame",
                    describe_exit(st)
                )));
            }
            Err(RecvTimeoutError::Timeout) if crate::interrupt::stop_requested() => {
                return Err(Fault::NotSent("interrupted".into()))
            }
            Err(RecvTimeoutError::Timeout) => {
                return Err(Fault::Timeout(format!(
                    "no batch answer within {timeout:?}"
                )))
            }
        };
        Err(Fault::Protocol(bad))
    }
}

impl Drop for BatchProcess {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            r.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_hello_have_the_documented_shape() {
        let f = encode_frame(7, FRAME_VALIDATE_PAYLOAD, &[[0xAB; 64], [0xCD; 64]]);
        assert_eq!(&f[..12], &[7, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(f.len(), 12 + 128);
        assert_eq!(f[12], 0xAB);
        assert_eq!(f[76], 0xCD);
        assert_eq!(
            hello_line("v2"),
            r#"{"op":"hello","protocol":1,"arch":"v2","framing":"batch64"}"#
        );
        let hello = |framings: &str| {
            super::super::protocol::parse_hello(&format!(
                r#"{{"protocol":1,"name":"x","ops":[],"framings":{framings}}}"#
            ))
        };
        assert_eq!(
            hello(r#"["batch64","future"]"#).map(|h| h.framings),
            Ok(vec!["batch64".to_string(), "future".to_string()])
        );
        assert!(hello(r#""batch64""#).is_err());
        assert!(hello("[1]").is_err());
    }
}
