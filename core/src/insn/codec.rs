//! The field walk every synced record shares: each struct field sits at its table offset
//! (`crate::layout::<record>::OFF_*`, generated from isa/records.tsv) as little-endian bytes,
//! and is named in the SPEC §5.2 field list by its struct name. [`record_codec!`] writes a
//! record's `encode`, `push_fields`, `from_source` and `read_fields` from that list, so a
//! record file states only its fields and the checks that are logic.

use super::fields::{bytes, int, FieldValue, Source};
use super::EncodeError;
use crate::bundle::Bundle;

/// A value stored in one record field as little-endian bytes (SPEC §5).
pub(crate) trait Wire: Copy {
    /// Reads it at `off` of a bundle the layout check accepted.
    fn read(b: &Bundle, off: usize) -> Self;
    /// Writes it at `off`.
    fn write(self, b: &mut Bundle, off: usize);
    /// Its SPEC §5.2 field value.
    fn value(self) -> FieldValue;
    /// Takes it from a `from_fields` input.
    fn take<S: AsRef<str>>(src: &Source<'_, S>, field: &'static str) -> Result<Self, EncodeError>;
}

macro_rules! wire_int {
    ($($t:ty => $take:ident),*) => {$(
        impl Wire for $t {
            fn read(b: &Bundle, off: usize) -> Self {
                <$t>::from_le_bytes(b.bytes(off))
            }
            fn write(self, b: &mut Bundle, off: usize) {
                b.put(off, &self.to_le_bytes());
            }
            fn value(self) -> FieldValue {
                int(self)
            }
            fn take<S: AsRef<str>>(
                src: &Source<'_, S>,
                field: &'static str,
            ) -> Result<Self, EncodeError> {
                src.$take(field)
            }
        }
    )*};
}

wire_int!(u8 => u8, u16 => u16, u32 => u32, u64 => u64);

/// A 0/1 flag byte (the table kind `flag`, D-7); another input value is
/// [`EncodeError::Valid`] (the one flag field, 0xDC `valid`).
impl Wire for bool {
    fn read(b: &Bundle, off: usize) -> Self {
        b.byte(off) == 1
    }
    fn write(self, b: &mut Bundle, off: usize) {
        b.put(off, &[u8::from(self)]);
    }
    fn value(self) -> FieldValue {
        int(u8::from(self))
    }
    fn take<S: AsRef<str>>(src: &Source<'_, S>, field: &'static str) -> Result<Self, EncodeError> {
        match src.int(field, u64::MAX)? {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(EncodeError::Valid { value }),
        }
    }
}

/// An opaque byte range (access patterns, D-5).
impl<const N: usize> Wire for [u8; N] {
    fn read(b: &Bundle, off: usize) -> Self {
        b.bytes(off)
    }
    fn write(self, b: &mut Bundle, off: usize) {
        b.put(off, &self);
    }
    fn value(self) -> FieldValue {
        bytes(&self)
    }
    fn take<S: AsRef<str>>(src: &Source<'_, S>, field: &'static str) -> Result<Self, EncodeError> {
        src.bytes(field)
    }
}

/// The codec of a record with a sync band whose other fields are [`Wire`] values:
/// `record_codec!(Type, table_module, [check = whole_record_check,] { field @ OFF_FIELD
/// [=> value_check], … })`, fields in SPEC §5.2 order. A `value_check(field, value, gen)`
/// refuses a value in list order (encode and `from_fields`); the whole-record check runs once
/// every field is known. `encode` writes the skeleton, the fields and the table's constant
/// bytes. `unsynced` after the table names a record without a sync band (0xDA).
/// `decoded_by_table Type, …` adds the `decode` of a record the table's byte rules
/// check (the custom-op records decode through their validators instead).
macro_rules! record_codec {
    (@skeleton $s:ident [$sync:ident]) => {
        super::custom_op::skeleton(Self::OPCODE, &$s.$sync)
    };
    // No sync band: the opcode stamped raw onto a zeroed record (0xDA, D-3).
    (@skeleton $s:ident []) => {{
        let mut b = crate::bundle::Bundle::ZERO;
        b.put(crate::layout::OFF_OPCODE, &[Self::OPCODE]);
        b
    }};
    (@known [$sync:ident]) => {
        [&super::sync_band::SYNC_FIELDS[..], &Self::FIELDS[..]]
    };
    (@known []) => {
        [&Self::FIELDS[..]]
    };
    (decoded_by_table $ty:ident, $table:ident, $($rest:tt)*) => {
        record_codec!($ty, $table, $($rest)*);

        impl $ty {
            /// Decodes an encoder image: the opcode, then the table's byte rules (SPEC §5.1).
            pub fn decode(
                b: &crate::bundle::Bundle,
                gen: crate::generation::Generation,
            ) -> Result<Self, super::DecodeError> {
                super::expect_opcode(b, Self::OPCODE, gen)?;
                super::check::check(b, crate::layout::$table::DEF, gen)?;
                Ok(Self::read_fields(b))
            }
        }
    };
    ($ty:ident, $table:ident, unsynced, $($rest:tt)*) => {
        record_codec!(@impl [] $ty, $table, $($rest)*);
    };
    (@impl [$($sync:ident)?]
        $ty:ident, $table:ident, $(check = $whole:ident,)?
        { $($field:ident @ $off:ident $(=> $check:ident)?),* $(,)? }
    ) => {
        impl $ty {
            table_consts!($table);

            /// Encodes as the generation's compiler does (the struct's source; SPEC §5).
            pub fn encode(
                &self,
                gen: crate::generation::Generation,
            ) -> Result<crate::bundle::Bundle, super::EncodeError> {
                use super::codec::Wire;
                super::custom_op::emitted(gen, Self::OPCODE)?;
                $(self.$sync.check()?;)?
                $(self.$whole()?;)?
                let mut b = record_codec!(@skeleton self [$($sync)?]);
                $(
                    $($check(stringify!($field), self.$field, gen)?;)?
                    self.$field.write(&mut b, crate::layout::$table::$off);
                )*
                for f in crate::layout::$table::DEF.fields {
                    if let crate::layout::FieldKind::Constant(v) = f.kind {
                        b.put(f.offset, &[v; 64][..f.width]);
                    }
                }
                Ok(b)
            }

            /// Reads the fields of a bundle its decoder's checks accepted.
            fn read_fields(b: &crate::bundle::Bundle) -> Self {
                use super::codec::Wire;
                $ty {
                    $($sync: super::sync_band::Sync::read(b),)?
                    $($field: Wire::read(b, crate::layout::$table::$off),)*
                }
            }

            pub(crate) fn push_fields(&self, out: &mut super::fields::FieldList) {
                use super::codec::Wire;
                $(self.$sync.push_fields(out);)?
                $(out.push((stringify!($field), self.$field.value()));)*
            }

            pub(crate) fn from_source<S: AsRef<str>>(
                src: &super::fields::Source<'_, S>,
                gen: crate::generation::Generation,
            ) -> Result<Self, super::EncodeError> {
                use super::codec::Wire;
                super::custom_op::emitted(gen, Self::OPCODE)?;
                let v = $ty {
                    $($sync: super::sync_band::Sync::from_source(src)?,)?
                    $($field: {
                        let v = Wire::take(src, stringify!($field))?;
                        $($check(stringify!($field), v, gen)?;)?
                        v
                    },)*
                };
                $(v.$whole()?;)?
                src.reject_unknown(&record_codec!(@known [$($sync)?]))?;
                Ok(v)
            }
        }
    };
    ($ty:ident, $table:ident, $($rest:tt)*) => {
        record_codec!(@impl [sync] $ty, $table, $($rest)*);
    };
}
