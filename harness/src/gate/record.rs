//! [`Recorder`]: a [`Subject`] wrapper that remembers the verdict of the
//! first call after [`Recorder::reset`], so the gate can fill its
//! predicate × outcome coverage matrix without calling the subject twice.
//!
//! Contract: the wrapper is transparent (same results, same name); the
//! coverage key is written into a reused `String`, so recording does not
//! allocate once the buffer has grown.

use crate::subject::{
    DecodeFail, Decoded, GateResult, LutResult, Route, StreamFail, StreamSummary, Subject, Value,
    Verdict,
};
use std::cell::{Cell, RefCell};

/// See the module docs.
#[derive(Debug, Default)]
pub struct Recorder<S> {
    inner: S,
    key: RefCell<String>,
    set: Cell<bool>,
}

impl<S> Recorder<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Recorder {
            inner,
            key: RefCell::new(String::with_capacity(64)),
            set: Cell::new(false),
        }
    }

    /// Forgets the last key.
    #[inline]
    pub fn reset(&self) {
        self.set.set(false);
        self.key.borrow_mut().clear();
    }

    /// The key recorded since the last reset (`"-"` if none).
    pub fn with_key<T>(&self, f: impl FnOnce(&str) -> T) -> T {
        let k = self.key.borrow();
        if k.is_empty() {
            f("-")
        } else {
            f(&k)
        }
    }

    #[inline]
    fn put(&self, parts: &[&str]) {
        if !self.set.replace(true) {
            let mut k = self.key.borrow_mut();
            k.clear();
            for p in parts {
                k.push_str(p);
            }
        }
    }

    fn lut(&self, r: LutResult) -> LutResult {
        match r {
            Ok(_) => self.put(&["ok"]),
            Err(e) => self.put(&["err:", e]),
        }
        r
    }

    fn gate(&self, gate: &str, r: GateResult) -> GateResult {
        match r {
            Ok(()) => self.put(&[gate, ":ok"]),
            Err(e) => self.put(&[gate, ":err:", e]),
        }
        r
    }
}

impl<S: Subject> Subject for Recorder<S> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn validate_header(&self, b: &[u8; 64]) -> Verdict {
        let v = self.inner.validate_header(b);
        self.put(&[v.unwrap_or("valid")]);
        v
    }

    fn validate_payload(&self, b: &[u8; 64]) -> Verdict {
        let v = self.inner.validate_payload(b);
        self.put(&[v.unwrap_or("valid")]);
        v
    }

    fn decode(&self, b: &[u8; 64]) -> Result<Decoded, DecodeFail> {
        let r = self.inner.decode(b);
        match &r {
            Ok(d) => self.put(&["ok:", &d.mnemonic]),
            Err(e) => self.put(&["err:", &e.field]),
        }
        r
    }

    fn encode(&self, opcode: u8, fields: &[(String, Value)]) -> Result<[u8; 64], String> {
        let r = self.inner.encode(opcode, fields);
        match &r {
            Ok(_) => self.put(&["encode:ok"]),
            Err(e) => self.put(&["encode:err:", e]),
        }
        r
    }

    fn parse_stream(&self, bytes: &[u8]) -> Result<Vec<StreamSummary>, StreamFail> {
        let r = self.inner.parse_stream(bytes);
        match &r {
            Ok(_) => self.put(&["ok"]),
            Err(e) => self.put(&["err:", e.name]),
        }
        r
    }

    fn collective_lut(&self, kind: u32) -> LutResult {
        self.lut(self.inner.collective_lut(kind))
    }
    fn alu_lut(&self, op: u32) -> LutResult {
        self.lut(self.inner.alu_lut(op))
    }
    fn cce_lut(&self, op: u32) -> LutResult {
        self.lut(self.inner.cce_lut(op))
    }
    fn dge_lut(&self, op: u32) -> LutResult {
        self.lut(self.inner.dge_lut(op))
    }
    fn dtype_lut(&self, dtype: u32, v4: bool) -> LutResult {
        self.lut(self.inner.dtype_lut(dtype, v4))
    }
    fn wait_mode_lut(&self, mode: u32) -> LutResult {
        self.lut(self.inner.wait_mode_lut(mode))
    }
    fn wait_mode_wire(&self, mode: u32) -> LutResult {
        self.lut(self.inner.wait_mode_wire(mode))
    }

    fn check_custom_op(&self, args: &[u8], outputs: &[u8], arch: u8) -> GateResult {
        self.gate(
            "check_custom_op",
            self.inner.check_custom_op(args, outputs, arch),
        )
    }
    fn sb_scratchpad(
        &self,
        kind: u32,
        subkind: u32,
        sb_arg_global: bool,
        n_args: u64,
        n_outputs: u64,
        n_scratch: u64,
    ) -> GateResult {
        self.gate(
            "sb_scratchpad",
            self.inner
                .sb_scratchpad(kind, subkind, sb_arg_global, n_args, n_outputs, n_scratch),
        )
    }
    fn cc_dim(&self, dim: u32) -> GateResult {
        self.gate("cc_dim", self.inner.cc_dim(dim))
    }
    fn rank_id_output(&self, storage_kind: u32) -> GateResult {
        self.gate("rank_id_output", self.inner.rank_id_output(storage_kind))
    }
    fn lnc(&self, cores_per_lnc: u32) -> GateResult {
        self.gate("lnc", self.inner.lnc(cores_per_lnc))
    }
    fn route(&self, bytes_per_partition: u64) -> Route {
        let r = self.inner.route(bytes_per_partition);
        self.put(&[match r {
            Route::Sb2sb => "route:sb2sb",
            Route::Dma => "route:dma",
        }]);
        r
    }
}
