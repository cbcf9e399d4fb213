//! The state of bulk judging ([`super::bulk`]), apart from the code that
//! runs it, so that the judge holds it without an import cycle.

use super::record::RecordKey;
use crate::subjects::Compact;
use crate::targets::Target;
use std::cell::{Cell, RefCell};

/// What the judge does with the cases of a bulk-judged target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Every case judged on its own.
    #[default]
    Off,
    /// The reference pair only; core's answers kept for [`Judge::settle`].
    Deferring,
    /// The subject under test only (the reference pair agreed already).
    Replaying,
}

/// A judge's bulk-judging state (see the module docs).
#[derive(Default)]
pub(super) struct Bulk {
    pub(super) mode: Cell<Mode>,
    /// The caller's token for the next case ([`Judge::set_case_token`]).
    pub(super) token: Cell<u32>,
    pub(super) cases: RefCell<Deferred>,
    /// Core's coverage recorder, when the judge wraps core in one: its memo
    /// serves only case-by-case comparisons, so it is paused while
    /// deferring.
    pub(super) recorder: Option<RecordKey>,
}

impl Bulk {
    /// True unless every case is judged on its own.
    #[inline]
    pub(super) fn on(&self) -> bool {
        self.mode.get() != Mode::Off
    }

    /// Sets the mode, pausing core's memo exactly while deferring.
    #[inline]
    pub(super) fn set_mode(&self, m: Mode) {
        self.mode.set(m);
        if let Some(k) = &self.recorder {
            k.pause_memo(m == Mode::Deferring);
        }
    }
}

/// The deferred cases of one batch, in order (buffers reused).
#[derive(Default)]
pub(super) struct Deferred {
    /// The subject under test judged in bulk (its position).
    pub(super) under: usize,
    pub(super) target: Option<Target>,
    /// A validator target's cases.
    pub(super) bundles: Vec<[u8; 64]>,
    /// A LUT target's cases.
    pub(super) ords: Vec<u32>,
    /// Core's answer to each case ([`Compact::Other`] when the reference
    /// pair disagreed).
    pub(super) reference: Vec<Compact>,
    /// Each case's token; `None`: not judged (the reference pair disagreed).
    pub(super) tokens: Vec<Option<u32>>,
    pub(super) agreed: Vec<bool>,
}

impl Deferred {
    #[inline]
    pub(super) fn push(&mut self, answer: Option<Compact>, token: u32) {
        self.reference.push(answer.unwrap_or(Compact::Other));
        self.tokens.push(answer.map(|_| token));
    }
}
