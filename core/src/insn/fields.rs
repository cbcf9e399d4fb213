//! The canonical field list (SPEC §5.2) and its input side (`from_fields`).

use super::EncodeError;
use core::fmt;

/// One decoded field value (SPEC §5.2 value kinds).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum FieldValue {
    /// Unsigned integer.
    Int(u64),
    /// A name from the SPEC §6 tables (AluOp, CollectiveKind).
    Name(String),
    /// A byte range (printed as lowercase hex).
    Bytes(Vec<u8>),
}

impl FieldValue {
    /// The SPEC §5.2 kind word: `int`, `name` or `bytes`.
    pub fn kind(&self) -> &'static str {
        match self {
            FieldValue::Int(_) => "int",
            FieldValue::Name(_) => "name",
            FieldValue::Bytes(_) => "bytes",
        }
    }
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Int(v) => write!(f, "{v}"),
            FieldValue::Name(n) => f.write_str(n),
            FieldValue::Bytes(b) => b.iter().try_for_each(|x| write!(f, "{x:02x}")),
        }
    }
}

impl From<u64> for FieldValue {
    fn from(v: u64) -> Self {
        FieldValue::Int(v)
    }
}

/// Canonical field list: `(name, value)` in SPEC §5.2 order.
pub type FieldList = Vec<(&'static str, FieldValue)>;

/// Looks fields up by name for `from_fields`, in the caller's (list) order.
pub(crate) struct Source<'a, S: AsRef<str>> {
    input: &'a [(S, FieldValue)],
}

impl<'a, S: AsRef<str>> Source<'a, S> {
    pub(crate) fn new(input: &'a [(S, FieldValue)]) -> Self {
        Source { input }
    }

    fn get(&self, field: &'static str) -> Result<&'a FieldValue, EncodeError> {
        let mut it = self.input.iter().filter(|(n, _)| n.as_ref() == field);
        let first = it.next().ok_or(EncodeError::Missing { field })?;
        if it.next().is_some() {
            return Err(EncodeError::Duplicate { field });
        }
        Ok(&first.1)
    }

    pub(crate) fn int(&self, field: &'static str, max: u64) -> Result<u64, EncodeError> {
        match self.get(field)? {
            FieldValue::Int(v) if *v <= max => Ok(*v),
            FieldValue::Int(v) => Err(EncodeError::DoesNotFit { field, value: *v }),
            _ => Err(EncodeError::WrongKind { field }),
        }
    }

    pub(crate) fn u8(&self, field: &'static str) -> Result<u8, EncodeError> {
        self.int(field, u64::from(u8::MAX))
            .map(|v| u8::try_from(v).unwrap_or(0))
    }

    /// An optional u8 field: 0 when absent (the debug bytes, "encoders write 0 unless given").
    pub(crate) fn opt_u8(&self, field: &'static str) -> Result<u8, EncodeError> {
        if self.input.iter().any(|(n, _)| n.as_ref() == field) {
            self.u8(field)
        } else {
            Ok(0)
        }
    }

    pub(crate) fn u16(&self, field: &'static str) -> Result<u16, EncodeError> {
        self.int(field, u64::from(u16::MAX))
            .map(|v| u16::try_from(v).unwrap_or(0))
    }

    pub(crate) fn u32(&self, field: &'static str) -> Result<u32, EncodeError> {
        self.int(field, u64::from(u32::MAX))
            .map(|v| u32::try_from(v).unwrap_or(0))
    }

    pub(crate) fn u64(&self, field: &'static str) -> Result<u64, EncodeError> {
        self.int(field, u64::MAX)
    }

    pub(crate) fn name(&self, field: &'static str) -> Result<&'a str, EncodeError> {
        match self.get(field)? {
            FieldValue::Name(n) => Ok(n.as_str()),
            _ => Err(EncodeError::WrongKind { field }),
        }
    }

    pub(crate) fn bytes<const N: usize>(
        &self,
        field: &'static str,
    ) -> Result<[u8; N], EncodeError> {
        match self.get(field)? {
            FieldValue::Bytes(b) => {
                <[u8; N]>::try_from(b.as_slice()).map_err(|_| EncodeError::BadLength {
                    field,
                    len: b.len(),
                })
            }
            _ => Err(EncodeError::WrongKind { field }),
        }
    }

    /// Any input name not in `known` is an error (reported after list-order checks).
    pub(crate) fn reject_unknown(&self, known: &[&[&str]]) -> Result<(), EncodeError> {
        match self
            .input
            .iter()
            .position(|(n, _)| !known.iter().any(|k| k.contains(&n.as_ref())))
        {
            Some(position) => Err(EncodeError::UnknownField { position }),
            None => Ok(()),
        }
    }
}

pub(crate) fn int(v: impl Into<u64>) -> FieldValue {
    FieldValue::Int(v.into())
}

pub(crate) fn bytes(b: &[u8]) -> FieldValue {
    FieldValue::Bytes(b.to_vec())
}

pub(crate) fn name(n: &str) -> FieldValue {
    FieldValue::Name(n.to_string())
}
