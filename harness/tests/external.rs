//! The tpb-subject/1 client against real subjects: the C example (through the
//! `lib:` worker) and the Python example (a `cmd:` process), and misbehaving
//! variants of both (crash, hang, garbage). The gate-level tests are in
//! `gate_subjects.rs`.

mod common;
mod subjects;

use common::{bundle_with, BIN};
use std::path::Path;
use std::time::{Duration, Instant};
use subjects::*;
use tpbconform::external::{self, Answer, Client, Reply, Request};
use tpbconform::generation::Generation;
use tpbconform::subjects::{LutTable, SubjectSpec, Validator};

const TIMEOUT: Duration = Duration::from_secs(10);

fn start(spec: &str, timeout: Duration) -> Client {
    let s: SubjectSpec = spec.parse().expect("spec");
    external::start(&s, Path::new(BIN), Generation::V2, timeout)
        .unwrap_or_else(|e| panic!("start {spec}: {e}"))
}

/// A valid CUSTOM_OP header (SPEC §3: num_payloads 3, function 0, 1 argument,
/// no scratch) and payload (SPEC §4: arg_type 0x01 TENSOR, some AP bytes).
fn valid_header() -> [u8; 64] {
    bundle_with(&[(0, 0x85), (1, 0x10), (0x0C, 3), (0x0F, 1)])
}

fn valid_payload() -> [u8; 64] {
    let mut b = bundle_with(&[(0, 0x86), (1, 0x10), (0x0F, 1)]);
    for (i, x) in b[0x10..].iter_mut().enumerate() {
        *x = i as u8;
    }
    b
}

/// Hand-derived verdicts from SPEC §3/§4 (with FACTS §1 v2 roster and the
/// FACTS §2 events rule), one or more per predicate.
fn pinned() -> Vec<(Request, Option<&'static str>)> {
    let h = valid_header();
    let p = valid_payload();
    let with = |mut b: [u8; 64], i: usize, v: u8| {
        b[i] = v;
        b
    };
    let mut scratch_ok = h;
    scratch_ok[0x10] = 1;
    scratch_ok[0x18] = 1;
    scratch_ok[0x1C] = 1;
    // (a header or a payload, the byte set on the valid one, its value, the verdict)
    #[rustfmt::skip]
    let rows: [(bool, usize, u8, Option<&'static str>); 18] = [
        (true, 0, 0xFF, Some("valid_opcode")),
        (true, 0, 0x06, Some("valid_opcode")), // v3+ only
        (true, 1, 0x11, Some("inst_word_len")),
        (true, 4, 0x08, Some("has_valid_neuron_events")),
        (true, 4, 0x0E, None),
        (true, 6, 0x99, None),
        (true, 6, 0xFF, Some("has_valid_neuron_events")),
        (true, 0, 0x86, Some("is_custom_op_header_opcode")),
        (true, 0x3F, 1, Some("custom_op_header_reserved_zero")),
        (true, 0x11, 1, Some("custom_op_header_reserved_zero")),
        (true, 0x14, 1, Some("custom_op_header_scratch_space_val")),
        (true, 0x10, 1, Some("custom_op_header_scratch_space_val")),
        (true, 2, 0xAB, None), // debug bytes are not read
        (false, 0x0F, 0, None), // arg_type not validated
        (false, 0, 0x85, Some("is_custom_op_payload_opcode")),
        (false, 0x0E, 1, Some("custom_op_payload_reserved_zero")),
        (false, 0x0C, 1, Some("custom_op_payload_reserved_zero")),
        (false, 6, 0x10, Some("has_valid_neuron_events")),
    ];
    let mut out = vec![
        (Request::Validate(Validator::Header, h), None),
        (Request::Validate(Validator::Header, scratch_ok), None),
        (Request::Validate(Validator::Payload, p), None),
    ];
    out.extend(rows.map(|(header, at, v, verdict)| {
        let req = if header {
            Request::Validate(Validator::Header, with(h, at, v))
        } else {
            Request::Validate(Validator::Payload, with(p, at, v))
        };
        (req, verdict)
    }));
    out
}

/// Deterministic mixed inputs: valid images with 0..3 byte mutations, and
/// uniform bytes; the last byte is never 0xEE (the misbehaving trigger).
fn mixed(n: usize) -> Vec<Request> {
    let mut r = tpbconform::generators::SplitMix64(0x9E37_79B9_7F4A_7C15);
    let mut next = move || r.next_u64();
    (0..n)
        .map(|i| {
            let mut b = if i % 2 == 0 {
                valid_header()
            } else {
                valid_payload()
            };
            if i % 5 == 4 {
                for x in b.iter_mut() {
                    *x = next() as u8;
                }
            } else {
                for _ in 0..(next() % 4) {
                    let at = (next() % 64) as usize;
                    b[at] = [0, 1, 0x10, 0x85, 0x86, 0xFF][(next() % 6) as usize];
                }
            }
            if b[63] == 0xEE {
                b[63] = 0;
            }
            if next() % 2 == 0 {
                Request::Validate(Validator::Header, b)
            } else {
                Request::Validate(Validator::Payload, b)
            }
        })
        .collect()
}

fn verdicts(r: Vec<Reply>) -> Vec<Option<String>> {
    r.into_iter()
        .map(|a| match a {
            Ok(Answer::Verdict(v)) => v,
            other => panic!("expected a verdict, got {other:?}"),
        })
        .collect()
}

#[test]
fn both_examples_say_hello_and_match_the_pinned_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    for spec in both_examples(dir.path()) {
        let mut s = start(&spec, TIMEOUT);
        assert_eq!(s.hello().protocol, 1);
        assert_eq!(
            s.hello().ops.ops(),
            ["validate_header", "validate_payload", "validate_stream"]
        );
        assert!(s.hello().name.starts_with("example-"), "{}", s.hello().name);
        let (reqs, want): (Vec<_>, Vec<_>) = pinned().into_iter().unzip();
        let got = verdicts(s.call_batch(&reqs));
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.as_deref(), *w, "{spec}: case {i} {:?}", reqs[i]);
        }
        // An op the hello did not declare is unsupported without a round trip.
        let lut = Request::Lut {
            table: LutTable::AluOp,
            input: 4,
        };
        assert_eq!(s.call(&lut), Ok(Answer::Unsupported));
        assert_eq!(s.supervisor().restarts(), 0);
    }
}

#[test]
fn lib_and_cmd_examples_agree_on_many_pipelined_cases() {
    let dir = tempfile::tempdir().unwrap();
    let lib = c_example(dir.path(), false);
    let reqs = mixed(3000);
    let mut c = start(&format!("lib:{}", lib.display()), TIMEOUT);
    let mut py = start(&python_spec(""), TIMEOUT);
    let t = Instant::now();
    let a = verdicts(c.call_batch(&reqs));
    let lib_rate = reqs.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    let b = verdicts(py.call_batch(&reqs));
    let cmd_rate = reqs.len() as f64 / t.elapsed().as_secs_f64();
    eprintln!("lib {lib_rate:.0} cases/s, cmd (python) {cmd_rate:.0} cases/s");
    assert_eq!(a, b);
    // The inputs exercise every outcome, not just one.
    for want in [
        None,
        Some("valid_opcode"),
        Some("inst_word_len"),
        Some("has_valid_neuron_events"),
        Some("custom_op_header_reserved_zero"),
        Some("custom_op_payload_reserved_zero"),
    ] {
        assert!(a.iter().any(|v| v.as_deref() == want), "no {want:?}");
    }
}

#[test]
fn a_generation_the_subject_lacks_declares_no_ops() {
    let dir = tempfile::tempdir().unwrap();
    for spec in both_examples(dir.path()) {
        let s: SubjectSpec = spec.parse().unwrap();
        let mut p = external::start(&s, Path::new(BIN), Generation::V3, TIMEOUT).unwrap();
        assert!(p.hello().ops.is_empty(), "{spec}");
        assert_eq!(
            p.call(&Request::Validate(Validator::Header, valid_header())),
            Ok(Answer::Unsupported)
        );
    }
}

#[test]
fn planted_bugs_change_exactly_the_planted_predicate() {
    let dir = tempfile::tempdir().unwrap();
    let good = c_example(dir.path(), false);
    let bad = c_example(dir.path(), true);
    let mut h = valid_header();
    h[0x3F] = 1;
    let mut p = valid_payload();
    p[0x0E] = 1;
    let reqs = [
        Request::Validate(Validator::Header, h),
        Request::Validate(Validator::Payload, p),
    ];
    let run = |spec: &str| verdicts(start(spec, TIMEOUT).call_batch(&reqs));
    let want = vec![
        Some("custom_op_header_reserved_zero".to_string()),
        Some("custom_op_payload_reserved_zero".to_string()),
    ];
    assert_eq!(run(&format!("lib:{}", good.display())), want);
    assert_eq!(run(&python_spec("")), want);
    // C: the payload check forgets byte 0x0E; Python: the header forgets 0x3F.
    assert_eq!(
        run(&format!("lib:{}", bad.display())),
        vec![want[0].clone(), None]
    );
    assert_eq!(
        run(&python_spec("--planted-bug")),
        vec![None, want[1].clone()]
    );
}

/// Runs `mixed(40)` with two trigger inputs (last byte 0xEE) at 7 and 23
/// through `spec` and checks that exactly those two are faults of `class`,
/// every other request is answered like the well-behaved example, and the
/// subject was restarted twice.
fn faults_are_isolated(spec: &str, class: &str, timeout: Duration, stderr_mark: &str) {
    let mut reqs = mixed(40);
    for at in [7, 23] {
        let mut h = valid_header();
        h[63] = 0xEE;
        reqs[at] = Request::Validate(Validator::Header, h);
    }
    let mut good = start(&python_spec(""), TIMEOUT);
    let want = good.call_batch(&reqs);
    let mut s = start(spec, timeout);
    let got = s.call_batch(&reqs);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if i == 7 || i == 23 {
            let f = g.as_ref().expect_err("a fault");
            assert_eq!(class_of(f), class, "{spec}: case {i}: {f}");
        } else {
            assert_eq!(g, w, "{spec}: case {i}");
        }
    }
    // A `lib:` worker is restarted after a crash or hang; a library error
    // (an answer) leaves it running.
    let restarts = if spec.starts_with("lib:") && class == "protocol" {
        0
    } else {
        2
    };
    assert_eq!(s.supervisor().restarts(), restarts, "{spec}");
    assert!(given_up(s.supervisor()).is_none());
    let tail = s.supervisor().stderr_tail().join("\n");
    assert!(tail.contains(stderr_mark), "{spec}: stderr tail {tail:?}");
    // The restarted subject still works.
    assert_eq!(s.call(&reqs[0]), want[0]);
}

/// [`faults_are_isolated`] for the Python misbehaver in `py_mode` (its stderr names the
/// input: `{py_mode} on id`) and for the C one built with `define`.
fn python_and_library_faults(py_mode: &str, define: &str, class: &str, timeout: Duration) {
    let says = format!("{py_mode} on id");
    faults_are_isolated(&misbehave_py(py_mode), class, timeout, &says);
    let dir = tempfile::tempdir().unwrap();
    let lib = misbehave_lib(dir.path(), py_mode, &[define]);
    faults_are_isolated(&lib, class, timeout, "");
}

#[test]
fn crashing_subjects_are_restarted_and_name_the_input() {
    python_and_library_faults("crash", "MISBEHAVE_CRASH", "crash", TIMEOUT);
}

#[test]
fn hanging_subjects_time_out_and_are_restarted() {
    let t = Duration::from_millis(700);
    python_and_library_faults("hang", "MISBEHAVE_HANG", "timeout", t);
}

#[test]
fn garbage_and_library_errors_are_protocol_faults() {
    python_and_library_faults("garbage", "MISBEHAVE_ERROR", "protocol", TIMEOUT);
}

/// An answer line over the 1 MiB limit is a `protocol` fault (docs/subject-protocol.md
/// "Faults") as soon as the limit is passed, even when no newline ever follows: before, the
/// reader skipped to a newline first, so a subject that then hung was a `timeout` after the
/// whole case timeout.
#[test]
fn an_over_long_answer_line_is_a_protocol_fault_at_once() {
    let t0 = Instant::now();
    faults_are_isolated(
        &misbehave_py("long-line"),
        "protocol",
        TIMEOUT,
        "long-line on id",
    );
    assert!(t0.elapsed() < 2 * TIMEOUT, "{:?}", t0.elapsed());
}

/// A `cmd:` subject that exits after answering, with no request unanswered, was working on
/// no input (docs/subject-protocol.md "Faults"): the next request goes to a new process and is
/// answered there, none is blamed. Before, the next request was written to the exited process
/// and filed as its crash ("exited with status 0 before answering").
#[test]
fn a_subject_that_exits_between_requests_blames_no_input() {
    let mut trigger = valid_header();
    trigger[63] = 0xEE;
    let (first, next) = (
        Request::Validate(Validator::Header, trigger),
        Request::Validate(Validator::Payload, valid_payload()),
    );
    let mut good = start(&python_spec(""), TIMEOUT);
    let want = (good.call(&first), good.call(&next));
    let mut s = start(&misbehave_py("exit-after"), TIMEOUT);
    assert_eq!(s.call(&first), want.0);
    // Let it exit (it does at once, after flushing that answer).
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(s.call(&next), want.1, "the request after the exit");
    assert_eq!(s.supervisor().restarts(), 1);
    assert!(given_up(s.supervisor()).is_none());
    let tail = s.supervisor().stderr_tail().join("\n");
    assert!(tail.contains("exit-after on id 1"), "{tail:?}");
}

/// A restart that answers another hello gives the subject up, and the reason shows both hellos
/// as the protocol writes them (docs/subject-protocol.md "The protocol"). Before, it showed the
/// Rust debug text of the parsed hello (`ops: Capabilities(1)`).
#[test]
fn a_changed_hello_is_reported_in_protocol_terms() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("started");
    // The first start declares validate_header, every later one validate_payload; each
    // answers the hello, then exits on the first request (a crash: the process restarts).
    let spec = format!(
        r#"cmd:if [ -e {f} ]; then op=validate_payload; else : > {f}; op=validate_header; fi; read l; echo '{{"protocol":1,"name":"x","ops":["'$op'"]}}'; read l; exit 3"#,
        f = seen.display()
    );
    let mut s = start(&spec, TIMEOUT);
    let got = s.call(&Request::Validate(Validator::Header, valid_header()));
    assert!(matches!(&got, Err(f) if class_of(f) == "crash"), "{got:?}");
    let _ = s.call(&Request::Validate(Validator::Header, valid_header()));
    let why = given_up(s.supervisor()).unwrap_or_default().to_string();
    let want = r#"changed its hello from {"protocol":1,"name":"x","ops":["validate_header"]} to {"protocol":1,"name":"x","ops":["validate_payload"]}"#;
    assert!(why.contains(want), "{why}");
}

#[test]
fn subjects_that_cannot_start_say_why() {
    let cases = [
        ("cmd:echo starting >&2; exit 3", "exited with status 3"),
        ("cmd:echo not json", "bad hello answer"),
        // A bad hello from a subject that keeps running: the harness ends it, and says so
        // rather than blaming a signal on the subject (issue 32).
        (
            "cmd:echo not json; cat >/dev/null",
            "; the harness ended the subject: a subject must answer the hello line first",
        ),
        (
            r#"cmd:echo '{"protocol":2,"name":"x","ops":[]}'; cat >/dev/null"#,
            "protocol 2",
        ),
        ("lib:/nonexistent/libx.so", "cannot load"),
    ];
    for (spec, want) in cases {
        let s: SubjectSpec = spec.parse().unwrap();
        let e = external::start(&s, Path::new(BIN), Generation::V2, Duration::from_secs(5))
            .err()
            .unwrap_or_else(|| panic!("{spec} started"));
        assert!(e.contains(want), "{spec}: {e}");
        assert!(!e.contains("killed by signal"), "{spec}: {e}");
    }
    // Its stderr is part of the message.
    let s: SubjectSpec = "cmd:echo starting >&2; exit 3".parse().unwrap();
    let e = external::start(&s, Path::new(BIN), Generation::V2, TIMEOUT)
        .err()
        .unwrap();
    assert!(e.contains("starting"), "{e}");
}

#[test]
fn a_subject_that_cannot_restart_is_given_up_and_every_later_case_faults() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    // Starts once; every later start fails.
    let spec = format!(
        "cmd:test -e {m} && exit 1; touch {m}; exec python3 {f} crash",
        m = marker.display(),
        f = fixture("misbehave.py").display()
    );
    let mut reqs = mixed(10);
    let mut h = valid_header();
    h[63] = 0xEE;
    reqs[3] = Request::Validate(Validator::Header, h);
    let mut s = start(&spec, TIMEOUT);
    let got = s.call_batch(&reqs);
    assert!(got[..3].iter().all(|r| r.is_ok()));
    assert_eq!(got[3].as_ref().map_err(class_of), Err("crash"));
    for r in &got[4..] {
        assert_eq!(r.as_ref().map_err(class_of), Err("not sent"));
    }
    assert!(got[4]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("given up"));
    assert!(given_up(s.supervisor()).is_some());
}

#[test]
fn worker_rejects_non_lib_specs() {
    let o = std::process::Command::new(BIN)
        .args(["subject-worker", "cmd:true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// Sends 30 requests that make `spec` fault (last byte 0xEE for the
/// misbehave fixtures; any request for hostile.py) and checks the subject
/// is given up after exactly K faults of `class`, the rest are not sent,
/// it was restarted K - 1 times (not once per request), and the reason
/// names the first faulting input.
fn given_up_after_k(spec: &str, class: &str, timeout: Duration) {
    use tpbconform::external::supervisor::{GIVE_UP_AFTER, GIVE_UP_AFTER_TIMEOUTS};
    let k = if class == "timeout" {
        GIVE_UP_AFTER_TIMEOUTS
    } else {
        GIVE_UP_AFTER
    } as usize;
    let reqs: Vec<Request> = (0..30u8)
        .map(|i| {
            let mut h = valid_header();
            h[62] = i;
            h[63] = 0xEE;
            Request::Validate(Validator::Header, h)
        })
        .collect();
    let mut s = start(spec, timeout);
    let t0 = Instant::now();
    let got = s.call_batch(&reqs);
    let took = t0.elapsed();
    for (i, g) in got.iter().enumerate() {
        let f = g.as_ref().expect_err("every request faults");
        let want = if i < k { class } else { "not sent" };
        assert_eq!(class_of(f), want, "{spec}: request {i}: {f}");
    }
    let why = given_up(s.supervisor()).unwrap_or_else(|| panic!("{spec}: not given up"));
    assert!(
        why.contains(&tpbconform::subjects::hex(&match reqs[0] {
            Request::Validate(Validator::Header, b) => b,
            _ => unreachable!(),
        })),
        "{spec}: {why}"
    );
    let restarts = if spec.starts_with("lib:") && class == "protocol" {
        0
    } else {
        k as u64 - 1
    };
    assert_eq!(s.supervisor().restarts(), restarts, "{spec}");
    assert!(
        took < timeout * (k as u32) + Duration::from_secs(10),
        "{spec}: {took:?}"
    );
    // Given up: later calls are not sent either, and cost nothing.
    let t1 = Instant::now();
    let f = s.call(&reqs[0]).unwrap_err();
    assert_eq!(class_of(&f), "not sent", "{spec}");
    assert!(t1.elapsed() < Duration::from_millis(100));
}

#[test]
fn a_subject_that_faults_on_every_input_is_given_up_after_k_faults() {
    given_up_after_k(&hostile_py("segv", None), "crash", TIMEOUT);
    given_up_after_k(&hostile_py("exit", None), "crash", TIMEOUT);
    given_up_after_k(&hostile_py("garbage", None), "protocol", TIMEOUT);
    given_up_after_k(&hostile_py("wrong-id", None), "protocol", TIMEOUT);
    let quick = Duration::from_millis(400);
    given_up_after_k(&hostile_py("deaf", None), "timeout", quick);
    // The lib: worker: a library that crashes or errs on every input.
    let dir = tempfile::tempdir().unwrap();
    for (def, class) in [
        ("MISBEHAVE_CRASH", "crash"),
        ("MISBEHAVE_ERROR", "protocol"),
    ] {
        given_up_after_k(&misbehave_lib(dir.path(), def, &[def]), class, TIMEOUT);
    }
}

#[test]
fn children_holding_the_pipe_are_killed_with_the_subject() {
    let dir = tempfile::tempdir().unwrap();
    for mode in ["fork", "setsid"] {
        let pids = dir.path().join(mode);
        let mut s = start(&hostile_py(mode, Some(&pids)), TIMEOUT);
        let t0 = Instant::now();
        let f = s
            .call(&Request::Validate(Validator::Header, valid_header()))
            .unwrap_err();
        // The crash is seen when the process exits, although its child
        // still holds stdout open (no EOF): not a timeout.
        assert_eq!(class_of(&f), "crash", "{mode}: {f}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{mode}");
        drop(s);
        let children = pids_in(&pids);
        assert!(!children.is_empty(), "{mode}: the fixture forked");
        std::thread::sleep(Duration::from_millis(200));
        for pid in children {
            assert!(!alive(pid), "{mode}: child {pid} outlived the subject");
        }
    }
}
