//! The custom-op stream parser (SPEC §5.3; S000 §C3, QUIRK "complementary").

use crate::bundle::Bundle;
use crate::insn::{CustomOpHeader, CustomOpPayload};
use crate::layout::{BUNDLE_LEN, OPCODE_CUSTOM_OP_HEADER, OPCODE_CUSTOM_OP_PAYLOAD};
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
        /// byte[0].
        opcode: u8,
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
        }
    }

    /// The bundle index the error names (the header index for `short_group`).
    pub fn index(&self) -> Option<usize> {
        match *self {
            StreamError::TrailingBytes { .. } => None,
            StreamError::InvalidRecord { index, .. }
            | StreamError::PayloadCountMismatch { index, .. }
            | StreamError::StrayPayload { index } => Some(index),
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
    payloads: Vec<CustomOpPayload>,
}

impl Open {
    fn short(&self) -> StreamError {
        StreamError::ShortGroup {
            header_index: self.header_index,
            expected: self.expected,
            found: self.payloads.len(),
        }
    }
}

fn close(open: Open) -> StreamItem {
    let mut it = open.payloads.into_iter();
    let output = it.next().unwrap_or_default();
    StreamItem::Group {
        header_index: open.header_index,
        header: open.header,
        output,
        args: it.collect(),
    }
}

/// Parses a byte stream of bundles into groups and other bundles (SPEC §5.3).
///
/// At each bundle the checks run in this order: for a non-0x86 bundle while a
/// group is open, `short_group` (D-15: the group closes before the bundle is
/// examined); then `invalid_record`; then for a header `payload_count_mismatch`;
/// then for a 0x86 with no open group `stray_payload`.
/// Memory is bounded by the input length.
pub fn parse_custom_op_stream(bytes: &[u8]) -> Result<Vec<StreamItem>, StreamError> {
    if !bytes.len().is_multiple_of(BUNDLE_LEN) {
        return Err(StreamError::TrailingBytes { len: bytes.len() });
    }
    let mut items = Vec::with_capacity(bytes.len() / BUNDLE_LEN);
    let mut open: Option<Open> = None;
    for (index, chunk) in bytes.chunks_exact(BUNDLE_LEN).enumerate() {
        let Ok(b) = Bundle::from_slice(chunk) else {
            return Err(StreamError::TrailingBytes { len: bytes.len() });
        };
        let op = b.opcode();
        // D-15: a bundle that is not a 0x86 closes the open group; a short
        // group is reported before that bundle is examined.
        if op != OPCODE_CUSTOM_OP_PAYLOAD {
            if let Some(g) = open.take() {
                return Err(g.short());
            }
        }
        if op == OPCODE_CUSTOM_OP_HEADER {
            validate_header(&b).map_err(|e| StreamError::InvalidRecord {
                index,
                predicate: e.predicate(),
            })?;
        } else if op == OPCODE_CUSTOM_OP_PAYLOAD {
            validate_payload(&b).map_err(|e| StreamError::InvalidRecord {
                index,
                predicate: e.predicate(),
            })?;
        }
        if op == OPCODE_CUSTOM_OP_PAYLOAD {
            let Some(g) = open.as_mut() else {
                return Err(StreamError::StrayPayload { index });
            };
            g.payloads.push(CustomOpPayload::read_validated(&b));
            if g.payloads.len() == g.expected {
                if let Some(g) = open.take() {
                    items.push(close(g));
                }
            }
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
                payloads: Vec::with_capacity(expected),
            });
        } else {
            items.push(StreamItem::Other { index, opcode: op });
        }
    }
    match open {
        Some(g) => Err(g.short()),
        None => Ok(items),
    }
}
