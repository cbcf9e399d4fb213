//! Exhaustive core-vs-oracle agreement over small, structured input spaces.
//!
//! Every canonical bundle below is written by hand from SPEC §5 (not produced by
//! either implementation). Each test collects all divergences, deduplicated by
//! signature, and fails with one full report (target, predicate/field, input
//! hex, both results) per distinct signature.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tpbconform::generators::SplitMix64;
use tpbconform::judge::{
    group_header, group_payload, Answer, Answers, Class, Divergence, Judge, Outcome,
};
use tpbconform::subjects::{
    registry, Capabilities, DecodeFail, Decoded, IrQuery, LutResult, LutTable, Name, Predicate,
    Reference, Reply, ScratchPadQuery, Subject, Validator, Verdict,
};
use tpbconform::targets::{Check, Target};

// core vs oracle (the reference judge) through each typed entry.
fn compare(t: Target, input: &[u8]) -> Outcome {
    Judge::reference().compare(t, input)
}
fn compare_bundle(t: Target, b: &[u8; 64]) -> Outcome {
    Judge::reference().compare(t, b)
}
fn compare_stream(s: &[u8]) -> Outcome {
    Judge::reference().compare_stream(s)
}
fn compare_lut(t: Target, ord: u32) -> Outcome {
    Judge::reference().compare_lut(t, ord)
}
fn compare_ir(q: &IrQuery) -> Outcome {
    Judge::reference().compare_ir(q)
}

/// The registry target named `n`.
fn t(n: &str) -> Target {
    Target::named(n)
}

// ---------------------------------------------------------------------------
// Divergence collection
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Collector {
    cases: u64,
    by_sig: BTreeMap<String, (u64, Divergence)>,
}

impl Collector {
    fn add(&mut self, o: Outcome) {
        self.cases += 1;
        let o: Outcome = o;
        for d in o {
            let key = format!("{} [{}] {}", d.target, d.class, d.signature);
            self.by_sig.entry(key).or_insert((0, d)).0 += 1;
        }
    }

    fn finish(self, what: &str) {
        if self.by_sig.is_empty() {
            return;
        }
        let mut msg = format!(
            "{what}: {} distinct divergence signature(s) over {} cases\n",
            self.by_sig.len(),
            self.cases
        );
        for (k, (n, d)) in &self.by_sig {
            msg.push_str(&format!("\n=== {k} ({n} case(s)); first:\n{d}\n"));
        }
        panic!("{msg}");
    }
}

fn bundle_targets() -> Vec<Target> {
    Target::all().filter(|t| t.is_bundle()).collect()
}

// ---------------------------------------------------------------------------
// Canonical valid bundles, one per opcode (SPEC §1, §3, §4, §5)
// ---------------------------------------------------------------------------

fn put(b: &mut [u8; 64], off: usize, bytes: &[u8]) {
    b[off..off + bytes.len()].copy_from_slice(bytes);
}

/// Skeleton with inst_word_len 0x10 and a non-trivial, valid sync band.
fn skel(op: u8) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0] = op;
    b[1] = 0x10;
    b[4] = 0x05; // SEM_GE_IMM
    b[5] = 0x03;
    b[6] = 0x01; // increment
    b[7] = 0x07;
    put(&mut b, 8, &0x1234_5678u32.to_le_bytes());
    b
}

fn ramp(b: &mut [u8; 64], off: usize, len: usize, seed: u8) {
    for i in 0..len {
        b[off + i] = seed.wrapping_add((i as u8).wrapping_mul(7)) | 1;
    }
}

fn canonical() -> Vec<(&'static str, [u8; 64])> {
    let mut v = Vec::new();

    // 0x85 header: 2 args, num_payloads 4, function 9, no scratch.
    let mut h = skel(0x85);
    put(&mut h, 0x0C, &4u16.to_le_bytes());
    h[0x0E] = 9;
    h[0x0F] = 2;
    v.push(("0x85 header", h));

    // 0x85 header with a full scratch triple (+ dword[0x14], D-4).
    let mut hs = h;
    hs[0x10] = 0x21;
    put(&mut hs, 0x14, &0xAABB_CCDDu32.to_le_bytes());
    put(&mut hs, 0x18, &0x0000_0100u32.to_le_bytes());
    hs[0x1C] = 0x02;
    v.push(("0x85 header+scratch", hs));

    // 0x86 payload: arg_type + 48-byte AP.
    let mut p = skel(0x86);
    p[0x0F] = 0x01;
    ramp(&mut p, 0x10, 48, 0x10);
    v.push(("0x86 payload", p));

    // 0xD9 CollectiveCompute: add, float32 tag 0x0A, AllToAllV wire 0x09.
    let mut d9 = skel(0xD9);
    put(&mut d9, 0x0C, &[0x04, 0x0A, 0x09]);
    ramp(&mut d9, 0x10, 48, 0x40);
    v.push(("0xD9 CollectiveCompute", d9));

    // 0xDA CollectiveComputeSecondary: raw stamp, inst_word_len 0, channel_id.
    let mut da = [0u8; 64];
    da[0] = 0xDA;
    put(&mut da, 0x04, &0x1234u16.to_le_bytes());
    da[0x0C] = 0x00; // bypass
    da[0x0D] = 0x0F; // float8e5: the highest pre-v4 tag (the subjects run v2, FACTS §6)
    da[0x0E] = 0x05; // Permute
    ramp(&mut da, 0x10, 48, 0x22);
    v.push(("0xDA CollectiveComputeSecondary", da));

    // 0xCB CollectiveSendRecv.
    let mut cb = skel(0xCB);
    put(&mut cb, 0x10, &0x0102_0304_0506_0708u64.to_le_bytes());
    put(&mut cb, 0x30, &0x1111_2222_3333_4444u64.to_le_bytes());
    put(&mut cb, 0x38, &0x0000_0000_0000_0400u64.to_le_bytes());
    v.push(("0xCB CollectiveSendRecv", cb));

    // 0xBF Gpsimdsb2sb.
    let mut bf = skel(0xBF);
    put(&mut bf, 0x0C, &[0x08, 0x0A]);
    ramp(&mut bf, 0x10, 16, 0x31);
    put(&mut bf, 0x20, &[0x01, 0x03]);
    ramp(&mut bf, 0x30, 16, 0x55);
    v.push(("0xBF Gpsimdsb2sb", bf));

    // 0xBE GetSequenceBounds.
    let mut be = skel(0xBE);
    put(&mut be, 0x0C, &[0x0A, 0, 0x01, 0x02]);
    ramp(&mut be, 0x10, 16, 0x13);
    ramp(&mut be, 0x20, 16, 0x77);
    v.push(("0xBE GetSequenceBounds", be));

    // 0xD8 CoreBarrier.
    let mut d8 = skel(0xD8);
    put(&mut d8, 0x0C, &0xCAFE_0001u32.to_le_bytes());
    put(&mut d8, 0x10, &0x0000_0102u32.to_le_bytes());
    ramp(&mut d8, 0x20, 32, 0x09);
    v.push(("0xD8 CoreBarrier", d8));

    // 0xDC GetGlobalRankId.
    let mut dc = skel(0xDC);
    dc[0x0C] = 0x01;
    dc[0x17] = 0x05;
    v.push(("0xDC GetGlobalRankId", dc));

    // 0xDB GetCurProcessingRankID.
    let mut db = skel(0xDB);
    put(&mut db, 0x0C, &0x0102u16.to_le_bytes());
    put(&mut db, 0x0E, &0x0304u16.to_le_bytes());
    put(&mut db, 0x10, &0x0506u16.to_le_bytes());
    db[0x12] = 0x07;
    put(&mut db, 0x14, &0x0809u16.to_le_bytes());
    v.push(("0xDB GetCurProcessingRankID", db));

    // 0xDE TensorCompletion.
    let mut de = skel(0xDE);
    put(&mut de, 0x0C, &0xDEAD_BEEFu32.to_le_bytes());
    de[0x10] = 0x42;
    v.push(("0xDE TensorCompletion", de));

    v
}

/// A subject's verdict as the predicate's name (`None` = valid).
fn v(s: &dyn Subject, which: Validator, b: &[u8; 64]) -> Option<String> {
    s.validate(which, b).unwrap().map(|p| p.name().to_string())
}

fn hex(b: &[u8]) -> String {
    tpbconform::subjects::hex(b)
}

#[test]
fn canonical_bundles_are_encoder_images_in_both() {
    for (name, b) in canonical() {
        if !tpbconform::generation::Generation::default().emits(b[0]) {
            // 0xBE, 0xBF, 0xD8: not emitted by the v2 compiler (seed 003); both refuse.
            for s in [registry::core(), registry::oracle()] {
                let field = s.decode(&b).unwrap().map_err(|e| e.field.to_string());
                assert_eq!(field.map(|_| ()), Err("opcode".to_string()), "{name}");
            }
            continue;
        }
        for s in [registry::core(), registry::oracle()] {
            let d = s.decode(&b).unwrap().unwrap_or_else(|e| {
                panic!("{}: {name} does not decode: {e}\n{}", s.name(), hex(&b))
            });
            let e = s
                .encode(d.opcode, &d.fields)
                .unwrap()
                .unwrap_or_else(|f| panic!("{}: {name} does not re-encode: field {f}", s.name()));
            assert_eq!(
                hex(&e),
                hex(&b),
                "{}: {name} encode(decode(b)) != b",
                s.name()
            );
        }
        match b[0] {
            0x85 => {
                assert_eq!(v(&*registry::core(), Validator::Header, &b), None, "{name}");
                assert_eq!(
                    v(&*registry::oracle(), Validator::Header, &b),
                    None,
                    "{name}"
                );
            }
            0x86 => {
                assert_eq!(
                    v(&*registry::core(), Validator::Payload, &b),
                    None,
                    "{name}"
                );
                assert_eq!(
                    v(&*registry::oracle(), Validator::Payload, &b),
                    None,
                    "{name}"
                );
            }
            _ => {}
        }
    }
}

/// Every bundle target judges each of `bundles` alike on core, the oracle and the subjects.
fn all_agree(what: &str, bundles: impl IntoIterator<Item = [u8; 64]>) {
    let mut c = Collector::default();
    for b in bundles {
        for t in bundle_targets() {
            c.add(compare_bundle(t, &b));
        }
    }
    c.finish(what);
}

#[test]
fn canonical_bundles_agree() {
    all_agree("canonical bundles", canonical().into_iter().map(|(_, b)| b));
}

#[test]
fn all_single_bit_flips_agree() {
    let flips = canonical().into_iter().flat_map(|(_, base)| {
        (0..512).map(move |bit| {
            let mut b = base;
            b[bit / 8] ^= 1 << (bit % 8);
            b
        })
    });
    all_agree("single-bit flips of the canonical bundles", flips);
}

#[test]
fn all_byte_values_agree() {
    let mut bases = canonical();
    bases.push(("zero", [0u8; 64]));
    let values = bases.into_iter().flat_map(|(_, base)| {
        (0..64).flat_map(move |off| {
            (0..=255u8).map(move |v| {
                let mut b = base;
                b[off] = v;
                b
            })
        })
    });
    all_agree(
        "all 256 values of each byte of the canonical bundles",
        values,
    );
}

#[test]
fn byte_value_pairs_in_the_header_agree() {
    // Every value of byte[0x10] and byte[0x1C] together (scratch triple ends).
    let mut c = Collector::default();
    let (_, h) = canonical()[0];
    for a in 0..=255u8 {
        for z in 0..=255u8 {
            let mut b = h;
            b[0x10] = a;
            b[0x1C] = z;
            c.add(compare_bundle(t("validate_header"), &b));
        }
    }
    c.finish("byte[0x10] x byte[0x1C] pairs");
}

// ---------------------------------------------------------------------------
// The scratch lattice (SPEC §3 predicate 6, D-4)
// ---------------------------------------------------------------------------

#[test]
fn scratch_lattice_agrees_and_matches_spec() {
    let mut c = Collector::default();
    let (_, h) = canonical()[0];
    let b10: [u8; 3] = [0x01, 0x80, 0xFF];
    let d32: [u32; 4] = [0x01, 0x100, 0x8000_0000, 0xFFFF_FFFF];
    let b1c: [u8; 3] = [0x01, 0x7F, 0xFF];
    let mut cases = 0;
    for mask in 0u8..16 {
        let on = |bit: u8| mask & (1 << bit) != 0;
        let v10: &[u8] = if on(0) { &b10 } else { &[0] };
        let v14: &[u32] = if on(1) { &d32 } else { &[0] };
        let v18: &[u32] = if on(2) { &d32 } else { &[0] };
        let v1c: &[u8] = if on(3) { &b1c } else { &[0] };
        for &x10 in v10 {
            for &d14 in v14 {
                for &d18 in v18 {
                    for &x1c in v1c {
                        let mut b = h;
                        b[0x10] = x10;
                        put(&mut b, 0x14, &d14.to_le_bytes());
                        put(&mut b, 0x18, &d18.to_le_bytes());
                        b[0x1C] = x1c;
                        cases += 1;
                        for t in [t("validate_header"), t("decode_any"), t("roundtrip")] {
                            c.add(compare_bundle(t, &b));
                        }
                        // SPEC §3 (6): all-zero, or byte10 & dword18 & byte1c all nonzero.
                        let expect = if mask == 0 || mask & 0b1101 == 0b1101 {
                            None
                        } else {
                            Some("custom_op_header_scratch_space_val")
                        };
                        assert_eq!(
                            v(&*registry::core(), Validator::Header, &b).as_deref(),
                            expect,
                            "core, scratch mask {mask:04b}: {}",
                            hex(&b)
                        );
                    }
                }
            }
        }
    }
    assert!(cases >= 16 * 3, "{cases}");
    c.finish("scratch lattice");
}

// ---------------------------------------------------------------------------
// LUTs
// ---------------------------------------------------------------------------

const LARGE: [u32; 8] = [
    256,
    257,
    0xFFFF,
    0x1_0000,
    0x7FFF_FFFF,
    0x8000_0000,
    u32::MAX - 1,
    u32::MAX,
];

#[test]
fn every_lut_input_agrees() {
    let mut c = Collector::default();
    let luts: Vec<Target> = Target::all()
        .filter(|t| matches!(t.check(), tpbconform::targets::Check::Lut(_)))
        .collect();
    assert_eq!(luts.len(), 8, "one LUT target per SPEC §6 table");
    for t in luts {
        for ord in (0..=255u32).chain(LARGE) {
            c.add(compare_lut(t, ord));
        }
        // The raw-input mapping too: 0..=1-byte inputs and a 4-byte u32::MAX.
        c.add(compare(t, &[]));
        c.add(compare(t, &[0xFF; 4]));
    }
    c.finish("LUT inputs");
}

#[test]
fn collective_wire_bytes_match_spec_6_1() {
    // Hand-written from SPEC §6.1.
    let expect: [(u32, Result<u8, &str>); 12] = [
        (0, Err("not_encodable")),
        (1, Err("not_encodable")),
        (2, Ok(0x01)),
        (3, Ok(0x02)),
        (4, Ok(0x03)),
        (5, Ok(0x04)),
        (6, Ok(0x09)),
        (7, Ok(0x05)),
        (8, Ok(0x06)),
        (9, Ok(0x07)),
        (10, Ok(0x08)),
        (11, Err("out_of_range")),
    ];
    for (k, e) in expect {
        for s in [registry::core(), registry::oracle()] {
            let got = s.lut(LutTable::CollectiveKind, k).unwrap();
            let got = got.as_ref().map_err(Name::as_str).copied();
            assert_eq!(got, e, "{} kind {k}", s.name());
        }
    }
}

// ---------------------------------------------------------------------------
// Custom-op group stream parser
// ---------------------------------------------------------------------------

fn cat(parts: &[[u8; 64]]) -> Vec<u8> {
    parts.iter().flat_map(|b| b.iter().copied()).collect()
}

#[test]
fn hand_streams_agree() {
    let h0 = group_header(0, 1);
    let h2 = group_header(2, 1);
    let p = group_payload(0x33);
    let mut other = [0u8; 64];
    other[0] = 0xDE;
    other[1] = 0x10;
    let mut bad_h = h2;
    bad_h[0x20] = 1;
    let mut mismatch = h2;
    mismatch[0x0C] = 5;
    let streams: Vec<Vec<u8>> = vec![
        Vec::new(),
        cat(&[h0, p]),
        cat(&[h2, p, p, p]),
        cat(&[h2, p, p, p, other, h0, p]),
        cat(&[p]),
        cat(&[h2, p, p]),
        cat(&[h2, p, other]),
        cat(&[h0, p, p]),
        cat(&[bad_h, p, p, p]),
        cat(&[mismatch, p, p, p]),
        cat(&[other, other]),
        {
            let mut s = cat(&[h0, p]);
            s.push(0);
            s
        },
        vec![0x86; 63],
        // An open group ended by an invalid header: short_group (at the open
        // header, index 0) vs invalid_record (index 1) — SPEC §5.3 D-10.
        cat(&[h0, bad_h]),
        cat(&[h2, p, mismatch]),
    ];
    let mut c = Collector::default();
    for s in &streams {
        c.add(compare_stream(s));
    }
    c.finish("hand streams");
}

/// The harness's SplitMix64, deterministic.
fn rng(seed: &mut SplitMix64) -> u64 {
    seed.next_u64()
}

#[test]
fn mapped_streams_agree() {
    let mut c = Collector::default();
    let mut seed = SplitMix64(0x5EED_1234_5678_9ABC);
    // All 2-op programs over op kinds 0..8 and params 0..16.
    for op1 in 0..16u8 {
        for p1 in 0..16u8 {
            for op2 in 0..8u8 {
                c.add(compare(t("custom_op_group"), &[0, op1, p1, op2, p1 ^ 3]));
            }
        }
    }
    // Random longer programs.
    for _ in 0..4000 {
        let len = (rng(&mut seed) % 24) as usize;
        let input: Vec<u8> = (0..len).map(|_| rng(&mut seed) as u8).collect();
        c.add(compare(t("custom_op_group"), &input));
    }
    c.finish("mapped streams");
}

// ---------------------------------------------------------------------------
// IR gates
// ---------------------------------------------------------------------------

#[test]
fn ir_gates_agree_on_small_grids() {
    let mut c = Collector::default();
    // checkCustomOp: all lists of length <= 2 over 5 space codes, arch 0..=4.
    let mut lists: Vec<Vec<u8>> = vec![vec![]];
    for a in 0..5u8 {
        lists.push(vec![a]);
        for b in 0..5u8 {
            lists.push(vec![a, b]);
        }
    }
    for args in &lists {
        for outs in &lists {
            for arch in 0..5u8 {
                c.add(compare_ir(&IrQuery::CheckCustomOp {
                    args: args.clone(),
                    outputs: outs.clone(),
                    arch,
                }));
            }
        }
    }
    // isCCHavingSBScratchPad.
    for kind in [0u32, 0x2F, 0x30, 0x31, u32::MAX] {
        for subkind in (0..6u32).chain([u32::MAX, 0x8000_0002]) {
            for g in [false, true] {
                for n_args in 0..3u64 {
                    for n_outputs in 0..3u64 {
                        for n_scratch in 0..8u64 {
                            c.add(compare_ir(&IrQuery::SbScratchpad(ScratchPadQuery {
                                kind,
                                subkind,
                                sb_arg_global: g,
                                n_args,
                                n_outputs,
                                n_scratch,
                            })));
                        }
                    }
                }
            }
        }
    }
    for (a, o, s) in [
        (u64::MAX, 0, u64::MAX),
        (u64::MAX, u64::MAX, u64::MAX),
        (u64::MAX - 2, 0, u64::MAX),
        (u64::MAX - 3, 1, u64::MAX),
        (0, u64::MAX - 2, u64::MAX),
        (u64::MAX, 1, 0),
    ] {
        c.add(compare_ir(&IrQuery::SbScratchpad(ScratchPadQuery {
            kind: 0x30,
            subkind: 2,
            sb_arg_global: true,
            n_args: a,
            n_outputs: o,
            n_scratch: s,
        })));
    }
    for n in (0..=300u32).chain(LARGE) {
        c.add(compare_ir(&IrQuery::CcDim(n)));
        c.add(compare_ir(&IrQuery::RankIdOutput(n)));
        c.add(compare_ir(&IrQuery::Lnc(n)));
    }
    for n in (0..=2100u64).chain([u64::from(u32::MAX), u64::MAX - 1, u64::MAX]) {
        c.add(compare_ir(&IrQuery::Route(n)));
    }
    // The raw-input mapping: every 1- and 2-byte input.
    for a in 0..=255u8 {
        c.add(compare(t("ir_gates"), &[a]));
        for b in 0..=255u8 {
            c.add(compare(t("ir_gates"), &[a, b]));
        }
    }
    c.finish("IR gates");
}

// ---------------------------------------------------------------------------
// Random raw inputs through every target (cheap smoke of the input mappings)
// ---------------------------------------------------------------------------

#[test]
fn random_raw_inputs_agree_on_every_target() {
    let mut c = Collector::default();
    let mut seed = SplitMix64(0xC0FF_EE00_D15E_A5E5);
    let bases = canonical();
    for i in 0..3000 {
        // Mutate a canonical bundle in a few random bytes so decoders get deep.
        let (_, mut b) = bases[i % bases.len()];
        for _ in 0..(rng(&mut seed) % 4) {
            let r = rng(&mut seed);
            b[(r % 64) as usize] = (r >> 8) as u8;
        }
        for t in Target::all().filter(|t| t.check() != Check::Sync) {
            c.add(compare(t, &b));
        }
    }
    c.finish("random raw inputs");
}

// ---------------------------------------------------------------------------
// The engine can fail
// ---------------------------------------------------------------------------

/// `impl Subject for $ty`: named `$name`, the inner subject's capabilities, and the methods
/// given (a test subject that delegates to `self.0` and misbehaves in those).
macro_rules! wraps {
    ($ty:ident, $name:literal, $($methods:tt)*) => {
        impl Subject for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn capabilities(&self) -> Capabilities {
                self.0.capabilities()
            }
            $($methods)*
        }
        impl Reference for $ty {}
    };
}

/// Delegates to `S`, but `validate_header` accepts everything and `cce_lut`
/// returns a wrong byte for ordinal 4.
struct Liar(Box<dyn Subject>);

/// Delegates to `S`, but `decode` panics.
struct Panicky(Box<dyn Subject>);

/// Delegates to `S` but invents a predicate name and declares no LUTs.
struct Inventor(Box<dyn Subject>);

wraps! {
    Liar, "liar",
    fn validate(&self, which: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        match which {
            Validator::Header => Ok(None),
            _ => self.0.validate(which, b),
        }
    }
    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        self.0.decode(b)
    }
    fn lut(&self, table: LutTable, n: u32) -> Reply<LutResult> {
        if table == LutTable::CceOp && n == 4 {
            Ok(Ok(0x05))
        } else {
            self.0.lut(table, n)
        }
    }
}

wraps! {
    Panicky, "panicky",
    fn validate(&self, which: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        self.0.validate(which, b)
    }
    fn decode(&self, _b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        panic!("deliberate panic in decode")
    }
}

impl Subject for Inventor {
    fn name(&self) -> &str {
        "inventor"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&[
            tpbconform::subjects::Capability::ValidateHeader,
            tpbconform::subjects::Capability::ValidatePayload,
        ])
    }
    fn validate(&self, which: Validator, b: &[u8; 64]) -> Reply<Verdict> {
        // The same verdict, spelled as a name the harness does not know.
        self.0
            .validate(which, b)
            .map(|v| v.map(|p| Predicate::Unknown(p.name().to_string())))
    }
}

impl Reference for Inventor {}

#[test]
fn engine_reports_a_wrong_subject() {
    let e = Judge::new(
        Box::new(Liar(registry::core())),
        registry::oracle(),
        Vec::new(),
    );
    let (_, mut h) = canonical()[0];
    h[0x20] = 1; // reserved tail byte
    let o = e.compare(t("validate_header"), &h);
    let d = o.divergence().expect("the liar must be caught");
    assert_eq!(d.class, Class::OverAccept);
    assert_eq!(d.target, t("validate_header"));
    assert_eq!(d.signature.key, "custom_op_header_reserved_zero");
    assert_eq!(d.signature.left, "valid");
    assert_eq!(d.signature.right, "custom_op_header_reserved_zero");
    // Each side's answer as data (what the report's byte map blames, never read back from text).
    assert_eq!(
        d.answers,
        Answers::of(
            Answer::Valid,
            Answer::Rejected {
                reason: "custom_op_header_reserved_zero".into(),
                offset: None
            }
        )
    );
    let text = d.to_string();
    assert!(text.contains("validate_header"), "{text}");
    assert!(text.contains(&hex(&h)), "{text}");
    assert!(text.contains("liar") && text.contains("oracle"), "{text}");

    // The reverse pairing is an UnderAccept.
    let e2 = Judge::new(
        registry::oracle(),
        Box::new(Liar(registry::core())),
        Vec::new(),
    );
    let d2 = e2.compare(t("validate_header"), &h);
    assert_eq!(d2.divergence().map(|d| d.class), Some(Class::UnderAccept));

    // A LUT lie: DifferentOutput at ordinal 4 (through the cce_lut target;
    // alu_lut asks only the alu_op table, where the liar tells the truth).
    assert!(e.compare_lut(t("alu_lut"), 4).is_agree());
    let d3 = e.compare_lut(t("cce_lut"), 4);
    let d3 = d3.divergence().expect("cce lie must be caught");
    assert_eq!(d3.class, Class::DifferentOutput);
    assert_eq!(
        d3.signature.key, "cce_op",
        "a LUT key is its SPEC §6 table name"
    );
    assert_eq!(
        (d3.signature.left.as_str(), d3.signature.right.as_str()),
        ("0x05", "0x04")
    );
    assert!(
        d3.answers.is_empty(),
        "a LUT answer is not about a bundle's bytes"
    );
    // And agreement where the liar tells the truth.
    assert!(e.compare_lut(t("cce_lut"), 0).is_agree());
}

#[test]
fn engine_reports_a_panicking_subject() {
    let e = Judge::new(
        Box::new(Panicky(registry::core())),
        registry::oracle(),
        Vec::new(),
    );
    let (_, b) = canonical()[3];
    for t in [t("decode_any"), t("roundtrip")] {
        let o = e.compare(t, &b);
        let d = o.divergence().expect("a panic must be reported");
        assert_eq!(d.class, Class::Panic, "{d}");
        assert!(d.left.contains("deliberate panic in decode"), "{d}");
        assert_eq!(d.signature.left, "panic");
        assert_eq!(d.signature.right, "no-panic");
        // The side that answered has no answer about the bytes: only the panic is typed.
        assert_eq!(
            (d.answers.left.clone(), d.answers.right.clone()),
            (Some(Answer::Fault("panic".into())), None)
        );
    }
    // Targets that do not call decode still agree.
    assert!(e.compare(t("validate_header"), &b).is_agree());
}

#[test]
fn invented_names_and_missing_capabilities_are_reported() {
    let inventor: Box<dyn Subject> = Box::new(Inventor(registry::core()));
    let e = Judge::new(registry::core(), registry::oracle(), vec![inventor]);
    let (_, valid) = canonical()[0];
    let mut h = valid;
    h[0x20] = 1; // reserved tail byte
                 // The same predicate under a name the harness does not know diverges.
    let (d, o) = header_blame(&e, &h, ("inventor", "core"));
    // A name outside SPEC's vocabulary is a protocol finding naming it (issue 32).
    assert_eq!(d.class, Class::Protocol);
    assert!(
        d.signature.key.contains("`custom_op_header_reserved_zero`"),
        "{}",
        d.signature.key
    );
    assert!(d.left.contains("not a SPEC name"), "{}", d.left);
    assert_eq!(o.divergences().len(), 1);
    assert!(e.compare(t("validate_header"), &valid).is_agree());
    // A target the subject lacks the capability for is skipped and listed.
    assert!(e.compare_lut(t("alu_lut"), 4).is_agree());
    let lacking = e.unsupported(t("alu_lut"));
    assert_eq!(lacking.len(), 1);
    assert_eq!(lacking[0].0, "inventor");
    assert!(e.unsupported(t("validate_header")).is_empty());
}

/// `validate_header` on `h` diverges, first between `pair` (left, right): that divergence and
/// the outcome.
fn header_blame(e: &Judge, h: &[u8; 64], pair: (&str, &str)) -> (Divergence, Outcome) {
    let o = e.compare(t("validate_header"), h);
    let d = o.divergence().expect("a divergence").clone();
    assert_eq!((d.left_name.as_str(), d.right_name.as_str()), pair);
    (d, o)
}

#[test]
fn reference_disagreement_is_not_blamed_on_a_subject() {
    let (_, mut h) = canonical()[0];
    h[0x20] = 1;
    // core (as the liar) and oracle disagree: reported as that, once.
    let liar: Box<dyn Reference> = Box::new(Liar(registry::core()));
    let e = Judge::new(
        liar,
        registry::oracle(),
        vec![registry::core() as Box<dyn Subject>],
    );
    let o = e.compare(t("validate_header"), &h);
    let names: Vec<(&str, &str)> = o
        .divergences()
        .iter()
        .map(|d| (d.left_name.as_str(), d.right_name.as_str()))
        .collect();
    assert_eq!(names, [("liar", "oracle")]);
    // A subject under test that lies where the reference pair agrees is blamed.
    let liar: Box<dyn Subject> = Box::new(Liar(registry::core()));
    let e = Judge::new(registry::core(), registry::oracle(), vec![liar]);
    let (d, _) = header_blame(&e, &h, ("liar", "core"));
    assert_eq!(d.class, Class::OverAccept);
}

#[test]
fn target_names_are_stable() {
    let names: Vec<&str> = Target::all().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "validate_header",
            "validate_payload",
            "decode_any",
            "roundtrip",
            "custom_op_group",
            "collective_lut",
            "alu_lut",
            "cce_lut",
            "dge_lut",
            "dtype_lut",
            "dtype_v4_lut",
            "wait_mode_lut",
            "update_mode_lut",
            "ir_gates",
            "sync_handshake",
            "collective_lowering",
            "stream_lint",
            "engine_sync",
            "custom_op_stream",
            "structured_diff"
        ]
    );
    for t in Target::all() {
        assert_eq!(t.name().parse::<Target>(), Ok(t));
    }
    assert!("nope".parse::<Target>().is_err());
}

/// Delegates to `S`, but its encoder sets the last byte of every image it returns.
struct Misencoder(Box<dyn Subject>);

wraps! {
    Misencoder, "misencoder",
    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        self.0.decode(b)
    }
    fn encode(
        &self,
        opcode: u8,
        fields: &[(tpbconform::subjects::FieldName, tpbconform::subjects::Value)],
    ) -> Reply<tpbconform::subjects::EncodeResult> {
        self.0.encode(opcode, fields).map(|r| {
            r.map(|mut img| {
                img[63] |= 1;
                img
            })
        })
    }
}

#[test]
fn roundtrip_catches_an_encoder_that_returns_other_bytes() {
    // The 0x85 header's byte 0x3F is reserved (SPEC §3): a correct encoder writes it zero.
    let (_, b) = canonical()[0];
    assert_eq!(b[0], 0x85);
    assert_eq!(b[63], 0);
    let e = Judge::new(
        Box::new(Misencoder(registry::core())),
        registry::oracle(),
        Vec::new(),
    );
    let d = e.compare(t("roundtrip"), &b);
    let d = d.divergence().expect("a wrong encoder image must diverge");
    assert_eq!(d.class, Class::DifferentOutput, "{d}");
    assert_eq!(d.signature.key, "roundtrip.self@0x85");
    assert_eq!(
        (d.signature.left.as_str(), d.signature.right.as_str()),
        ("other_bytes", "ok")
    );
    // The other bytes are kept as the left's answer, so the byte map blames exactly 0x3F
    // (read back from `other_bytes`, they blamed nothing).
    let mut other = b;
    other[63] = 1;
    assert_eq!(
        d.answers,
        Answers::of(Answer::Reencoded(Box::new(other)), Answer::Valid)
    );
    let blamed = tpbconform::blame::blamed_bytes(&b, d.answers.left.as_ref().unwrap());
    assert_eq!(blamed.iter().collect::<Vec<_>>(), vec![63]);
    // And the honest pair agrees on the same bundle.
    let honest = Judge::new(registry::core(), registry::oracle(), Vec::new());
    assert!(honest.compare(t("roundtrip"), &b).is_agree());
}

/// Delegates to `S`, counting the encodes it is asked (`.1`). With `.2`, its decode adds a
/// field of its own (`marker`), its encoder drops it, and an encode of fields without it
/// returns other bytes.
struct CrossOnly(Box<dyn Subject>, Arc<AtomicUsize>, bool);

wraps! {
    CrossOnly, "cross_only",
    fn decode(&self, b: &[u8; 64]) -> Reply<Result<Decoded, DecodeFail>> {
        self.0.decode(b).map(|r| {
            r.map(|mut d| {
                if self.2 {
                    d.fields.push(("marker".into(), tpbconform::subjects::Value::Int(1)));
                }
                d
            })
        })
    }
    fn encode(
        &self,
        opcode: u8,
        fields: &[(tpbconform::subjects::FieldName, tpbconform::subjects::Value)],
    ) -> Reply<tpbconform::subjects::EncodeResult> {
        self.1.fetch_add(1, Ordering::Relaxed);
        let marked = fields.iter().any(|(n, _)| n == "marker");
        let own: Vec<_> = fields.iter().filter(|(n, _)| n != "marker").cloned().collect();
        self.0.encode(opcode, &own).map(|r| {
            r.map(|mut img| {
                img[63] |= u8::from(self.2 && !marked);
                img
            })
        })
    }
}

#[test]
fn roundtrip_asks_the_cross_encodes_only_when_the_decodes_differ() {
    let (_, b) = canonical()[0];
    assert_eq!(b[63], 0);
    let judge = |mark: bool| {
        let asked = Arc::new(AtomicUsize::new(0));
        let s = CrossOnly(registry::core(), Arc::clone(&asked), mark);
        let e = Judge::new(Box::new(s), registry::oracle(), Vec::new());
        (e.compare(t("roundtrip"), &b), asked.load(Ordering::Relaxed))
    };
    // Its decode differs from the oracle's (the marker): the cross encode of the oracle's
    // fields is asked too, and its other bytes diverge there, not on the self encodes.
    let (o, asked) = judge(true);
    let d = o.divergence().expect("the cross encode must diverge");
    assert_eq!(d.signature.key, "roundtrip.cross@0x85", "{d}");
    assert_eq!(d.signature.left, "other_bytes", "{d}");
    assert_eq!(asked, 2);
    // Decodes that agree: the self encode only (a cross encode would ask the same fields).
    let (o, asked) = judge(false);
    assert!(o.is_agree());
    assert_eq!(asked, 1);
}
