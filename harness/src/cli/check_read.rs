//! Reading `check`'s input in blocks, a named file on a second thread so the kernel's copy
//! overlaps the walk (issue 20). Memory is bounded: [`BLOCKS`] blocks, reused.

use super::CliError;
use crate::input::{io_error, InputError, Problem};
use std::io::Read;
use std::sync::mpsc::sync_channel;

/// Blocks in flight (one being walked, one being filled, one spare).
pub const BLOCKS: usize = 3;

pub fn read_once<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// Reads `file` on a second thread, one read per block, handing each to `consume` until the
/// end or until `consume` returns `true` (then `true`).
pub fn read_ahead(
    source: &str,
    mut file: std::fs::File,
    block: usize,
    mut consume: impl FnMut(&[u8]) -> Result<bool, CliError>,
) -> Result<bool, CliError> {
    // full: filled blocks (with their length, or the read error) to the walk; empty: blocks back.
    let (full_tx, full_rx) = sync_channel::<std::io::Result<(Vec<u8>, usize)>>(BLOCKS);
    let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(BLOCKS);
    for _ in 0..BLOCKS {
        empty_tx.send(vec![0u8; block]).map_err(CliError::output)?;
    }
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // One read per block, sent as it is (a FIFO's bytes are walked as they come); an
            // empty block marks the end. Ends then, on an error, or when the walk hangs up.
            while let Ok(mut buf) = empty_rx.recv() {
                let result = read_once(&mut file, &mut buf);
                let last = !matches!(result, Ok(n) if n > 0);
                if full_tx.send(result.map(|n| (buf, n))).is_err() || last {
                    return;
                }
            }
        });
        let mut walk = || -> Result<bool, CliError> {
            loop {
                let Ok(next) = full_rx.recv() else {
                    return Ok(false);
                };
                let (buf, n) = next.map_err(|e| io_error(source, &e))?;
                if n == 0 {
                    return Ok(false);
                }
                if consume(&buf[..n])? {
                    return Ok(true);
                }
                // The reader may have finished already; then the block is not needed.
                let _ = empty_tx.send(buf);
            }
        };
        let r = walk();
        // Hang up both channels so the reader stops (it may be waiting for a block).
        drop(full_rx);
        drop(empty_tx);
        r
    })
}

/// [`read_ahead`] on this thread.
pub fn read_blocks(
    source: &str,
    mut r: impl Read,
    block: usize,
    mut consume: impl FnMut(&[u8]) -> Result<bool, CliError>,
) -> Result<bool, CliError> {
    let mut buf = vec![0u8; block];
    loop {
        let n = read_once(&mut r, &mut buf).map_err(|e| io_error(source, &e))?;
        if n == 0 {
            return Ok(false);
        }
        if consume(&buf[..n])? {
            return Ok(true);
        }
    }
}

/// Cuts byte blocks into runs of whole 64-byte bundles, carrying a partial bundle from one block
/// to the next (the bundles of a block are handed on in place, not copied).
#[derive(Default)]
pub struct Splitter {
    /// For the hints of its first block (empty: none, as for a NEFF's engine stream).
    source: String,
    carry: Vec<u8>,
    total: usize,
}

impl Splitter {
    /// A splitter refusing a first block that looks like hex text or a NEFF.
    pub fn named(source: &str) -> Self {
        Splitter {
            source: source.to_string(),
            ..Splitter::default()
        }
    }

    /// Feeds `each` the bundles `block` completes; `true` when `each` asked to stop.
    #[inline]
    pub fn feed(
        &mut self,
        mut block: &[u8],
        each: &mut impl FnMut(&[u8], Option<usize>) -> Result<bool, CliError>,
    ) -> Result<bool, CliError> {
        if self.total == 0 && !self.source.is_empty() {
            if crate::input::looks_like_hex(block) {
                return Err(InputError::new(&self.source, Problem::LooksLikeHex).into());
            }
            // A NEFF given as a path is read as one (check_neff::neff_input); from a pipe or
            // stdin it is not, and its bytes are no bundles.
            if crate::input::looks_like_neff(block) {
                return Err(InputError::new(&self.source, Problem::LooksLikeNeff).into());
            }
        }
        self.total += block.len();
        if !self.carry.is_empty() {
            let take = (64 - self.carry.len()).min(block.len());
            self.carry.extend_from_slice(&block[..take]);
            block = &block[take..];
            if self.carry.len() < 64 {
                return Ok(false);
            }
            let stop = each(&self.carry, None)?;
            self.carry.clear();
            if stop {
                return Ok(true);
            }
        }
        let whole = block.len() - block.len() % 64;
        if whole > 0 && each(&block[..whole], None)? {
            return Ok(true);
        }
        self.carry.extend_from_slice(&block[whole..]);
        Ok(false)
    }

    /// Empty (unless `empty_ok`: an engine with no program, FACTS §10), or a partial last
    /// bundle, is bad input.
    pub fn finish(self, source: &str, empty_ok: bool) -> Result<(), CliError> {
        if self.total == 0 && !empty_ok {
            return Err(InputError::new(source, Problem::Empty).into());
        }
        if !self.carry.is_empty() {
            let problem = Problem::Length {
                len: self.total,
                partial_offset: self.total - self.carry.len(),
            };
            return Err(InputError::new(source, problem).into());
        }
        Ok(())
    }
}
