//! The state of bulk judging ([`super::batch`]), apart from the code that
//! runs it, so that the judge holds it without an import cycle.

use crate::subjects::Compact;
use std::cell::{Cell, RefCell};

/// A judge's bulk-judging state (see the module docs): deferring cases, or
/// judging the subjects under test alone on those the vouch left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Mode {
    /// Every case judged on its own.
    #[default]
    Off,
    Deferring,
    Replaying,
}

/// The deferred cases of one batch, in order (buffers reused).
#[derive(Default)]
pub(super) struct Deferred {
    pub(super) mode: Cell<Mode>,
    pub(super) token: Cell<u32>,
    /// Cases held before the one at hand.
    pub(super) seen: Cell<usize>,
    pub(super) cases: RefCell<Held>,
}

#[derive(Default)]
pub(super) struct Held {
    /// The subject under test judged in bulk (its position).
    pub(super) under: usize,
    pub(super) bundles: Vec<[u8; 64]>,
    pub(super) ords: Vec<u32>,
    /// Core's answer to each case ([`Compact::Other`] when the reference
    /// pair disagreed).
    pub(super) reference: Vec<Compact>,
    pub(super) cases: Vec<Pending>,
    /// The held cases' coverage keys, end to end ([`Pending::key_end`]).
    pub(super) keys: String,
    pub(super) agreed: Vec<bool>,
}

/// One deferred case.
#[derive(Clone, Copy)]
pub(super) struct Pending {
    /// Its position in the batch; `None`: reported already (the reference
    /// pair disagreed).
    pub(super) at: Option<u32>,
    /// Where its coverage key ends in [`Held::keys`].
    pub(super) key_end: usize,
    pub(super) classified: bool,
}

impl Held {
    /// Empties the batch for subject under test `under`.
    pub(super) fn reset(&mut self, under: usize) {
        self.under = under;
        self.bundles.clear();
        self.ords.clear();
        self.reference.clear();
        self.cases.clear();
        self.keys.clear();
    }

    /// Holds core's `answer` (none: the reference pair disagreed) to the
    /// case at position `at`.
    #[inline]
    pub(super) fn push(&mut self, answer: Option<Compact>, at: u32) {
        self.reference.push(answer.unwrap_or(Compact::Other));
        self.cases.push(Pending {
            at: answer.map(|_| at),
            key_end: self.keys.len(),
            classified: false,
        });
    }
}
