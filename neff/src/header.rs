//! The 1024-byte NEFF header (FACTS §10 \[R\]: offsets read from a real file; each field
//! naturally aligned, little-endian assumed). No magic number: the checks are header_size ==
//! 1024 and 1024 + data_size <= file size.

use crate::NeffError;

/// Header length in bytes (FACTS §10).
pub const HEADER_SIZE: usize = 1024;

/// Which digest covers the payload (FACTS §10: pkg_version selects it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HashKind {
    /// pkg_version 1: SHA-256, all 32 bytes of `hash`.
    Sha256,
    /// pkg_version 2: MD5, the first 16 bytes of `hash`.
    Md5,
    /// Any other pkg_version: not verified (said, not guessed).
    Unknown(u64),
}

impl HashKind {
    /// The name printed for it.
    pub fn name(&self) -> &'static str {
        match self {
            HashKind::Sha256 => "sha-256",
            HashKind::Md5 => "md5",
            HashKind::Unknown(_) => "unknown",
        }
    }
}

/// The header fields of FACTS §10, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// 0x000: packaging version; selects the hash.
    pub pkg_version: u64,
    /// 0x008: 1024.
    pub header_size: u64,
    /// 0x010: payload length in bytes.
    pub data_size: u64,
    /// 0x018.
    pub neff_version_major: u64,
    /// 0x020.
    pub neff_version_minor: u64,
    /// 0x028, 128 bytes of text (up to the first NUL).
    pub build_version: String,
    /// 0x0A8: TPBs needed (one per subgraph).
    pub num_tpb: u32,
    /// 0x0AC: SHA-256, or MD5 in the first 16 bytes.
    pub hash: [u8; 32],
    /// 0x0CC.
    pub uuid: [u8; 16],
    /// 0x0DC, 256 bytes of text (up to the first NUL).
    pub name: String,
    /// 0x1DC.
    pub requested_tpb_count: u32,
    /// 0x1E0: one byte per node.
    pub tpb_per_node: [u8; 64],
    /// 0x220: incompatible-feature bits.
    pub feature_bits: u64,
    /// 0x228: logical-core size.
    pub lnc_size: u32,
}

fn u64_at(b: &[u8; HEADER_SIZE], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

fn u32_at(b: &[u8; HEADER_SIZE], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

/// Text up to the first NUL, lossy (a header field, shown, never trusted).
fn text_at(b: &[u8; HEADER_SIZE], at: usize, len: usize) -> String {
    let f = &b[at..at + len];
    let end = f.iter().position(|&c| c == 0).unwrap_or(len);
    String::from_utf8_lossy(&f[..end]).into_owned()
}

impl Header {
    /// Reads the fields of `b` and checks header_size; `file_size` checks data_size.
    pub fn parse(b: &[u8; HEADER_SIZE], file_size: u64) -> Result<Header, NeffError> {
        let mut hash = [0u8; 32];
        hash.copy_from_slice(&b[0x0AC..0x0CC]);
        let mut uuid = [0u8; 16];
        uuid.copy_from_slice(&b[0x0CC..0x0DC]);
        let mut tpb_per_node = [0u8; 64];
        tpb_per_node.copy_from_slice(&b[0x1E0..0x220]);
        let h = Header {
            pkg_version: u64_at(b, 0x000),
            header_size: u64_at(b, 0x008),
            data_size: u64_at(b, 0x010),
            neff_version_major: u64_at(b, 0x018),
            neff_version_minor: u64_at(b, 0x020),
            build_version: text_at(b, 0x028, 128),
            num_tpb: u32_at(b, 0x0A8),
            hash,
            uuid,
            name: text_at(b, 0x0DC, 256),
            requested_tpb_count: u32_at(b, 0x1DC),
            tpb_per_node,
            feature_bits: u64_at(b, 0x220),
            lnc_size: u32_at(b, 0x228),
        };
        if h.header_size != HEADER_SIZE as u64 {
            return Err(NeffError::HeaderSize {
                header_size: h.header_size,
            });
        }
        let available = file_size.saturating_sub(HEADER_SIZE as u64);
        if h.data_size > available {
            return Err(NeffError::DataSize {
                data_size: h.data_size,
                available,
            });
        }
        if h.data_size == 0 {
            return Err(NeffError::EmptyPayload);
        }
        Ok(h)
    }

    /// The digest pkg_version selects (FACTS §10).
    pub fn hash_kind(&self) -> HashKind {
        match self.pkg_version {
            1 => HashKind::Sha256,
            2 => HashKind::Md5,
            v => HashKind::Unknown(v),
        }
    }

    /// The expected digest as hex (32 bytes for SHA-256, 16 for MD5, all 32 when unknown).
    pub fn hash_hex(&self) -> String {
        let n = match self.hash_kind() {
            HashKind::Md5 => 16,
            _ => 32,
        };
        hex(&self.hash[..n])
    }

    /// Writes the header (the inverse of [`Header::parse`]; for the sample builder and tests).
    pub fn to_bytes(&self) -> [u8; HEADER_SIZE] {
        let mut b = [0u8; HEADER_SIZE];
        b[0x000..0x008].copy_from_slice(&self.pkg_version.to_le_bytes());
        b[0x008..0x010].copy_from_slice(&self.header_size.to_le_bytes());
        b[0x010..0x018].copy_from_slice(&self.data_size.to_le_bytes());
        b[0x018..0x020].copy_from_slice(&self.neff_version_major.to_le_bytes());
        b[0x020..0x028].copy_from_slice(&self.neff_version_minor.to_le_bytes());
        let bv = self.build_version.as_bytes();
        b[0x028..0x028 + bv.len().min(127)].copy_from_slice(&bv[..bv.len().min(127)]);
        b[0x0A8..0x0AC].copy_from_slice(&self.num_tpb.to_le_bytes());
        b[0x0AC..0x0CC].copy_from_slice(&self.hash);
        b[0x0CC..0x0DC].copy_from_slice(&self.uuid);
        let nm = self.name.as_bytes();
        b[0x0DC..0x0DC + nm.len().min(255)].copy_from_slice(&nm[..nm.len().min(255)]);
        b[0x1DC..0x1E0].copy_from_slice(&self.requested_tpb_count.to_le_bytes());
        b[0x1E0..0x220].copy_from_slice(&self.tpb_per_node);
        b[0x220..0x228].copy_from_slice(&self.feature_bits.to_le_bytes());
        b[0x228..0x22C].copy_from_slice(&self.lnc_size.to_le_bytes());
        b
    }
}

/// Lower-case hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            pkg_version: 1,
            header_size: 1024,
            data_size: 10,
            neff_version_major: 2,
            neff_version_minor: 0,
            build_version: "b".into(),
            num_tpb: 1,
            hash: [7; 32],
            uuid: [1; 16],
            name: "n".into(),
            requested_tpb_count: 1,
            tpb_per_node: [0; 64],
            feature_bits: 0,
            lnc_size: 1,
        }
    }

    #[test]
    fn fields_round_trip_at_the_facts_offsets() {
        let h = sample();
        let b = h.to_bytes();
        assert_eq!(b[0x0AC], 7);
        assert_eq!(b[0x0CB], 7);
        assert_eq!(b[0x0CC], 1);
        assert_eq!(Header::parse(&b, 1034), Ok(h));
    }

    #[test]
    fn header_size_and_lying_data_size_are_refused() {
        let mut h = sample();
        assert_eq!(
            Header::parse(&h.to_bytes(), 1033),
            Err(NeffError::DataSize {
                data_size: 10,
                available: 9
            })
        );
        h.header_size = 512;
        assert!(matches!(
            Header::parse(&h.to_bytes(), 4096),
            Err(NeffError::HeaderSize { header_size: 512 })
        ));
        let mut h = sample();
        h.data_size = u64::MAX;
        assert!(matches!(
            Header::parse(&h.to_bytes(), 4096),
            Err(NeffError::DataSize { .. })
        ));
    }
}
