//! The generic decoder / encoder: one interpreter over the region tables (SPEC §5).

use crate::errors::{DecodeRejection, EncodeRejection};
use crate::lut::{cce_wire, collective_wire, Table, ALU, COLLECTIVE};
use crate::regions::{
    byte_at, first_nonzero, le_value, record, slice, Domain, Record, Region, Role, OPTIONAL_FIELDS,
};
use crate::roster::Generation;
use crate::val::Val;
use crate::verdict::run_record_chain;

/// A decoded bundle: opcode, mnemonic and the fields in canonical order (SPEC §5.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub opcode: u8,
    pub mnemonic: &'static str,
    pub fields: Vec<(&'static str, Val)>,
}

/// The name `table` gives the wire byte `byte`, as a `Val`.
fn named(table: Table, byte: Option<u8>) -> Option<Val> {
    let ord = table.of_wire(byte?)?;
    table.name(ord).map(|n| Val::Name(n.to_string()))
}

/// Read a live field's wire bytes as a `Val`, or None if the field does not admit them.
fn wire_to_val(domain: Domain, bytes: &[u8], chip: Generation) -> Option<Val> {
    let value = le_value(bytes);
    if !domain.admits(value, chip) {
        return None;
    }
    let byte = u8::try_from(value).ok();
    match domain {
        Domain::Opaque => Some(Val::Bytes(bytes.to_vec())),
        Domain::CceOpName => named(ALU, byte),
        Domain::KindName => named(COLLECTIVE, byte),
        Domain::Any
        | Domain::WaitMode
        | Domain::UpdateMode
        | Domain::ArgType
        | Domain::Flag
        | Domain::DtypeTag => Some(Val::Int(value)),
    }
}

/// Decode a 64-byte bundle as `chip`; succeeds exactly on that chip's encoder images
/// (SPEC §5.1, D-8, D-22).
pub fn decode(b: &[u8; 64], chip: Generation) -> Result<Decoded, DecodeRejection> {
    let opcode = byte_at(b, 0);
    let rec = record(opcode).ok_or(DecodeRejection::UnknownOpcode { value: opcode })?;
    if chip < rec.first_chip {
        return Err(DecodeRejection::NotOnChip {
            value: opcode,
            chip,
        });
    }
    run_record_chain(rec, b, chip).map_err(DecodeRejection::Validator)?;
    let mut fields = Vec::with_capacity(rec.skeleton.len() + rec.body.len());
    for reg in rec.regions() {
        match reg.role {
            Role::Opcode => {}
            Role::Tag(expected) => {
                let value = byte_at(b, reg.start);
                if value != expected {
                    return Err(DecodeRejection::BadInstWordLen { value, expected });
                }
            }
            Role::Reserved(_) => {
                if let Some((offset, value)) = first_nonzero(b, reg) {
                    return Err(DecodeRejection::NonzeroReserved { offset, value });
                }
            }
            Role::Constant {
                name,
                value: expected,
            } => {
                let value = byte_at(b, reg.start);
                if value != expected {
                    return Err(DecodeRejection::BadConstant {
                        field: name,
                        offset: reg.start,
                        value,
                        expected,
                    });
                }
            }
            Role::Live { name, domain } => {
                let bytes = slice(b, reg);
                let val =
                    wire_to_val(domain, bytes, chip).ok_or(DecodeRejection::BadFieldValue {
                        field: name,
                        offset: reg.start,
                        value: le_value(bytes),
                    })?;
                fields.push((name, val));
            }
            Role::Scratch { name, .. } => fields.push((name, Val::Int(le_value(slice(b, reg))))),
        }
    }
    Ok(Decoded {
        opcode,
        mnemonic: rec.mnemonic,
        fields,
    })
}

const ZERO: Val = Val::Int(0);

/// What the caller gave for one region's field.
#[derive(Clone, Copy)]
enum Given<'v> {
    Absent,
    Once(&'v Val),
    Twice,
}

/// The caller's fields sorted onto the record's regions in one pass over the field list (a
/// region table holds at most 64 regions, its field names are distinct), plus the first field
/// the table does not name.
struct Index<'v, 'n> {
    given: [Given<'v>; 64],
    unknown: Option<&'n str>,
}

impl<'v, 'n> Index<'v, 'n> {
    fn of(rec: &Record, fields: &'v [(&'n str, Val)]) -> Index<'v, 'n> {
        let mut ix = Index {
            given: [Given::Absent; 64],
            unknown: None,
        };
        // Callers list fields in table order, so the search starts after the last hit and
        // wraps; a record's field names are distinct (regions test), so the hit is the same.
        let n = rec.skeleton.len() + rec.body.len();
        let region = |k: usize| match k.checked_sub(rec.skeleton.len()) {
            None => rec.skeleton.get(k),
            Some(j) => rec.body.get(j),
        };
        let mut hint = 0;
        for (name, val) in fields {
            let at = (hint..n)
                .chain(0..hint)
                .find(|&k| region(k).is_some_and(|reg| reg.role.field_name() == Some(*name)));
            if let Some(k) = at {
                hint = k + 1;
            }
            match at.and_then(|k| ix.given.get_mut(k)) {
                Some(g) => {
                    *g = match *g {
                        Given::Absent => Given::Once(val),
                        _ => Given::Twice,
                    }
                }
                None => {
                    ix.unknown = ix.unknown.or(Some(*name));
                }
            }
        }
        ix
    }

    /// The single value given for region `k` named `name` (an absent optional field is 0).
    fn lookup(&self, k: usize, name: &'static str) -> Result<&'v Val, EncodeRejection> {
        match self.given.get(k).copied().unwrap_or(Given::Absent) {
            Given::Absent if OPTIONAL_FIELDS.contains(&name) => Ok(&ZERO),
            Given::Absent => Err(EncodeRejection::Missing { field: name }),
            Given::Twice => Err(EncodeRejection::Duplicate { field: name }),
            Given::Once(v) => Ok(v),
        }
    }
}

/// A field's wire bytes: the first `len` bytes of `bytes` (a field is at most a bundle wide).
struct Wire {
    bytes: [u8; 64],
    len: usize,
}

impl Wire {
    /// `src`, or None if it is wider than a bundle.
    fn of(src: &[u8]) -> Option<Wire> {
        let mut w = Wire {
            bytes: [0; 64],
            len: src.len(),
        };
        w.bytes.get_mut(..src.len())?.copy_from_slice(src);
        Some(w)
    }

    /// One byte.
    fn byte(value: u8) -> Wire {
        let mut bytes = [0; 64];
        bytes[0] = value;
        Wire { bytes, len: 1 }
    }

    fn as_slice(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or(&[])
    }
}

/// Turn a caller value into the field's wire bytes (exactly `width` of them).
fn val_to_wire(
    name: &'static str,
    domain: Domain,
    width: usize,
    val: &Val,
    chip: Generation,
) -> Result<Wire, EncodeRejection> {
    match (domain, val) {
        (Domain::Opaque, Val::Bytes(bytes)) => {
            match Wire::of(bytes).filter(|_| bytes.len() == width) {
                Some(wire) => Ok(wire),
                None => Err(EncodeRejection::BadLength {
                    field: name,
                    len: bytes.len(),
                    expected: width,
                }),
            }
        }
        (Domain::CceOpName, Val::Name(n)) => {
            let op = ALU
                .ordinal_of_name(n)
                .ok_or_else(|| EncodeRejection::UnknownName {
                    field: name,
                    name: n.clone(),
                })?;
            let wire = cce_wire(op).map_err(|cause| EncodeRejection::Lut { field: name, cause })?;
            Ok(Wire::byte(wire))
        }
        (Domain::KindName, Val::Name(n)) => {
            let kind =
                COLLECTIVE
                    .ordinal_of_name(n)
                    .ok_or_else(|| EncodeRejection::UnknownName {
                        field: name,
                        name: n.clone(),
                    })?;
            let wire = collective_wire(kind)
                .map_err(|cause| EncodeRejection::Lut { field: name, cause })?;
            Ok(Wire::byte(wire))
        }
        (
            Domain::Any
            | Domain::WaitMode
            | Domain::UpdateMode
            | Domain::ArgType
            | Domain::Flag
            | Domain::DtypeTag,
            Val::Int(value),
        ) => {
            let fits = width >= 8 || *value >> (8 * width) == 0;
            if !fits {
                return Err(EncodeRejection::TooWide {
                    field: name,
                    value: *value,
                    width,
                });
            }
            if !domain.admits(*value, chip) {
                return Err(EncodeRejection::BadValue {
                    field: name,
                    value: *value,
                });
            }
            let mut wire = Wire::byte(0);
            for (dst, src) in wire.bytes.iter_mut().zip(value.to_le_bytes()).take(width) {
                *dst = src;
            }
            wire.len = width.min(8);
            Ok(wire)
        }
        _ => Err(EncodeRejection::WrongKind {
            field: name,
            got: val.clone(),
        }),
    }
}

/// Write `bytes` into the region of `out` (never out of bounds).
fn put(out: &mut [u8; 64], reg: &Region, bytes: &[u8]) {
    for (dst, src) in out.iter_mut().skip(reg.start).take(reg.len).zip(bytes) {
        *dst = *src;
    }
}

/// Encode `opcode` from a named field list as `chip`'s compiler would; every byte not written
/// is zero (SPEC §5.2). An opcode that compiler cannot emit is refused first (D-22).
pub fn encode(
    opcode: u8,
    fields: &[(&str, Val)],
    chip: Generation,
) -> Result<[u8; 64], EncodeRejection> {
    let rec = record(opcode).ok_or(EncodeRejection::UnknownOpcode { opcode })?;
    if chip < rec.first_chip {
        return Err(EncodeRejection::NotOnChip { opcode, chip });
    }
    let index = Index::of(rec, fields);
    let mut out = [0u8; 64];
    for (k, reg) in rec.regions().enumerate() {
        match reg.role {
            Role::Opcode => put(&mut out, reg, &[opcode]),
            Role::Tag(value) | Role::Constant { value, .. } => put(&mut out, reg, &[value]),
            Role::Reserved(_) => {}
            Role::Live { name, domain } => {
                let wire = val_to_wire(name, domain, reg.len, index.lookup(k, name)?, chip)?;
                put(&mut out, reg, wire.as_slice());
            }
            Role::Scratch { name, .. } => {
                let wire = val_to_wire(name, Domain::Any, reg.len, index.lookup(k, name)?, chip)?;
                put(&mut out, reg, wire.as_slice());
            }
        }
    }
    if let Some(unknown) = index.unknown {
        return Err(EncodeRejection::UnknownField {
            name: unknown.to_string(),
        });
    }
    run_record_chain(rec, &out, chip).map_err(EncodeRejection::Invalid)?;
    Ok(out)
}

/// Encode a whole custom-op group (SPEC §5.3): header, output payload, one payload per arg.
/// The events band `(wait_mode, wait_idx, update_mode, update_idx, semaphore_value)` rides on
/// the header only; the payloads' bands stay zero and their `arg_type` is TENSOR (SPEC D-19,
/// D-23: S000 §C3/§R2/§R4 name header bytes only, `[0x0F]=1`).
pub fn encode_custom_op_group(
    function_id: u8,
    sync: (u8, u8, u8, u8, u32),
    output_ap: &[u8; 48],
    arg_aps: &[[u8; 48]],
    chip: Generation,
) -> Result<Vec<[u8; 64]>, EncodeRejection> {
    let n_args = arg_aps.len();
    if n_args > usize::from(u8::MAX) {
        return Err(EncodeRejection::TooManyArgs { n_args });
    }
    let n = n_args as u64;
    let (wait_mode, wait_idx, update_mode, update_idx, value) = sync;
    let band = [
        ("wait_mode", Val::Int(u64::from(wait_mode))),
        ("wait_idx", Val::Int(u64::from(wait_idx))),
        ("update_mode", Val::Int(u64::from(update_mode))),
        ("update_idx", Val::Int(u64::from(update_idx))),
        ("semaphore_value", Val::Int(u64::from(value))),
    ];
    let mut header: Vec<(&str, Val)> = band.to_vec();
    header.extend([
        ("num_payloads", Val::Int(n + 2)),
        ("function_id", Val::Int(u64::from(function_id))),
        ("num_arguments", Val::Int(n)),
        ("has_scratch_space", Val::Int(0)),
        ("scratch_space_addr", Val::Int(0)),
        ("scratch_space_size", Val::Int(0)),
        ("scratch_space_num_partitions", Val::Int(0)),
    ]);
    let mut out = Vec::with_capacity(n_args + 2);
    out.push(encode(0x85, &header, chip)?);
    let quiet = [
        ("wait_mode", Val::Int(0)),
        ("wait_idx", Val::Int(0)),
        ("update_mode", Val::Int(0)),
        ("update_idx", Val::Int(0)),
        ("semaphore_value", Val::Int(0)),
        ("arg_type", Val::Int(1)),
    ];
    for ap in std::iter::once(output_ap).chain(arg_aps.iter()) {
        let mut payload: Vec<(&str, Val)> = quiet.to_vec();
        payload.push(("ap", Val::Bytes(ap.to_vec())));
        out.push(encode(0x86, &payload, chip)?);
    }
    Ok(out)
}
