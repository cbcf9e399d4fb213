//! The memory region a `lib:` subject's worker shares with the gate
//! (docs/subject-protocol.md "Shared-memory worker"): a file under
//! `/dev/shm` both map, unlinked once the worker has mapped it.
//!
//! Layout (native endianness: both ends run on one machine):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `TPBSHM01` |
//! | 8 | 4 | op ([`OP_VALIDATE_HEADER`], [`OP_VALIDATE_PAYLOAD`], [`OP_LUT`]) |
//! | 12 | 4 | LUT table index (position in [`LutTable::ALL`](crate::subjects::LutTable::ALL)) |
//! | 16 | 4 | n: entries in the chunk |
//! | 20 | 4 | start: the first entry to run |
//! | 24 | 4 | mode: 0 one library batch call over `start..n`, 1 one call per entry, each stamped first |
//! | 28 | 4 | seq: the hand-off number the gate rang for |
//! | 32 | 8 | stamp: 1 + the entry the worker is about to run (0: none) |
//! | 44 | 4 | done: entries finished (answers written) |
//! | 48 | 4 | finished: the seq the worker finished last |
//! | 52 | 4 | ready: worker state (0 starting, 1 ready, 2 init unsupported, 3 failed) |
//! | 56 | 4 | worker flags ([`batch_flag`]) |
//! | 60 | 4 | busy: µs the worker spent on the hand-off it finished last |
//! | 64 | 4 | full: 1 if the worker stopped at `done` < n, its answer area full |
//! | 128 | 1024 | the worker's load / init error text (NUL-terminated) |
//! | [`IN_OFF`] | 64 × [`CHUNK`] | inputs: bundles, a `u32` ordinal per entry, or a `u32` request offset per entry |
//! | [`CODE_OFF`] | 2 × [`CHUNK`] | `u16` answer code per entry ([`tpb_verdict`](super::verdict) id or a code below) |
//! | [`VAL_OFF`] | 4 × [`CHUNK`] | `u32` per entry: the LUT wire value, a text's arena offset, or an answer record's offset |
//! | [`ARENA_OFF`] | [`ARENA`] | texts: `u16` length + UTF-8 bytes, reset per hand-off |
//! | [`REQ_OFF`] | [`REQ`] | [`OP_RECORDS`] requests: `u32` length + a request record ([`put_request`]), 4-aligned |
//! | [`ANS_OFF`] | [`ANS`] | answer records: `u32` entry index, `u32` length, the binary answer ([`super::record`]), 4-aligned, reset per hand-off (the hello's at 0 when ready) |
//!
//! Before each hand-off the gate sets every answer code it asks for to
//! [`CODE_UNSET`]: an entry the worker leaves so, or an answer record
//! holding another entry's index, is a harness fault
//! ([`crate::subjects::Fault::Harness`]), never an answer.
#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Entries per hand-off (a gate chunk is one: `GateConfig::chunk_of`).
pub const CHUNK: usize = 32768;
const MAGIC: u64 = u64::from_le_bytes(*b"TPBSHM01");
pub const IN_OFF: usize = 4096;
pub const CODE_OFF: usize = IN_OFF + 64 * CHUNK;
pub const VAL_OFF: usize = CODE_OFF + 2 * CHUNK;
pub const ARENA_OFF: usize = VAL_OFF + 4 * CHUNK;
pub const ARENA: usize = 1 << 16;
pub const REQ_OFF: usize = ARENA_OFF + ARENA;
/// Request records' bytes (a 1 MiB stream's request fits).
pub const REQ: usize = 4 << 20;
pub const ANS_OFF: usize = REQ_OFF + REQ;
/// Answer records' bytes (an answer is at most 1 MiB, docs/subject-protocol.md).
pub const ANS: usize = 8 << 20;
pub const LEN: usize = ANS_OFF + ANS;
const ERR_OFF: usize = 128;
const ERR_LEN: usize = 1024;

/// Ops: SPEC §3 header and §4 payload validators, §6 lookup.
pub const OP_VALIDATE_HEADER: u32 = 1;
pub const OP_VALIDATE_PAYLOAD: u32 = 2;
pub const OP_LUT: u32 = 3;
/// The request record of `r` written at `*used` ([`put_record`]).
pub fn put_request(area: &mut [u8], used: &mut usize, r: &super::protocol::Request) -> Option<u32> {
    let (head, tail) = super::protocol::request_parts(r);
    put_record(area, used, None, &[&head, tail])
}

pub fn request_len(r: &super::protocol::Request) -> usize {
    let (head, tail) = super::protocol::request_parts(r);
    head.len() + tail.len()
}

/// Op: any other request, as request and answer records.
pub const OP_RECORDS: u32 = 4;
/// Worker flag: the library exports the batch entry point of `op`.
pub const fn batch_flag(op: u32) -> u32 {
    1 << op
}

/// Answer codes (value: a LUT's wire, a text's or a record's offset).
pub const CODE_WIRE: u16 = 0;
pub const CODE_REFUSED: u16 = 1;
pub const CODE_RECORD: u16 = 2;
/// Codes from here on are never `tpb_verdict` ids (a batch validator
/// writing one is answering a name: `tpb_verdict id N`).
pub const CODE_RESERVED: u16 = 0xFFFB;
/// Set by the gate before a hand-off: the worker has not written the entry.
pub const CODE_UNSET: u16 = super::ffi::GATE_UNSET;
/// A predicate outside `tpb_verdict` (value: its text).
pub const CODE_NAMED: u16 = 0xFFFC;
pub const CODE_UNSUPPORTED: u16 = 0xFFFD;
/// `TPB_ERROR` or a broken ABI (value: the text).
pub const CODE_ERROR: u16 = 0xFFFE;

/// Worker states (the layout table).
pub const READY_OK: u32 = 1;
pub const READY_UNSUPPORTED: u32 = 2;
pub const READY_FAILED: u32 = 3;

/// Header field offsets (the layout table above).
#[derive(Clone, Copy)]
#[repr(usize)]
pub enum Field {
    Op = 8,
    Table = 12,
    N = 16,
    Start = 20,
    Mode = 24,
    Seq = 28,
    Done = 44,
    Finished = 48,
    Ready = 52,
    Flags = 56,
    Busy = 60,
    Full = 64,
}
const STAMP: usize = 32;

/// The areas of a region (the layout table above).
pub struct Areas<'a> {
    pub inputs: &'a mut [u8],
    pub codes: &'a mut [u16],
    pub values: &'a mut [u32],
    pub arena: &'a mut [u8],
    pub requests: &'a mut [u8],
    pub answers: &'a mut [u8],
}

pub struct Region {
    ptr: *mut u8,
    // Keeps the mapping's file open (the mapping outlives it anyway).
    _file: File,
}

// SAFETY: the region is plain shared memory; every access goes through
// atomics or through `&mut self` methods.
unsafe impl Send for Region {}

fn map(file: File, path: &Path) -> Result<Region, String> {
    // SAFETY: a fresh shared mapping of a file we hold open, LEN bytes long
    // (the creator sized it); nothing else is mapped at the address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            LEN,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(format!(
            "cannot map {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(Region {
        ptr: p.cast(),
        _file: file,
    })
}

impl Region {
    /// Creates a fresh region file (mode 0600, never an existing path),
    /// a temporary path until unlinked ([`crate::interrupt::discard_temp`]).
    pub fn create() -> Result<(Region, PathBuf), String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let shm = Path::new("/dev/shm");
        let dir = shm.is_dir().then(|| shm.to_path_buf());
        let dir = dir.unwrap_or_else(std::env::temp_dir);
        let path = dir.join(format!("tpb-subject-{}-{n}", std::process::id()));
        let file = crate::interrupt::create_temp_file(&path, |p| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(p)
        })
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        if let Err(e) = file.set_len(LEN as u64) {
            crate::interrupt::discard_temp(&path);
            return Err(format!("cannot size {}: {e}", path.display()));
        }
        let r = map(file, &path).inspect_err(|_| crate::interrupt::discard_temp(&path))?;
        r.store_u64(0, MAGIC);
        Ok((r, path))
    }

    pub fn open(path: &Path) -> Result<Region, String> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if len != LEN as u64 {
            return Err(format!("{} is {len} bytes, expected {LEN}", path.display()));
        }
        let r = map(file, path)?;
        if r.load_u64(0) != MAGIC {
            return Err(format!("{} has no region magic", path.display()));
        }
        Ok(r)
    }

    fn atomic32(&self, off: usize) -> &AtomicU32 {
        debug_assert!(off.is_multiple_of(4) && off + 4 <= LEN);
        // SAFETY: in bounds and aligned (the mapping is page-aligned); the
        // memory is shared, so it is only ever accessed atomically.
        unsafe { &*self.ptr.add(off).cast::<AtomicU32>() }
    }

    fn store_u64(&self, off: usize, v: u64) {
        // SAFETY: as `atomic32`, 8-aligned.
        unsafe { &*self.ptr.add(off).cast::<AtomicU64>() }.store(v, Ordering::Release);
    }

    fn load_u64(&self, off: usize) -> u64 {
        // SAFETY: as `atomic32`, 8-aligned.
        unsafe { &*self.ptr.add(off).cast::<AtomicU64>() }.load(Ordering::Acquire)
    }

    pub fn get(&self, f: Field) -> u32 {
        self.atomic32(f as usize).load(Ordering::Acquire)
    }

    pub fn set(&self, f: Field, v: u32) {
        self.atomic32(f as usize).store(v, Ordering::Release);
    }

    /// 1 + the entry about to run (0: none).
    pub fn stamp(&self) -> u64 {
        self.load_u64(STAMP)
    }

    pub fn set_stamp(&self, i: usize) {
        self.store_u64(STAMP, i as u64 + 1);
    }

    pub fn clear_stamp(&self) {
        self.store_u64(STAMP, 0);
    }

    /// Every area at once (the worker reads inputs while it writes answers).
    pub fn areas(&mut self) -> Areas<'_> {
        let p = self.ptr;
        // SAFETY: disjoint in-bounds areas, each aligned for its type (the
        // mapping is page-aligned); the other end only touches them between
        // hand-offs (the doorbell orders the accesses).
        unsafe {
            Areas {
                inputs: std::slice::from_raw_parts_mut(p.add(IN_OFF), 64 * CHUNK),
                codes: std::slice::from_raw_parts_mut(p.add(CODE_OFF).cast(), CHUNK),
                values: std::slice::from_raw_parts_mut(p.add(VAL_OFF).cast(), CHUNK),
                arena: std::slice::from_raw_parts_mut(p.add(ARENA_OFF), ARENA),
                requests: std::slice::from_raw_parts_mut(p.add(REQ_OFF), REQ),
                answers: std::slice::from_raw_parts_mut(p.add(ANS_OFF), ANS),
            }
        }
    }

    pub fn set_entry(&mut self, i: usize, (code, value): (u16, u32)) {
        let a = self.areas();
        a.codes[i] = code;
        a.values[i] = value;
    }

    pub fn text_at(&mut self, off: u32) -> Option<String> {
        let a = self.areas().arena;
        let o = usize::try_from(off).ok()?;
        let len = usize::from(u16::from_le_bytes([*a.get(o)?, *a.get(o + 1)?]));
        let bytes = a.get(o + 2..o + 2 + len)?;
        String::from_utf8(bytes.to_vec()).ok()
    }

    /// The answer record at `off`: the entry index it claims and its bytes.
    pub fn answer_at(&mut self, off: u32) -> Option<(u32, &[u8])> {
        let a = self.areas().answers;
        let o = off as usize;
        let index = u32::from_ne_bytes(a.get(o..o + 4)?.try_into().ok()?);
        Some((index, record(a, o + 4)?))
    }

    pub fn set_error(&mut self, s: &str) {
        // SAFETY: in bounds header bytes.
        let e = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(ERR_OFF), ERR_LEN) };
        let mut n = s.len().min(ERR_LEN - 1);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        e[..n].copy_from_slice(&s.as_bytes()[..n]);
        e[n] = 0;
    }

    pub fn error(&self) -> String {
        // SAFETY: in bounds header bytes.
        let e = unsafe { std::slice::from_raw_parts(self.ptr.add(ERR_OFF), ERR_LEN) };
        let n = e.iter().position(|&b| b == 0).unwrap_or(ERR_LEN);
        String::from_utf8_lossy(&e[..n]).into_owned()
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `map` made; no reference into
        // it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.cast(), LEN);
        }
    }
}

/// The length-prefixed record at `off` ([`put_record`]).
pub fn record(area: &[u8], off: usize) -> Option<&[u8]> {
    let len = u32::from_ne_bytes(area.get(off..off + 4)?.try_into().ok()?) as usize;
    area.get(off + 4..(off + 4).checked_add(len)?)
}

/// Appends a length-prefixed record (after `index`, an answer record's
/// entry) at `*used`, 4-aligned; its offset, or `None` if it does not fit.
pub fn put_record(
    area: &mut [u8],
    used: &mut usize,
    index: Option<u32>,
    parts: &[&[u8]],
) -> Option<u32> {
    let head = if index.is_some() { 8 } else { 4 };
    let n: usize = parts.iter().map(|p| p.len()).sum();
    let end = used.checked_add(head + n)?;
    if end > area.len() {
        return None;
    }
    let at = *used;
    let mut o = at;
    if let Some(i) = index {
        area[o..o + 4].copy_from_slice(&i.to_ne_bytes());
        o += 4;
    }
    let len = u32::try_from(n).ok()?;
    area[o..o + 4].copy_from_slice(&len.to_ne_bytes());
    o += 4;
    for p in parts {
        area[o..o + p.len()].copy_from_slice(p);
        o += p.len();
    }
    *used = end.next_multiple_of(4).min(area.len());
    u32::try_from(at).ok()
}

/// One hand-off's texts in the arena, each written once.
#[derive(Default)]
pub struct Arena {
    used: usize,
    seen: Vec<(String, u32)>,
}

impl Arena {
    pub fn reset(&mut self) {
        self.used = 0;
        self.seen.clear();
    }

    /// The offset of `s` in `arena`, writing it if new; a text that does
    /// not fit is replaced by a shorter notice (or offset `u32::MAX`).
    pub fn put(&mut self, arena: &mut [u8], s: &str) -> u32 {
        if let Some((_, o)) = self.seen.iter().find(|(t, _)| t == s) {
            return *o;
        }
        let mut n = s.len().min(512);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        if self.used + 2 + n > arena.len() || self.seen.len() >= 4096 {
            return u32::MAX;
        }
        let o = self.used;
        #[allow(clippy::cast_possible_truncation)]
        arena[o..o + 2].copy_from_slice(&(n as u16).to_le_bytes());
        arena[o + 2..o + 2 + n].copy_from_slice(&s.as_bytes()[..n]);
        self.used += 2 + n;
        let off = u32::try_from(o).unwrap_or(u32::MAX);
        self.seen.push((s.to_string(), off));
        off
    }
}

/// Private copies of stdin and stdout (the doorbells), fd 0 then pointing
/// at `/dev/null` and fd 1 at stderr, so the library never touches them.
pub fn private_stdio() -> Result<(File, File), String> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain fd syscalls on the process's own standard fds; the new
    // descriptors are owned by the returned files only.
    unsafe {
        let i = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
        let o = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if i < 0 || o < 0 {
            return Err(format!("dup: {}", std::io::Error::last_os_error()));
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::close(null);
        }
        libc::dup2(2, 1);
        Ok((File::from_raw_fd(i), File::from_raw_fd(o)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_see_one_region_and_the_file_goes() {
        let (mut a, path) = Region::create().expect("create");
        let mut b = Region::open(&path).expect("open");
        crate::interrupt::discard_temp(&path);
        assert!(!path.exists());
        a.set(Field::N, 77);
        a.areas().inputs[5] = 9;
        assert_eq!(b.get(Field::N), 77);
        assert_eq!(b.areas().inputs[5], 9);
        b.set_stamp(41);
        assert_eq!(a.stamp(), 42);
        let mut ar = Arena::default();
        let o = ar.put(b.areas().arena, "out_of_range");
        assert_eq!(ar.put(b.areas().arena, "out_of_range"), o);
        assert_eq!(a.text_at(o).as_deref(), Some("out_of_range"));
        b.set_error("boom");
        assert_eq!(a.error(), "boom");
    }

    #[test]
    fn open_refuses_a_foreign_file() {
        let dir = tempfile_dir();
        let p = dir.join("x");
        std::fs::write(&p, b"not a region").expect("write");
        assert!(Region::open(&p).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("tpb-shm-test-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&d);
        d
    }
}
