//! What the oracle's integration tests share (a test file declares `mod common;`).
#![allow(dead_code)]

/// Build an image from (offset, bytes) pieces over zeros.
pub fn img(pieces: &[(usize, &[u8])]) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (off, bytes) in pieces {
        b[*off..*off + bytes.len()].copy_from_slice(bytes);
    }
    b
}
