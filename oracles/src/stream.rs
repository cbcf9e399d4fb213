//! The bundle stream parser (SPEC §5.3, D-10): custom-op groups, and in
//! [`parse_bundle_stream`] 0xD9 + 0xDA pairs (FACTS §9, SPEC DL-12).

use crate::errors::StreamRejection;
use crate::lut::COLLECTIVE;
use crate::regions::{byte_at, le_value, record, slice, Region};
use crate::roster::Generation;
use crate::verdict::Resolved;
use std::sync::OnceLock;

/// One item of a parsed stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item {
    /// A 0x85 header at `header_index`, then the output payload and `n_args` arg payloads.
    Group { header_index: usize, n_args: usize },
    /// Any other bundle.
    Other { index: usize, opcode: u8 },
}

/// One instruction of a bundle stream: `count` bundles from `start`, and what it is:
/// `"group"` (custom-op header + payloads), `"pair"` (0xD9 + 0xDA, 128 bytes) or
/// `"single"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub count: usize,
    pub what: &'static str,
}

fn span_of(item: Item) -> Span {
    match item {
        Item::Group {
            header_index,
            n_args,
        } => Span {
            start: header_index,
            count: n_args.saturating_add(2),
            what: "group",
        },
        Item::Other { index, .. } => Span {
            start: index,
            count: 1,
            what: "single",
        },
    }
}

/// An open group: (header index, payloads expected, payloads found).
type Open = (usize, u64, u64);

/// The regions of the 0x85 header's `num_payloads` and `num_arguments`, looked up by name in
/// its table once.
fn count_regions() -> &'static [Option<&'static Region>; 2] {
    static REGIONS: OnceLock<[Option<&'static Region>; 2]> = OnceLock::new();
    REGIONS.get_or_init(|| {
        let by_name = |name| record(0x85).and_then(|rec| rec.field_region(name));
        [by_name("num_payloads"), by_name("num_arguments")]
    })
}

/// Read one of [`count_regions`] from `b` (0 if the table lacked it).
fn header_field(b: &[u8; 64], region: Option<&Region>) -> u64 {
    region.map(|reg| le_value(slice(b, reg))).unwrap_or(0)
}

/// Parse a stream of 64-byte bundles into groups and other bundles; 0xD9/0xDA are
/// plain bundles here.
pub fn parse_stream(bytes: &[u8], chip: Generation) -> Result<Vec<Item>, StreamRejection> {
    Ok(walk(bytes, false, chip)?
        .into_iter()
        .filter_map(|s| s.ok())
        .collect())
}

/// Parse a bundle stream, pairing each 0xD9 whose kind byte names a two-leg kind with
/// the 0xDA right after it (SPEC §5.3, DL-12).
pub fn parse_bundle_stream(bytes: &[u8], chip: Generation) -> Result<Vec<Span>, StreamRejection> {
    Ok(walk(bytes, true, chip)?
        .into_iter()
        .map(|s| s.map_or_else(|pair| pair, span_of))
        .collect())
}

/// Does a 0xD9 with this kind byte (+0x0E) take a 0xDA leg? The two-leg kinds are the
/// permute family (SPEC §5.4), recognised by name.
pub(crate) fn takes_leg(kind_byte: u8) -> bool {
    COLLECTIVE
        .of_wire(kind_byte)
        .and_then(|k| COLLECTIVE.name(k))
        .is_some_and(|n| n.starts_with("Permute"))
}

/// Items in stream order; a pair is `Err(span)` so that `parse_stream` can drop it.
fn walk(
    bytes: &[u8],
    pairing: bool,
    chip: Generation,
) -> Result<Vec<Result<Item, Span>>, StreamRejection> {
    if !bytes.len().is_multiple_of(64) {
        return Err(StreamRejection::TrailingBytes { len: bytes.len() });
    }
    let mut items = Vec::with_capacity(bytes.len() / 64);
    // The two chains, resolved for `chip` once for the whole stream.
    let (header_chain, payload_chain) = (Resolved::of(0, chip), Resolved::of(1, chip));
    let mut open: Option<Open> = None;
    // A 0xD9 waiting for its leg: (index, bytes 0x0C..0x0F).
    let mut waiting: Option<(usize, Vec<u8>)> = None;
    for (index, chunk) in bytes.chunks_exact(64).enumerate() {
        let Ok(b) = <&[u8; 64]>::try_from(chunk) else {
            return Err(StreamRejection::TrailingBytes { len: bytes.len() });
        };
        let opcode = byte_at(b, 0);
        if let Some((first, trio)) = waiting.take() {
            if opcode != 0xDA {
                return Err(StreamRejection::MissingLeg { index: first });
            }
            let other = b.get(0x0C..0x0F).map(<[u8]>::to_vec).unwrap_or_default();
            if other != trio {
                return Err(StreamRejection::LegMismatch { index });
            }
            items.push(Err(Span {
                start: first,
                count: 2,
                what: "pair",
            }));
            continue;
        }
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
                header_chain
                    .run(b)
                    .map_err(|rejection| StreamRejection::InvalidRecord { index, rejection })?;
                let [payloads_at, arguments_at] = count_regions();
                let num_payloads = header_field(b, *payloads_at);
                let num_arguments = header_field(b, *arguments_at);
                if num_payloads != num_arguments + 2 {
                    return Err(StreamRejection::PayloadCountMismatch {
                        index,
                        num_payloads,
                        num_arguments,
                    });
                }
                items.push(Ok(Item::Group {
                    header_index: index,
                    n_args: usize::try_from(num_arguments).unwrap_or(usize::MAX),
                }));
                open = Some((index, num_arguments + 1, 0));
            }
            0x86 => {
                payload_chain
                    .run(b)
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
            0xDA if pairing => return Err(StreamRejection::StrayLeg { index }),
            0xD9 if pairing && takes_leg(byte_at(b, 0x0E)) => {
                let trio = b.get(0x0C..0x0F).map(<[u8]>::to_vec).unwrap_or_default();
                waiting = Some((index, trio));
            }
            _ => items.push(Ok(Item::Other { index, opcode })),
        }
    }
    if let Some((index, _)) = waiting {
        return Err(StreamRejection::MissingLeg { index });
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
