//! An engine's instruction stream read as the model's steps (SPEC §11 DE-11): one step per
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

/// Reads `bytes` (a flat run of instructions, FACTS §10 \[R\]) as steps.
pub fn steps_of_stream(bytes: &[u8]) -> Extracted {
    let mut r = StepReader::default();
    r.push(bytes);
    r.finish()
}

/// [`steps_of_stream`] fed in pieces cut anywhere (a stream read block by block): holds at
/// most one partial instruction between pushes.
#[derive(Clone, Debug, Default)]
pub struct StepReader {
    out: Extracted,
    /// Bytes of an instruction cut by the end of a push.
    partial: Vec<u8>,
    /// Stream offset of the next byte pushed.
    at: u64,
}

impl StepReader {
    /// Reads the next piece of the stream.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if !self.partial.is_empty() {
            let need = instruction_len(self.partial[0]) - self.partial.len();
            let take = need.min(bytes.len());
            self.partial.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.partial.len() < instruction_len(self.partial[0]) {
                return;
            }
            let record = std::mem::take(&mut self.partial);
            self.record(&record);
        }
        let mut at = 0usize;
        while at < bytes.len() {
            let len = instruction_len(bytes[at]);
            let Some(record) = bytes.get(at..at + len) else {
                self.partial.extend_from_slice(&bytes[at..]);
                return;
            };
            self.record(record);
            at += len;
        }
    }

    fn record(&mut self, record: &[u8]) {
        if record[0] != 0xDA {
            let b = Bundle::from_slice(&record[..Bundle::LEN]).unwrap_or_default();
            let s = Sync::read(&b);
            self.out.steps.push(Step {
                wait_mode: s.wait_mode.0,
                wait_idx: s.wait_idx,
                update_mode: s.update_mode.0,
                update_idx: s.update_idx,
                value: s.semaphore_value,
            });
            self.out.offsets.push(self.at);
        }
        self.at += record.len() as u64;
    }

    /// The steps read; bytes of a last instruction cut short are `trailing`.
    pub fn finish(mut self) -> Extracted {
        self.out.trailing = self.partial.len();
        self.out
    }
}
