//! Opening a NEFF: the header, then the payload as one stream: the file's `data_size` bytes
//! after the header, hashed as they are read (FACTS §10: the hash covers the payload, not the
//! header), gunzipped when they start 1f 8b, capped in decompressed size (the gzip-bomb cap),
//! and cut into tar members by [`crate::tar::TarReader`]. Memory is bounded whatever the size.

use crate::header::{hex, HashKind, Header, HEADER_SIZE};
use crate::tar::TarReader;
use crate::NeffError;
use md5::Md5;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufReader, Read, Take};

/// The caps that keep a hostile NEFF's cost bounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Decompressed payload cap, as a multiple of the compressed payload (the gzip-bomb cap).
    pub max_ratio: u64,
    /// ... but never below this many bytes.
    pub min_cap: u64,
    /// Members (regular files) at most.
    pub max_members: usize,
    /// A JSON member (def.json, engine JSON) is read whole up to this size.
    pub max_json: u64,
    /// All JSON members kept at once, at most (bytes).
    pub max_json_total: u64,
    /// Bytes of members held while their role is undecided (def.json later in the tar).
    pub max_pending: u64,
}

impl Default for Limits {
    /// 200:1 over at least 64 MiB, 100 000 members, 16 MiB per JSON, 256 MiB of JSON,
    /// 256 MiB undecided.
    fn default() -> Self {
        Limits {
            max_ratio: 200,
            min_cap: 64 << 20,
            max_members: 100_000,
            max_json: 16 << 20,
            max_json_total: 256 << 20,
            max_pending: 256 << 20,
        }
    }
}

/// How the payload is stored (detected by content, FACTS §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Starts 1f 8b.
    Gzip,
    /// `ustar` at +257.
    Tar,
}

impl Compression {
    /// `gzip` or `tar`.
    pub fn name(&self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Tar => "tar (uncompressed)",
        }
    }
}

enum Hasher {
    Sha(Box<Sha256>),
    Md5(Md5),
    None,
}

impl Hasher {
    fn update(&mut self, b: &[u8]) {
        match self {
            Hasher::Sha(h) => h.update(b),
            Hasher::Md5(h) => h.update(b),
            Hasher::None => {}
        }
    }

    fn finish(self) -> Option<Vec<u8>> {
        match self {
            Hasher::Sha(h) => Some(h.finalize().to_vec()),
            Hasher::Md5(h) => Some(h.finalize().to_vec()),
            Hasher::None => None,
        }
    }
}

/// Bytes per block the reading thread hands on.
const RAW_BLOCK: usize = 1 << 20;

/// The file's payload bytes, read and hashed on a second thread (so the digest overlaps the
/// decompression), handed on in blocks; memory: four blocks in flight.
struct Hashed {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    back: std::sync::mpsc::SyncSender<Vec<u8>>,
    block: Vec<u8>,
    at: usize,
    done: bool,
    thread: Option<std::thread::JoinHandle<Option<Vec<u8>>>>,
}

impl Hashed {
    fn new(mut inner: Take<File>, mut hasher: Hasher) -> Hashed {
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(4);
        let (back, back_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
        let thread = std::thread::spawn(move || loop {
            let mut buf = back_rx.try_recv().unwrap_or_default();
            buf.resize(RAW_BLOCK, 0);
            let mut got = 0;
            while got < RAW_BLOCK {
                match inner.read(&mut buf[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return None;
                    }
                }
            }
            buf.truncate(got);
            hasher.update(&buf);
            let end = got == 0;
            if tx.send(Ok(buf)).is_err() {
                return None;
            }
            if end {
                return hasher.finish();
            }
        });
        Hashed {
            rx,
            back,
            block: Vec::new(),
            at: 0,
            done: false,
            thread: Some(thread),
        }
    }

    /// Reads to the end and returns the digest (`None`: no digest for this pkg_version).
    fn digest(mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut sink = [0u8; 1 << 16];
        while self.read(&mut sink)? > 0 {}
        let t = self.thread.take().expect("the reading thread");
        Ok(t.join().unwrap_or(None))
    }
}

impl Read for Hashed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.block.len() {
            if self.done {
                return Ok(0);
            }
            match self.rx.recv() {
                Ok(Ok(b)) => {
                    let old = std::mem::replace(&mut self.block, b);
                    let _ = self.back.try_send(old);
                    self.at = 0;
                    if self.block.is_empty() {
                        self.done = true;
                    }
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    self.done = true;
                    return Err(std::io::Error::other("the payload reader stopped"));
                }
            }
        }
        let n = buf.len().min(self.block.len() - self.at);
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

enum Decoded {
    Gzip(Members),
    Plain(BufReader<Hashed>),
}

/// The gzip members of a payload, read one after the other as `gzip -dc` does (RFC 1952 §2.2: a
/// gzip file is a series of members). A member follows when the bytes after one start 1f 8b;
/// any other bytes after the last member are hashed, not read (as `gzip -dc` ignores them).
struct Members(Option<Box<flate2::bufread::GzDecoder<BufReader<Hashed>>>>);

impl Members {
    fn new(raw: BufReader<Hashed>) -> Self {
        Members(Some(Box::new(flate2::bufread::GzDecoder::new(raw))))
    }

    fn into_inner(self) -> Option<BufReader<Hashed>> {
        self.0.map(|g| g.into_inner())
    }
}

impl Read for Members {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::BufRead;
        loop {
            let Some(g) = self.0.as_mut() else {
                return Ok(0);
            };
            let n = g.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            let next = g.get_mut().fill_buf()?;
            if !matches!(next, [0x1f, 0x8b, ..] | [0x1f]) {
                return Ok(0);
            }
            let raw = self.0.take().map(|g| g.into_inner());
            self.0 = raw.map(|r| Box::new(flate2::bufread::GzDecoder::new(r)));
        }
    }
}

/// The decompressed payload, capped; decoder and read errors become [`NeffError`]s.
pub struct Capped {
    inner: Decoded,
    count: u64,
    cap: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let r = match &mut self.inner {
            Decoded::Gzip(g) => g.read(buf).map_err(|e| {
                let reason = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    "the gzip stream is truncated".to_string()
                } else {
                    format!("corrupt gzip stream: {e}")
                };
                NeffError::Gzip {
                    member: "-".into(),
                    reason,
                }
                .into_io()
            }),
            Decoded::Plain(p) => p.read(buf).map_err(|e| {
                NeffError::Io {
                    path: "payload".into(),
                    error: e.to_string(),
                }
                .into_io()
            }),
        }?;
        self.count += n_u64(r);
        if self.count > self.cap {
            return Err(NeffError::TooBig {
                member: "-".into(),
                what: "the decompressed payload (gzip-bomb cap: max_ratio x the payload, at least min_cap bytes; `--max-ratio` raises it)",
                cap: self.cap,
            }
            .into_io());
        }
        Ok(r)
    }
}

fn n_u64(n: usize) -> u64 {
    n as u64
}

/// An opened NEFF: its header and its payload's members.
pub struct Neff {
    /// The header.
    pub header: Header,
    /// How the payload is stored.
    pub compression: Compression,
    /// Bytes after the payload that no header field accounts for (ignored).
    pub trailing: u64,
    /// The members.
    pub tar: TarReader<Capped>,
}

/// What [`Neff::finish`] found of the payload's integrity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Integrity {
    /// The digest pkg_version selects matched the header's hash.
    Verified(HashKind),
    /// pkg_version is not one whose hash is known (FACTS §10): not verified.
    NotVerified {
        /// The pkg_version read.
        pkg_version: u64,
    },
}

/// Refuses anything but a regular file (a symlink too, even to a regular file: the project's
/// readers of named files do so; `check` on raw streams reads FIFOs, a NEFF needs a second
/// look at the file).
pub fn regular_file(path: &std::path::Path) -> Result<File, NeffError> {
    let shown = path.display().to_string();
    let io = |e: std::io::Error| NeffError::Io {
        path: shown.clone(),
        error: e.to_string(),
    };
    let meta = std::fs::symlink_metadata(path).map_err(io)?;
    let ft = meta.file_type();
    if !ft.is_file() {
        return Err(NeffError::NotRegular {
            path: shown,
            kind: file_kind(&ft),
        });
    }
    let f = File::open(path).map_err(io)?;
    // The file opened must still be the regular file looked at (no swap to a FIFO in between).
    if !f.metadata().map_err(io)?.is_file() {
        return Err(NeffError::NotRegular {
            path: shown,
            kind: "special file",
        });
    }
    Ok(f)
}

/// A file type in words.
pub fn file_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_symlink() {
        "symlink"
    } else if ft.is_dir() {
        "folder"
    } else if ft.is_fifo() {
        "FIFO"
    } else if ft.is_char_device() {
        "character device"
    } else if ft.is_block_device() {
        "block device"
    } else if ft.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

impl Neff {
    /// Opens the NEFF at `path` (a regular file): reads and checks the header and detects the
    /// payload's form.
    pub fn open(path: &std::path::Path, limits: &Limits) -> Result<Neff, NeffError> {
        let shown = path.display().to_string();
        let io = |e: std::io::Error| NeffError::Io {
            path: shown.clone(),
            error: e.to_string(),
        };
        let mut f = regular_file(path)?;
        let size = f.metadata().map_err(io)?.len();
        if size < HEADER_SIZE as u64 {
            return Err(NeffError::TooShort { size });
        }
        let mut hb = [0u8; HEADER_SIZE];
        f.read_exact(&mut hb).map_err(io)?;
        let header = Header::parse(&hb, size)?;
        let hasher = match header.hash_kind() {
            HashKind::Sha256 => Hasher::Sha(Box::default()),
            HashKind::Md5 => Hasher::Md5(Md5::default()),
            HashKind::Unknown(_) => Hasher::None,
        };
        let mut raw =
            BufReader::with_capacity(256 << 10, Hashed::new(f.take(header.data_size), hasher));
        let first = {
            use std::io::BufRead;
            let b = raw.fill_buf().map_err(io)?;
            let mut first = [0u8; 264];
            let n = b.len().min(264);
            first[..n].copy_from_slice(&b[..n]);
            (first, n)
        };
        let (head, n) = first;
        let compression = if n >= 2 && head[0] == 0x1f && head[1] == 0x8b {
            Compression::Gzip
        } else if n >= 262 && &head[257..262] == b"ustar" {
            Compression::Tar
        } else {
            return Err(NeffError::UnknownPayload {
                first: [head[0], head[1], head[2], head[3]],
            });
        };
        let inner = match compression {
            Compression::Gzip => Decoded::Gzip(Members::new(raw)),
            Compression::Tar => Decoded::Plain(raw),
        };
        let cap = header
            .data_size
            .saturating_mul(limits.max_ratio)
            .max(limits.min_cap);
        Ok(Neff {
            trailing: size - HEADER_SIZE as u64 - header.data_size,
            header,
            compression,
            tar: TarReader::new(
                Capped {
                    inner,
                    count: 0,
                    cap,
                },
                limits.max_members,
            ),
        })
    }

    /// Reads the rest of the payload (the gzip stream to its end, so its CRC is checked, then
    /// every byte up to data_size) and checks the hash.
    pub fn finish(self) -> Result<Integrity, NeffError> {
        let header = self.header;
        let mut capped = self.tar.into_inner();
        let mut sink = vec![0u8; 64 << 10];
        loop {
            match capped.read(&mut sink) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(crate::tar::io_error(&e, "(after the last member)")),
            }
        }
        let raw = match capped.inner {
            Decoded::Gzip(g) => g.into_inner(),
            Decoded::Plain(p) => Some(p),
        };
        let Some(raw) = raw else {
            return Err(NeffError::Io {
                path: "payload".into(),
                error: "the gzip reader was lost after a failed member".into(),
            });
        };
        // The bytes after the gzip stream (up to data_size) are hashed too.
        let digest = raw.into_inner().digest().map_err(|e| NeffError::Io {
            path: "payload".into(),
            error: e.to_string(),
        })?;
        let Some(found) = digest else {
            return Ok(Integrity::NotVerified {
                pkg_version: header.pkg_version,
            });
        };
        let kind = header.hash_kind();
        if found[..] != header.hash[..found.len()] {
            return Err(NeffError::HashMismatch {
                algorithm: kind.name(),
                expected: header.hash_hex(),
                found: hex(&found),
            });
        }
        Ok(Integrity::Verified(kind))
    }
}

/// The hash field a payload gets under `pkg_version` (1: SHA-256; 2: MD5 then 16 ASCII '0',
/// as \[R\] saw; others: zeros). For the sample builder and tests.
pub fn hash_field(pkg_version: u64, payload: &[u8]) -> [u8; 32] {
    let mut h = [0u8; 32];
    match pkg_version {
        1 => h.copy_from_slice(&Sha256::digest(payload)),
        2 => {
            h[..16].copy_from_slice(&Md5::digest(payload));
            h[16..].fill(b'0');
        }
        _ => {}
    }
    h
}
