//! An engine's instruction stream read as the model's steps (SPEC §12 DE-11): one step per
//! instruction, its events band read by [`Sync::read`]; lengths from `isa/opcodes.tsv`
//! ([`instruction_len`]: a 128-byte record is one instruction); a 0xDA record has no band
//! (SPEC §1) and is the second half of its 0xD9 (FACTS §9), so it is no step of its own.

use super::Step;
use crate::bundle::Bundle;
use crate::insn::Sync;
use crate::lint::instruction_len;

/// The steps of one engine's stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// One step per instruction, in stream order.
    pub steps: Vec<Step>,
    /// The byte offset of each step's instruction.
    pub offsets: Vec<u64>,
    /// Bytes at the end that do not make a whole instruction (not read).
    pub trailing: usize,
}

/// Reads `bytes` (a flat run of instructions, FACTS §10 [R]) as steps.
pub fn steps_of_stream(bytes: &[u8]) -> Extracted {
    let mut out = Extracted {
        steps: Vec::with_capacity(bytes.len() / Bundle::LEN),
        offsets: Vec::with_capacity(bytes.len() / Bundle::LEN),
        trailing: 0,
    };
    let mut at = 0usize;
    while at < bytes.len() {
        let len = instruction_len(bytes[at]);
        let Some(record) = bytes.get(at..at + len) else {
            out.trailing = bytes.len() - at;
            break;
        };
        if record[0] != 0xDA {
            let b = Bundle::from_slice(&record[..Bundle::LEN]).unwrap_or_default();
            let s = Sync::read(&b);
            out.steps.push(Step {
                wait_mode: s.wait_mode.0,
                wait_idx: s.wait_idx,
                update_mode: s.update_mode.0,
                update_idx: s.update_idx,
                value: s.semaphore_value,
            });
            out.offsets.push(at as u64);
        }
        at += len;
    }
    out
}
