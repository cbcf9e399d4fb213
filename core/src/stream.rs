//! The bundle stream parser (SPEC §5.3): custom-op groups (S000 §C3, QUIRK
//! "complementary") and, in [`parse_bundle_stream`], 0xD9 + 0xDA pairs
//! (FACTS §9; S003 §3.2; DL-12).

use crate::bundle::Bundle;
use crate::generation::Generation;
use crate::insn::{CollectiveCompute, CollectiveComputeSecondary, CustomOpHeader, CustomOpPayload};
use crate::layout::{BUNDLE_LEN, OPCODE_CUSTOM_OP_HEADER, OPCODE_CUSTOM_OP_PAYLOAD};
use crate::lower::needs_second_leg;
use crate::validate::{validate_header, validate_payload, Predicate};
use core::fmt;

/// One item of a parsed stream.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum StreamItem {
    /// A complete custom-op group: header, output payload, argument payloads.
    Group {
        /// Bundle index of the 0x85.
        header_index: usize,
        /// The header fields.
        header: CustomOpHeader,
        /// The first 0x86 after the header (S000 "first 0x86 after a 0x85 is the output AP").
        output: CustomOpPayload,
        /// The remaining `num_arguments` payloads.
        args: Vec<CustomOpPayload>,
    },
    /// Any other bundle (not validated here).
    Other {
        /// Bundle index.
        index: usize,
        /// byte\[0\].
        opcode: u8,
    },
}

/// One item of a bundle stream ([`parse_bundle_stream`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum BundleItem {
    /// A custom-op group or a single bundle, as [`parse_custom_op_stream`] reports it.
    Custom(StreamItem),
    /// A 0xD9 at `index` and its 0xDA at `index + 1`: one 128-byte instruction.
    CollectivePair {
        /// Bundle index of the 0xD9.
        index: usize,
    },
}

/// Why a stream is malformed (D-10).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum StreamError {
    /// Length not a multiple of 64.
    TrailingBytes {
        /// The input length.
        len: usize,
    },
    /// A 0x85/0x86 failed its validator.
    InvalidRecord {
        /// Bundle index.
        index: usize,
        /// The failed predicate.
        predicate: Predicate,
    },
    /// A header with num_payloads ≠ num_arguments + 2.
    PayloadCountMismatch {
        /// Bundle index of the header.
        index: usize,
        /// num_payloads.
        num_payloads: u16,
        /// num_arguments.
        num_arguments: u8,
    },
    /// A 0x86 with no open group.
    StrayPayload {
        /// Bundle index.
        index: usize,
    },
    /// A group ended before `num_arguments + 1` payloads arrived.
    ShortGroup {
        /// Bundle index of the header.
        header_index: usize,
        /// num_arguments + 1.
        expected: usize,
        /// Payloads seen.
        found: usize,
    },
    /// A 0xDA that does not follow a 0xD9 needing its leg (DL-12).
    StrayLeg {
        /// Bundle index of the 0xDA.
        index: usize,
    },
    /// A 0xD9 needing a leg not followed by a 0xDA (DL-12).
    MissingLeg {
        /// Bundle index of the 0xD9.
        index: usize,
    },
    /// A 0xDA whose {cce_op, dtype, kind} bytes differ from its 0xD9's (DL-12).
    LegMismatch {
        /// Bundle index of the 0xDA.
        index: usize,
        /// The 0xD9's bytes 0x0C..=0x0E.
        primary: [u8; 3],
        /// The 0xDA's bytes 0x0C..=0x0E.
        secondary: [u8; 3],
    },
}

impl StreamError {
    /// SPEC §5.3 error name.
    pub fn name(&self) -> &'static str {
        match self {
            StreamError::TrailingBytes { .. } => "trailing_bytes",
            StreamError::InvalidRecord { .. } => "invalid_record",
            StreamError::PayloadCountMismatch { .. } => "payload_count_mismatch",
            StreamError::StrayPayload { .. } => "stray_payload",
            StreamError::ShortGroup { .. } => "short_group",
            StreamError::StrayLeg { .. } => "stray_leg",
            StreamError::MissingLeg { .. } => "missing_leg",
            StreamError::LegMismatch { .. } => "leg_mismatch",
        }
    }

    /// The bundle index the error names (the header index for `short_group`).
    pub fn index(&self) -> Option<usize> {
        match *self {
            StreamError::TrailingBytes { .. } => None,
            StreamError::InvalidRecord { index, .. }
            | StreamError::PayloadCountMismatch { index, .. }
            | StreamError::StrayPayload { index }
            | StreamError::StrayLeg { index }
            | StreamError::MissingLeg { index }
            | StreamError::LegMismatch { index, .. } => Some(index),
            StreamError::ShortGroup { header_index, .. } => Some(header_index),
        }
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index() {
            Some(i) => write!(f, "{} at bundle {}", self.name(), i),
            None => f.write_str(self.name()),
        }
    }
}

impl std::error::Error for StreamError {}

struct Open {
    header_index: usize,
    header: CustomOpHeader,
    expected: usize,
    /// The first payload (the output, S000 §C3).
    output: Option<CustomOpPayload>,
    /// The payloads after it, in order (kept apart so closing moves nothing).
    args: Vec<CustomOpPayload>,
}

impl Open {
    fn found(&self) -> usize {
        usize::from(self.output.is_some()) + self.args.len()
    }

    fn push(&mut self, p: CustomOpPayload) {
        if self.output.is_none() {
            self.output = Some(p);
        } else {
            self.args.push(p);
        }
    }

    fn short(&self) -> StreamError {
        StreamError::ShortGroup {
            header_index: self.header_index,
            expected: self.expected,
            found: self.found(),
        }
    }
}

fn close(open: Open) -> StreamItem {
    StreamItem::Group {
        header_index: open.header_index,
        header: open.header,
        output: open.output.unwrap_or_default(),
        args: open.args,
    }
}

/// The {cce_op, dtype, kind} bytes of a 0xD9/0xDA (S003 §3.1, §3.2).
fn trio(b: &Bundle) -> [u8; 3] {
    b.bytes(OFF_TRIO)
}

/// +0x0C..=+0x0E (S003 §3.1 `mov %al,0xc/0xd/0xe`).
const OFF_TRIO: usize = 0x0C;
/// +0x0E kind byte (S003 §3.1).
const OFF_KIND: usize = 0x0E;
const OPCODE_PRIMARY: u8 = CollectiveCompute::OPCODE;
const OPCODE_SECONDARY: u8 = CollectiveComputeSecondary::OPCODE;

/// Parses a byte stream of bundles into groups and other bundles (SPEC §5.3).
/// 0xD9 and 0xDA are ordinary bundles here; see [`parse_bundle_stream`].
/// The validators are generation `gen`'s.
pub fn parse_custom_op_stream(
    bytes: &[u8],
    gen: Generation,
) -> Result<Vec<StreamItem>, StreamError> {
    Ok(parse(bytes, false, gen)?
        .into_iter()
        .filter_map(|item| match item {
            BundleItem::Custom(item) => Some(item),
            BundleItem::CollectivePair { .. } => None,
        })
        .collect())
}

/// Parses a bundle stream (SPEC §5.3, DL-12): custom-op groups keep their
/// rules, and a 0xD9 whose kind needs a second leg is paired with the 0xDA
/// right after it into one 128-byte instruction. A 0xDA anywhere else is
/// `stray_leg`; a leg-needing 0xD9 followed by anything else (or the end) is
/// `missing_leg`, reported before that bundle is examined (as D-15); a 0xDA
/// whose trio differs from its 0xD9's is `leg_mismatch`.
/// The validators are generation `gen`'s.
pub fn parse_bundle_stream(bytes: &[u8], gen: Generation) -> Result<Vec<BundleItem>, StreamError> {
    parse(bytes, true, gen)
}

/// At each bundle the checks run in this order: a pending 0xD9 leg (pairs,
/// `missing_leg`, `leg_mismatch`); for a non-0x86 bundle while a group is
/// open, `short_group` (D-15: the group closes before the bundle is
/// examined); then `invalid_record`; then for a header
/// `payload_count_mismatch`; then for a 0x86 with no open group
/// `stray_payload`; then a 0xDA is `stray_leg`.
/// Memory is bounded by the input length.
fn parse(bytes: &[u8], pair_legs: bool, gen: Generation) -> Result<Vec<BundleItem>, StreamError> {
    if !bytes.len().is_multiple_of(BUNDLE_LEN) {
        return Err(StreamError::TrailingBytes { len: bytes.len() });
    }
    let mut items = Vec::with_capacity(bytes.len() / BUNDLE_LEN);
    let mut open: Option<Open> = None;
    let mut leg: Option<(usize, [u8; 3])> = None;
    for (index, chunk) in bytes.chunks_exact(BUNDLE_LEN).enumerate() {
        let Ok(b) = Bundle::from_slice(chunk) else {
            return Err(StreamError::TrailingBytes { len: bytes.len() });
        };
        let op = b.opcode();
        if let Some((primary_index, primary)) = leg.take() {
            if op != OPCODE_SECONDARY {
                return Err(StreamError::MissingLeg {
                    index: primary_index,
                });
            }
            let secondary = trio(&b);
            if secondary != primary {
                return Err(StreamError::LegMismatch {
                    index,
                    primary,
                    secondary,
                });
            }
            items.push(BundleItem::CollectivePair {
                index: primary_index,
            });
            continue;
        }
        // D-15: a bundle that is not a 0x86 closes the open group; a short
        // group is reported before that bundle is examined.
        if op != OPCODE_CUSTOM_OP_PAYLOAD {
            if let Some(g) = open.take() {
                return Err(g.short());
            }
        }
        if op == OPCODE_CUSTOM_OP_HEADER {
            validate_header(&b, gen).map_err(|e| StreamError::InvalidRecord {
                index,
                predicate: e.predicate(),
            })?;
        } else if op == OPCODE_CUSTOM_OP_PAYLOAD {
            validate_payload(&b, gen).map_err(|e| StreamError::InvalidRecord {
                index,
                predicate: e.predicate(),
            })?;
        }
        if op == OPCODE_CUSTOM_OP_PAYLOAD {
            let Some(g) = open.as_mut() else {
                return Err(StreamError::StrayPayload { index });
            };
            g.push(CustomOpPayload::read_validated(&b));
            if g.found() == g.expected {
                if let Some(g) = open.take() {
                    items.push(BundleItem::Custom(close(g)));
                }
            }
            continue;
        }
        if pair_legs && op == OPCODE_SECONDARY {
            return Err(StreamError::StrayLeg { index });
        }
        if pair_legs && op == OPCODE_PRIMARY && needs_second_leg(b.byte(OFF_KIND)) {
            leg = Some((index, trio(&b)));
            continue;
        }
        if op == OPCODE_CUSTOM_OP_HEADER {
            let header = CustomOpHeader::read_validated(&b);
            if u32::from(header.num_payloads) != header.expected_num_payloads() {
                return Err(StreamError::PayloadCountMismatch {
                    index,
                    num_payloads: header.num_payloads,
                    num_arguments: header.num_arguments,
                });
            }
            let expected = usize::from(header.num_arguments) + 1;
            open = Some(Open {
                header_index: index,
                header,
                expected,
                output: None,
                args: Vec::with_capacity(usize::from(header.num_arguments)),
            });
        } else {
            items.push(BundleItem::Custom(StreamItem::Other { index, opcode: op }));
        }
    }
    if let Some((index, _)) = leg {
        return Err(StreamError::MissingLeg { index });
    }
    match open {
        Some(g) => Err(g.short()),
        None => Ok(items),
    }
}
