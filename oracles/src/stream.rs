//! The custom-op group stream parser (SPEC §5.3, D-10).

use crate::errors::StreamRejection;
use crate::regions::{byte_at, le_value, record, slice};
use crate::verdict::{header_verdict, payload_verdict};

/// One item of a parsed stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A 0x85 header at `header_index`, then the output payload and `n_args` arg payloads.
    Group { header_index: usize, n_args: usize },
    /// Any other bundle.
    Other { index: usize, opcode: u8 },
}

/// An open group: (header index, payloads expected, payloads found).
type Open = (usize, u64, u64);

/// Read a named field of the 0x85 header table from `b`.
fn header_field(b: &[u8; 64], name: &str) -> u64 {
    record(0x85)
        .and_then(|rec| rec.field_region(name))
        .map(|reg| le_value(slice(b, reg)))
        .unwrap_or(0)
}

/// Parse a stream of 64-byte bundles into groups and other bundles.
pub fn parse_stream(bytes: &[u8]) -> Result<Vec<Item>, StreamRejection> {
    if !bytes.len().is_multiple_of(64) {
        return Err(StreamRejection::TrailingBytes { len: bytes.len() });
    }
    let mut items = Vec::with_capacity(bytes.len() / 64);
    let mut open: Option<Open> = None;
    for (index, chunk) in bytes.chunks_exact(64).enumerate() {
        let Ok(b) = <&[u8; 64]>::try_from(chunk) else {
            return Err(StreamRejection::TrailingBytes { len: bytes.len() });
        };
        let opcode = byte_at(b, 0);
        // A non-payload bundle ends any open (necessarily incomplete) group first: the
        // short_group error is positioned at its header, earlier in the stream.
        if opcode != 0x86 {
            if let Some((header_index, expected, found)) = open.take() {
                return Err(StreamRejection::ShortGroup {
                    header_index,
                    expected,
                    found,
                });
            }
        }
        match opcode {
            0x85 => {
                header_verdict(b)
                    .map_err(|rejection| StreamRejection::InvalidRecord { index, rejection })?;
                let num_payloads = header_field(b, "num_payloads");
                let num_arguments = header_field(b, "num_arguments");
                if num_payloads != num_arguments + 2 {
                    return Err(StreamRejection::PayloadCountMismatch {
                        index,
                        num_payloads,
                        num_arguments,
                    });
                }
                items.push(Item::Group {
                    header_index: index,
                    n_args: usize::try_from(num_arguments).unwrap_or(usize::MAX),
                });
                open = Some((index, num_arguments + 1, 0));
            }
            0x86 => {
                payload_verdict(b)
                    .map_err(|rejection| StreamRejection::InvalidRecord { index, rejection })?;
                let Some((header_index, expected, found)) = open else {
                    return Err(StreamRejection::StrayPayload { index });
                };
                let found = found + 1;
                open = if found >= expected {
                    None
                } else {
                    Some((header_index, expected, found))
                };
            }
            _ => items.push(Item::Other { index, opcode }),
        }
    }
    if let Some((header_index, expected, found)) = open {
        return Err(StreamRejection::ShortGroup {
            header_index,
            expected,
            found,
        });
    }
    Ok(items)
}
