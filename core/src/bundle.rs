//! The 64-byte bundle (SPEC §1).

use crate::layout::{BUNDLE_LEN, OFF_OPCODE};
use core::fmt;

/// One 64-byte TPB ISA bundle. S003 §Abstract "std::array<unsigned char, 64>".
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Bundle(pub [u8; 64]);

/// A byte slice of the wrong length was offered as a bundle.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct LengthError {
    /// The length that was offered.
    pub len: usize,
}

impl fmt::Display for LengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bundle must be {} bytes, got {}", BUNDLE_LEN, self.len)
    }
}

impl std::error::Error for LengthError {}

impl Default for Bundle {
    fn default() -> Self {
        Bundle::ZERO
    }
}

impl Bundle {
    /// Bundle length in bytes.
    pub const LEN: usize = BUNDLE_LEN;
    /// The all-zero bundle every encoder starts from (S003 §Abstract "pxor-zeroed in full").
    pub const ZERO: Bundle = Bundle([0; 64]);

    /// Copies exactly 64 bytes into a bundle.
    pub fn from_slice(bytes: &[u8]) -> Result<Bundle, LengthError> {
        <[u8; 64]>::try_from(bytes)
            .map(Bundle)
            .map_err(|_| LengthError { len: bytes.len() })
    }

    /// The raw bytes.
    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.0
    }

    /// The opcode byte (byte 0).
    pub fn opcode(&self) -> u8 {
        self.0[OFF_OPCODE]
    }

    fn array_at<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        let end = off.checked_add(N)?;
        let s = self.0.get(off..end)?;
        <[u8; N]>::try_from(s).ok()
    }

    /// Byte at `off`, `None` when out of range.
    pub fn u8_at(&self, off: usize) -> Option<u8> {
        self.0.get(off).copied()
    }

    /// Little-endian u16 at `off`, `None` when it does not fit in the bundle.
    pub fn u16_at(&self, off: usize) -> Option<u16> {
        self.array_at(off).map(u16::from_le_bytes)
    }

    /// Little-endian u32 at `off`, `None` when it does not fit in the bundle.
    pub fn u32_at(&self, off: usize) -> Option<u32> {
        self.array_at(off).map(u32::from_le_bytes)
    }

    /// Little-endian u64 at `off`, `None` when it does not fit in the bundle.
    pub fn u64_at(&self, off: usize) -> Option<u64> {
        self.array_at(off).map(u64::from_le_bytes)
    }

    /// The eight little-endian qwords of the bundle (the validators' view, S000).
    /// Constant indices into the 64-byte array: no bounds check nor slice copy
    /// survives optimisation (each qword is one load), and none is left for the
    /// fuzz build's debug-assertion checks to instrument.
    #[inline(always)]
    pub fn qwords(&self) -> [u64; 8] {
        let b = &self.0;
        let q = |i: usize| {
            u64::from_le_bytes([
                b[i],
                b[i + 1],
                b[i + 2],
                b[i + 3],
                b[i + 4],
                b[i + 5],
                b[i + 6],
                b[i + 7],
            ])
        };
        [q(0), q(8), q(16), q(24), q(32), q(40), q(48), q(56)]
    }

    /// Lowercase hex of the 64 bytes (128 digits).
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(128);
        for b in self.0 {
            s.push(hex_digit(b >> 4));
            s.push(hex_digit(b & 0xF));
        }
        s
    }

    /// Parses exactly 128 hex digits (either case).
    pub fn from_hex(s: &str) -> Option<Bundle> {
        let s = s.as_bytes();
        if s.len() != 128 {
            return None;
        }
        let mut out = [0u8; 64];
        for (o, pair) in out.iter_mut().zip(s.chunks_exact(2)) {
            let hi = hex_val(*pair.first()?)?;
            let lo = hex_val(*pair.get(1)?)?;
            *o = (hi << 4) | lo;
        }
        Some(Bundle(out))
    }

    /// Writes `bytes` at `off` (crate-internal; offsets are constants).
    pub(crate) fn put(&mut self, off: usize, bytes: &[u8]) {
        if let Some(dst) = off
            .checked_add(bytes.len())
            .and_then(|end| self.0.get_mut(off..end))
        {
            dst.copy_from_slice(bytes);
        }
    }

    /// Byte at a crate-internal constant offset (0 if out of range; never happens).
    pub(crate) fn byte(&self, off: usize) -> u8 {
        self.0.get(off).copied().unwrap_or(0)
    }

    /// `N` bytes at a crate-internal constant offset (zeros if out of range; never happens).
    pub(crate) fn bytes<const N: usize>(&self, off: usize) -> [u8; N] {
        self.array_at(off).unwrap_or([0; N])
    }
}

fn hex_digit(n: u8) -> char {
    char::from(
        b"0123456789abcdef"
            .get(usize::from(n & 0xF))
            .copied()
            .unwrap_or(b'0'),
    )
}

fn hex_val(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

impl From<[u8; 64]> for Bundle {
    fn from(b: [u8; 64]) -> Self {
        Bundle(b)
    }
}

impl AsRef<[u8]> for Bundle {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}
