//! The instruction-stream walker `check` runs (SPEC §5.3 "Linting a stream", D-27, D-28): one
//! 64-byte bundle at a time, it gives each instruction its [`Verdict`] (`lint_instruction`),
//! keeps sync across 128-byte instructions ([`instruction_len`]) and reports every stream error
//! of SPEC §5.3 (custom-op groups; 0xD9/0xDA pairs, DL-12) without stopping. It holds the counts
//! of one open group and one pending leg, never the stream.

use crate::bundle::{Bundle, LengthError};
use crate::generation::Generation;
use crate::insn::{CollectiveCompute, CollectiveComputeSecondary};
use crate::layout::{
    custom_op_header, BUNDLE_LEN, OPCODE_CUSTOM_OP_HEADER, OPCODE_CUSTOM_OP_PAYLOAD,
};
use crate::lint::{classify, instruction_len, lint_classified, lint_skeleton, Class, Verdict};
use crate::lower::needs_second_leg;
use std::sync::OnceLock;

/// Where an instruction starts: its bundle index in the stream, byte offset and opcode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct At {
    /// 0-based bundle index in the stream.
    pub index: usize,
    /// Byte offset in the stream (`index * 64`).
    pub offset: usize,
    /// byte\[0\].
    pub opcode: u8,
}

/// What is wrong with a stream (SPEC §5.3; names as there).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum StreamFault {
    /// A 0x85 whose num_payloads ≠ num_arguments + 2.
    PayloadCountMismatch {
        /// num_payloads.
        num_payloads: u16,
        /// num_arguments.
        num_arguments: u8,
    },
    /// A 0x86 with no open group.
    StrayPayload,
    /// A group cut short (by another instruction, or by the end: `by` is `None`).
    ShortGroup {
        /// num_arguments + 1.
        expected: usize,
        /// Payloads seen.
        found: usize,
        /// The opcode that cut it, `None` at the end of the stream.
        by: Option<u8>,
    },
    /// A two-leg 0xD9 not followed by its 0xDA (`by` = the opcode that came instead, `None` at
    /// the end).
    MissingLeg {
        /// What came instead of the 0xDA.
        by: Option<u8>,
    },
    /// A 0xDA whose bytes 0x0C..=0x0E differ from its 0xD9's.
    LegMismatch {
        /// The 0xD9's bytes.
        primary: [u8; 3],
        /// The 0xDA's bytes.
        secondary: [u8; 3],
    },
    /// A 0xDA that is not the leg of a two-leg 0xD9.
    StrayLeg,
    /// A 128-byte instruction whose second 64 bytes the stream does not have.
    TruncatedInstruction {
        /// Its length (128).
        length: usize,
        /// Bytes the stream had from its start (64).
        found: usize,
    },
}

impl StreamFault {
    /// The SPEC §5.3 name.
    pub fn name(&self) -> &'static str {
        match self {
            StreamFault::PayloadCountMismatch { .. } => "payload_count_mismatch",
            StreamFault::StrayPayload => "stray_payload",
            StreamFault::ShortGroup { .. } => "short_group",
            StreamFault::MissingLeg { .. } => "missing_leg",
            StreamFault::LegMismatch { .. } => "leg_mismatch",
            StreamFault::StrayLeg => "stray_leg",
            StreamFault::TruncatedInstruction { .. } => "truncated_instruction",
        }
    }
}

/// A stream error: what, where it is detected (bundle index and offset; at the end of the
/// stream, the index one past the last bundle) and the instruction it belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StreamError {
    /// What is wrong.
    pub fault: StreamFault,
    /// Bundle index where it is detected.
    pub index: usize,
    /// Byte offset where it is detected.
    pub offset: usize,
    /// The instruction it belongs to (the header of a group, the 0xD9 of a pair, the bundle
    /// itself for a stray one).
    pub owner: At,
}

/// One thing the walker reports, in stream order.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Event {
    /// An instruction and its verdict; `length` is its bytes on the wire (64 or 128).
    Instruction {
        /// Where it starts.
        at: At,
        /// 64 or 128.
        length: usize,
        /// Its verdict.
        verdict: Verdict,
    },
    /// A stream error.
    Stream(StreamError),
}

/// Where the next bundle stands in the stream (`explain` / `decode` stream context), as the
/// walker will read it ([`Walker::place`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Place {
    /// The second 64 bytes of the 128-byte instruction at `of` (its body, not an opcode).
    Tail {
        /// The instruction.
        of: At,
    },
    /// Payload `n` (1-based; 1 is the output) of the `expected` the group at `header` announces.
    Payload {
        /// The group's 0x85.
        header: At,
        /// 1-based.
        n: usize,
        /// num_arguments + 1.
        expected: usize,
    },
    /// The 0xDA leg of the two-leg 0xD9 at `primary`.
    Leg {
        /// The 0xD9.
        primary: At,
    },
    /// An instruction of its own (it may open a group or a pair).
    Alone,
}

#[derive(Clone, Copy)]
struct OpenGroup {
    header: At,
    expected: usize,
    found: usize,
}

/// The stream walker: feed it every 64-byte bundle of one stream with [`Walker::push`], then
/// [`Walker::finish`]. Memory is constant.
#[derive(Clone)]
pub struct Walker {
    gen: Generation,
    /// Per opcode: its class under `gen`, its length, and whether it has no stream rule of its
    /// own (a 64-byte skeleton-only or non-member opcode other than 0x85/0x86/0xD9/0xDA), built
    /// once per generation ([`op_table`]).
    table: &'static OpTable,
    index: usize,
    group: Option<OpenGroup>,
    /// A two-leg 0xD9 waiting for its 0xDA, with its bytes 0x0C..=0x0E.
    leg: Option<(At, [u8; 3])>,
    /// The first half of a 128-byte instruction: the next bundle is its second half.
    tail_of: Option<At>,
}

/// Per opcode under one generation: its [`Class`], its length on the wire, and whether it has
/// no stream rule of its own (a 64-byte skeleton-only or non-member opcode other than
/// 0x85/0x86/0xD9/0xDA: the walker's fast path).
type OpTable = [(Class, usize, bool); 256];

fn op_table(gen: Generation) -> OpTable {
    let mut table = [(Class::NotMember, BUNDLE_LEN, false); 256];
    for (op, row) in (0..=255u8).zip(table.iter_mut()) {
        let (class, length) = (classify(op, gen), instruction_len(op));
        let ruled = [
            OPCODE_CUSTOM_OP_HEADER,
            OPCODE_CUSTOM_OP_PAYLOAD,
            CollectiveCompute::OPCODE,
            CollectiveComputeSecondary::OPCODE,
        ]
        .contains(&op);
        let plain =
            !ruled && length == BUNDLE_LEN && matches!(class, Class::Skeleton | Class::NotMember);
        *row = (class, length, plain);
    }
    table
}

/// +0x0C..=+0x0E {cce_op, dtype, kind} of a 0xD9/0xDA (S003 §3.1, §3.2).
const OFF_TRIO: usize = 0x0C;
/// +0x0E kind byte (S003 §3.1).
const OFF_KIND: usize = 0x0E;

fn trio(b: &Bundle) -> [u8; 3] {
    [b.0[OFF_TRIO], b.0[OFF_TRIO + 1], b.0[OFF_TRIO + 2]]
}

impl Walker {
    /// A walker for one stream under generation `gen` (its opcode table is built once per
    /// generation and shared).
    pub fn new(gen: Generation) -> Walker {
        static TABLES: OnceLock<[OpTable; 4]> = OnceLock::new();
        let tables = TABLES.get_or_init(|| Generation::ALL.map(op_table));
        let k = Generation::ALL.iter().position(|&g| g == gen).unwrap_or(0);
        Walker {
            gen,
            table: &tables[k],
            index: 0,
            group: None,
            leg: None,
            tail_of: None,
        }
    }

    /// Where bundle `b`, pushed next, stands (before [`Walker::push`]): a 128-byte
    /// instruction's second half, a payload of the open group, the leg of the pending 0xD9, or
    /// alone (SPEC §5.3).
    pub fn place(&self, b: &Bundle) -> Place {
        if let Some(of) = self.tail_of {
            return Place::Tail { of };
        }
        match (b.0[0], self.group, self.leg) {
            (OPCODE_CUSTOM_OP_PAYLOAD, Some(g), _) => Place::Payload {
                header: g.header,
                n: g.found + 1,
                expected: g.expected,
            },
            (op, _, Some((primary, _))) if op == CollectiveComputeSecondary::OPCODE => {
                Place::Leg { primary }
            }
            _ => Place::Alone,
        }
    }

    /// Bundles pushed so far.
    pub fn bundles(&self) -> usize {
        self.index
    }

    fn here(&self, opcode: u8) -> At {
        At {
            index: self.index,
            offset: self.index * BUNDLE_LEN,
            opcode,
        }
    }

    /// Walks the whole bundles of `bytes` (a trailing partial bundle is left to the caller) as
    /// [`Walker::push`] does, each event to `out`; when `out` returns `true` the walk stops after
    /// the bundle that event belongs to. Returns the bytes walked. The reader's hot loop: a
    /// 64-byte opcode without a stream rule, with nothing open, is judged on the bytes read
    /// (no copy).
    #[inline]
    pub fn push_bundles(&mut self, bytes: &[u8], out: &mut impl FnMut(Event) -> bool) -> usize {
        let (whole, _) = bytes.as_chunks::<BUNDLE_LEN>();
        let mut next = 0;
        while next < whole.len() {
            if self.tail_of.is_none() && self.leg.is_none() && self.group.is_none() {
                // Nothing open: a run of plain opcodes changes nothing but the index.
                let mut index = self.index;
                let mut stop = false;
                for chunk in &whole[next..] {
                    let (class, length, plain) = self.table[usize::from(chunk[0])];
                    if !plain {
                        break;
                    }
                    let at = At {
                        index,
                        offset: index * BUNDLE_LEN,
                        opcode: chunk[0],
                    };
                    index += 1;
                    next += 1;
                    let verdict = lint_skeleton(chunk, class);
                    if out(Event::Instruction {
                        at,
                        length,
                        verdict,
                    }) {
                        stop = true;
                        break;
                    }
                }
                self.index = index;
                if stop {
                    break;
                }
                if next == whole.len() {
                    break;
                }
            }
            let mut stop = false;
            self.push_any(&Bundle(whole[next]), &mut |e| stop |= out(e));
            next += 1;
            if stop {
                break;
            }
        }
        next * BUNDLE_LEN
    }

    /// Walks the next bundle, reporting to `out` in stream order (SPEC §5.3 check order: a
    /// pending leg; the group an instruction other than 0x86 closes; the instruction's verdict;
    /// then its own stream rule).
    #[inline]
    pub fn push(&mut self, b: &Bundle, out: &mut impl FnMut(Event)) {
        // Fast path: nothing open and a 64-byte opcode with no stream rule of its own.
        let (class, length, plain) = self.table[usize::from(b.0[0])];
        if plain && self.tail_of.is_none() && self.leg.is_none() && self.group.is_none() {
            out(Event::Instruction {
                at: self.here(b.0[0]),
                length,
                verdict: lint_skeleton(&b.0, class),
            });
            self.index += 1;
            return;
        }
        self.push_any(b, out);
    }

    /// [`Walker::push`] for every case (the SPEC §5.3 order).
    fn push_any(&mut self, b: &Bundle, out: &mut impl FnMut(Event)) {
        if self.tail_of.take().is_some() {
            // The second 64 bytes of a 128-byte instruction: its body, not an opcode.
            self.index += 1;
            return;
        }
        let op = b.0[0];
        let at = self.here(op);
        let stream = |fault, owner| {
            Event::Stream(StreamError {
                fault,
                index: at.index,
                offset: at.offset,
                owner,
            })
        };
        let mut paired = false;
        if let Some((primary, want)) = self.leg.take() {
            if op == CollectiveComputeSecondary::OPCODE {
                paired = true;
                let got = trio(b);
                if got != want {
                    let fault = StreamFault::LegMismatch {
                        primary: want,
                        secondary: got,
                    };
                    out(stream(fault, primary));
                }
            } else {
                out(stream(StreamFault::MissingLeg { by: Some(op) }, primary));
            }
        }
        if op != OPCODE_CUSTOM_OP_PAYLOAD {
            if let Some(g) = self.group.take() {
                let fault = StreamFault::ShortGroup {
                    expected: g.expected,
                    found: g.found,
                    by: Some(op),
                };
                out(stream(fault, g.header));
            }
        }
        let (class, length, _) = self.table[usize::from(op)];
        let verdict = lint_classified(b, self.gen, class);
        out(Event::Instruction {
            at,
            length,
            verdict,
        });
        match op {
            OPCODE_CUSTOM_OP_HEADER => {
                let num_payloads = u16::from_le_bytes([
                    b.0[custom_op_header::OFF_NUM_PAYLOADS],
                    b.0[custom_op_header::OFF_NUM_PAYLOADS + 1],
                ]);
                let num_arguments = b.0[custom_op_header::OFF_NUM_ARGUMENTS];
                if u32::from(num_payloads) != u32::from(num_arguments) + 2 {
                    let fault = StreamFault::PayloadCountMismatch {
                        num_payloads,
                        num_arguments,
                    };
                    out(stream(fault, at));
                }
                // D-28: the group is num_arguments + 1 payloads, whatever num_payloads says.
                self.group = Some(OpenGroup {
                    header: at,
                    expected: usize::from(num_arguments) + 1,
                    found: 0,
                });
            }
            OPCODE_CUSTOM_OP_PAYLOAD => match self.group.as_mut() {
                Some(g) => {
                    g.found += 1;
                    if g.found == g.expected {
                        self.group = None;
                    }
                }
                None => out(stream(StreamFault::StrayPayload, at)),
            },
            _ if op == CollectiveComputeSecondary::OPCODE && !paired => {
                out(stream(StreamFault::StrayLeg, at));
            }
            _ if op == CollectiveCompute::OPCODE && needs_second_leg(b.0[OFF_KIND]) => {
                self.leg = Some((at, trio(b)));
            }
            _ => {}
        }
        if length > BUNDLE_LEN {
            self.tail_of = Some(at);
        }
        self.index += 1;
    }

    /// Ends the stream: the errors of what is still open (detected at the end, index one past
    /// the last bundle).
    pub fn finish(self, out: &mut impl FnMut(Event)) {
        let end = At {
            index: self.index,
            offset: self.index * BUNDLE_LEN,
            opcode: 0,
        };
        let stream = |fault, owner| {
            Event::Stream(StreamError {
                fault,
                index: end.index,
                offset: end.offset,
                owner,
            })
        };
        if let Some(owner) = self.tail_of {
            let fault = StreamFault::TruncatedInstruction {
                length: instruction_len(owner.opcode),
                found: BUNDLE_LEN,
            };
            out(stream(fault, owner));
        }
        if let Some((primary, _)) = self.leg {
            out(stream(StreamFault::MissingLeg { by: None }, primary));
        }
        if let Some(g) = self.group {
            let fault = StreamFault::ShortGroup {
                expected: g.expected,
                found: g.found,
                by: None,
            };
            out(stream(fault, g.header));
        }
    }
}

/// Walks a whole in-memory stream (tests, small inputs): every event in order. The length must
/// be a multiple of 64 (the CLI's reader refuses a partial bundle the same way, exit 2).
pub fn walk(bytes: &[u8], gen: Generation) -> Result<Vec<Event>, LengthError> {
    if !bytes.len().is_multiple_of(BUNDLE_LEN) {
        return Err(LengthError { len: bytes.len() });
    }
    let mut events = Vec::new();
    let mut w = Walker::new(gen);
    let mut out = |e| events.push(e);
    for chunk in bytes.chunks_exact(BUNDLE_LEN) {
        let b = Bundle::from_slice(chunk)?;
        w.push(&b, &mut out);
    }
    w.finish(&mut out);
    Ok(events)
}
