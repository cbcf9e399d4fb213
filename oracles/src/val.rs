//! The value of a decoded field (SPEC §5.2 value kinds), shared by the codec
//! and the rejections that carry a bad value.

/// A decoded field value (SPEC §5.2 value kinds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    Int(u64),
    Name(String),
    Bytes(Vec<u8>),
}
