//! A streaming tar reader (ustar, GNU and PAX headers) with the path-safety rules of
//! libarchive and the `tar` crate: a member is a regular file or a folder; links, devices,
//! FIFOs and unknown types are refused by name; a name with a `..` component or a leading `/`
//! is refused; a leading `./` is stripped and folders are skipped (FACTS §10 \[R\]: what the
//! runtime does); two members of one name are refused. Memory is bounded: one 512-byte
//! header, PAX and GNU long-name records capped at [`MAX_RECORD`], names at [`MAX_NAME`].

use crate::NeffError;
use std::collections::HashSet;
use std::io::Read;

/// The largest PAX or GNU long-name record read (bytes).
pub const MAX_RECORD: u64 = 1 << 20;
/// The longest member name (bytes; PATH_MAX).
pub const MAX_NAME: usize = 4096;
/// The bytes of all regular members' names, at most: every name is kept (to refuse a second
/// member of one name, and by the scan's member list), so 100 000 names of 4 KiB would be
/// 400 MB a copy.
pub const MAX_NAMES_TOTAL: usize = 16 << 20;

/// What a member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file (typeflag `0`, NUL or `7`).
    Regular,
    /// A folder (typeflag `5`, or a name ending in `/`): skipped.
    Folder,
}

/// One member's header, its name normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The name without a leading `./`, `.` components or repeated `/`.
    pub name: String,
    /// Its data length.
    pub size: u64,
    /// Regular or folder.
    pub kind: Kind,
}

/// Reads members one after the other from `r` (the decompressed payload).
pub struct TarReader<R> {
    r: R,
    /// Decompressed bytes consumed.
    offset: u64,
    /// Data left of the current member, then its padding to 512.
    left: u64,
    pad: u64,
    current: String,
    ended: bool,
    seen: HashSet<String>,
    /// Bytes of the names in `seen`.
    names_total: usize,
    max_members: usize,
}

/// Reads `buf.len()` bytes or says where the payload ran out.
fn fill<R: Read>(r: &mut R, buf: &mut [u8], member: &str, offset: u64) -> Result<(), NeffError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(NeffError::Truncated {
                    member: member.to_string(),
                    offset: offset + got as u64,
                })
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(&e, member)),
        }
    }
    Ok(())
}

/// The error an underlying read failed with, naming `member`.
pub(crate) fn io_error(e: &std::io::Error, member: &str) -> NeffError {
    match NeffError::from_io(e) {
        Some(NeffError::TooBig { what, cap, .. }) => NeffError::TooBig {
            member: member.to_string(),
            what,
            cap,
        },
        Some(NeffError::Gzip { reason, .. }) => NeffError::Gzip {
            member: member.to_string(),
            reason,
        },
        Some(other) => other,
        None => NeffError::Gzip {
            member: member.to_string(),
            reason: e.to_string(),
        },
    }
}

/// An octal (or GNU base-256) number field.
fn number(f: &[u8]) -> Option<u64> {
    if f.first().is_some_and(|&b| b & 0x80 != 0) {
        // GNU base-256: big-endian, the top bit of the first byte the marker.
        if f[0] & 0x40 != 0 {
            return None; // negative
        }
        let mut v: u64 = u64::from(f[0] & 0x3F);
        for &b in &f[1..] {
            v = v.checked_mul(256)?.checked_add(u64::from(b))?;
        }
        return Some(v);
    }
    let s: Vec<u8> = f
        .iter()
        .copied()
        .take_while(|&b| b != 0)
        .filter(|&b| b != b' ')
        .collect();
    if s.is_empty() {
        return Some(0);
    }
    let mut v: u64 = 0;
    for b in s {
        if !(b'0'..=b'7').contains(&b) {
            return None;
        }
        v = v.checked_mul(8)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(v)
}

fn cstr(f: &[u8]) -> &[u8] {
    let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
    &f[..end]
}

/// Normalises a stored name: strips leading `./` and `.` components, refuses `..`, a leading
/// `/`, NUL, non-UTF-8 and an empty name. `Ok((name, ends_with_slash))`.
pub fn normalize(raw: &[u8]) -> Result<(String, bool), &'static str> {
    if raw.contains(&0) {
        return Err("a NUL byte in the name");
    }
    let s = std::str::from_utf8(raw).map_err(|_| "not UTF-8")?;
    if s.starts_with('/') {
        return Err("an absolute path");
    }
    if s.len() > MAX_NAME {
        return Err("longer than 4096 bytes");
    }
    let mut parts = Vec::new();
    for p in s.split('/') {
        match p {
            "" | "." => {}
            ".." => return Err("a `..` component"),
            p => parts.push(p),
        }
    }
    Ok((parts.join("/"), s.ends_with('/')))
}

impl<R: Read> TarReader<R> {
    /// A reader of the members of `r`; more than `max_members` members is refused.
    pub fn new(r: R, max_members: usize) -> Self {
        TarReader {
            r,
            offset: 0,
            left: 0,
            pad: 0,
            current: "-".to_string(),
            ended: false,
            seen: HashSet::new(),
            names_total: 0,
            max_members,
        }
    }

    /// The current member's name (`-` before the first).
    pub fn current(&self) -> &str {
        &self.current
    }

    /// What a failure between members names: the header after the last member read (a bare
    /// `-` said nothing of where the payload broke).
    fn between(&self) -> String {
        if self.current == "-" {
            "(the first member's header)".to_string()
        } else {
            format!("(the header after {})", self.current)
        }
    }

    /// Decompressed bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads up to `buf.len()` bytes of the current member's data (0 at its end).
    pub fn read_data(&mut self, buf: &mut [u8]) -> Result<usize, NeffError> {
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        loop {
            match self.r.read(&mut buf[..want]) {
                Ok(0) => {
                    return Err(NeffError::Truncated {
                        member: self.current.clone(),
                        offset: self.offset,
                    })
                }
                Ok(n) => {
                    self.left -= n as u64;
                    self.offset += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(&e, &self.current)),
            }
        }
    }

    /// Skips what is left of the current member and its padding.
    fn skip_rest(&mut self) -> Result<(), NeffError> {
        let mut buf = [0u8; 8192];
        while self.left > 0 {
            self.read_data(&mut buf)?;
        }
        while self.pad > 0 {
            let n = self.pad.min(512) as usize;
            fill(&mut self.r, &mut buf[..n], &self.current, self.offset)?;
            self.offset += n as u64;
            self.pad -= n as u64;
        }
        Ok(())
    }

    /// Reads a record's data (PAX or GNU long name) of `size` bytes, capped.
    fn record(&mut self, size: u64, at: u64) -> Result<Vec<u8>, NeffError> {
        if size > MAX_RECORD {
            return Err(NeffError::TooBig {
                member: format!("(record at decompressed offset {at})"),
                what: "a PAX or long-name record",
                cap: MAX_RECORD,
            });
        }
        let mut v = vec![0u8; size as usize];
        let between = self.between();
        fill(&mut self.r, &mut v, &between, self.offset)?;
        self.offset += size;
        let pad = (512 - size % 512) % 512;
        let mut p = [0u8; 512];
        fill(&mut self.r, &mut p[..pad as usize], &between, self.offset)?;
        self.offset += pad;
        Ok(v)
    }

    /// The next member that is not a folder (folders are skipped), `None` at the end of the
    /// archive (a zero block or the end of the payload on a block boundary).
    pub fn next_entry(&mut self) -> Result<Option<Entry>, NeffError> {
        loop {
            match self.next_any()? {
                Some(e) if e.kind == Kind::Folder => continue,
                other => return Ok(other),
            }
        }
    }

    /// The next member, folders included.
    pub fn next_any(&mut self) -> Result<Option<Entry>, NeffError> {
        if self.ended {
            return Ok(None);
        }
        self.skip_rest()?;
        let mut long_name: Option<Vec<u8>> = None;
        let mut long_link: Option<Vec<u8>> = None;
        let mut pax_size: Option<u64> = None;
        loop {
            let at = self.offset;
            let mut h = [0u8; 512];
            // The end of the payload where a header would start ends the archive too.
            let mut got = 0;
            while got < 512 {
                match self.r.read(&mut h[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(io_error(&e, &self.between())),
                }
            }
            if got == 0 && long_name.is_none() && pax_size.is_none() {
                self.ended = true;
                return Ok(None);
            }
            if got < 512 {
                return Err(NeffError::Truncated {
                    member: self.between(),
                    offset: at + got as u64,
                });
            }
            self.offset += 512;
            if h.iter().all(|&b| b == 0) {
                self.ended = true;
                return Ok(None);
            }
            let bad = |reason: String| NeffError::BadTarHeader {
                member: String::from_utf8_lossy(cstr(&h[..100])).into_owned(),
                offset: at,
                reason,
            };
            let stored = number(&h[148..156]).ok_or_else(|| bad("checksum field".into()))?;
            let unsigned: u64 = h
                .iter()
                .enumerate()
                .map(|(i, &b)| u64::from(if (148..156).contains(&i) { b' ' } else { b }))
                .sum();
            let signed: i64 = h
                .iter()
                .enumerate()
                .map(|(i, &b)| {
                    i64::from(if (148..156).contains(&i) {
                        b' ' as i8
                    } else {
                        b as i8
                    })
                })
                .sum();
            if stored != unsigned && i64::try_from(stored).ok() != Some(signed) {
                return Err(bad(format!(
                    "checksum {stored} but the header sums to {unsigned}"
                )));
            }
            let size = match pax_size.take() {
                Some(s) => s,
                None => number(&h[124..136]).ok_or_else(|| bad("size field".into()))?,
            };
            let typeflag = h[156];
            let ustar = &h[257..263] == b"ustar\0";
            match typeflag {
                b'x' => {
                    let rec = self.record(size, at)?;
                    let (path, linkpath, sz, sparse) =
                        pax(&rec).map_err(|r| bad(format!("PAX record: {r}")))?;
                    if sparse {
                        let name = path.unwrap_or_else(|| cstr(&h[..100]).to_vec());
                        return Err(NeffError::UnsupportedType {
                            member: String::from_utf8_lossy(&name).into_owned(),
                            typeflag: 'S',
                        });
                    }
                    if path.is_some() {
                        long_name = path;
                    }
                    if linkpath.is_some() {
                        long_link = linkpath;
                    }
                    pax_size = sz;
                    continue;
                }
                b'g' => {
                    // Global PAX defaults: read (bounded) and not applied (they hold mtimes,
                    // charsets; a global path would rename every member: refused).
                    let rec = self.record(size, at)?;
                    let (path, _, _, _) = pax(&rec).map_err(|r| bad(format!("PAX record: {r}")))?;
                    if path.is_some() {
                        return Err(bad("a global PAX header that sets a path".into()));
                    }
                    continue;
                }
                b'L' => {
                    long_name = Some(cstr(&self.record(size, at)?).to_vec());
                    continue;
                }
                b'K' => {
                    long_link = Some(cstr(&self.record(size, at)?).to_vec());
                    continue;
                }
                _ => {}
            }
            let raw = match long_name.take() {
                Some(n) => n,
                None if ustar && h[345] != 0 => {
                    let mut n = cstr(&h[345..500]).to_vec();
                    n.push(b'/');
                    n.extend_from_slice(cstr(&h[..100]));
                    n
                }
                None => cstr(&h[..100]).to_vec(),
            };
            let shown = String::from_utf8_lossy(&raw).into_owned();
            let (name, slash) = normalize(&raw).map_err(|reason| NeffError::UnsafePath {
                member: shown.clone(),
                reason,
            })?;
            let link = || {
                String::from_utf8_lossy(
                    &long_link
                        .clone()
                        .unwrap_or_else(|| cstr(&h[157..257]).to_vec()),
                )
                .into_owned()
            };
            let kind = match typeflag {
                b'0' | 0 | b'7' if slash => Kind::Folder,
                b'0' | 0 | b'7' => Kind::Regular,
                b'5' => Kind::Folder,
                b'1' => {
                    return Err(NeffError::Link {
                        member: shown,
                        target: link(),
                        kind: "hard link",
                    })
                }
                b'2' => {
                    return Err(NeffError::Link {
                        member: shown,
                        target: link(),
                        kind: "symlink",
                    })
                }
                b'3' => {
                    return Err(NeffError::Special {
                        member: shown,
                        kind: "character device",
                    })
                }
                b'4' => {
                    return Err(NeffError::Special {
                        member: shown,
                        kind: "block device",
                    })
                }
                b'6' => {
                    return Err(NeffError::Special {
                        member: shown,
                        kind: "FIFO",
                    })
                }
                t => {
                    return Err(NeffError::UnsupportedType {
                        member: shown,
                        typeflag: char::from(t),
                    })
                }
            };
            if name.is_empty() {
                if kind == Kind::Folder {
                    continue; // "./" itself
                }
                return Err(NeffError::UnsafePath {
                    member: shown,
                    reason: "an empty name",
                });
            }
            self.current = name.clone();
            if kind == Kind::Regular {
                if self.seen.len() >= self.max_members {
                    return Err(NeffError::TooBig {
                        member: name,
                        what: "the member count",
                        cap: self.max_members as u64,
                    });
                }
                self.names_total += name.len();
                if self.names_total > MAX_NAMES_TOTAL {
                    return Err(NeffError::TooBig {
                        member: name,
                        what: "the member names, in all",
                        cap: MAX_NAMES_TOTAL as u64,
                    });
                }
                if !self.seen.insert(name.clone()) {
                    return Err(NeffError::Duplicate { member: name });
                }
                self.left = size;
                self.pad = (512 - size % 512) % 512;
            } else {
                // A folder's data (there should be none) is skipped like a member's.
                self.left = size;
                self.pad = (512 - size % 512) % 512;
            }
            return Ok(Some(Entry { name, size, kind }));
        }
    }

    /// The underlying reader (after the end of the archive).
    pub fn into_inner(self) -> R {
        self.r
    }
}

type Pax = (Option<Vec<u8>>, Option<Vec<u8>>, Option<u64>, bool);

/// The records of a PAX extended header: `path`, `linkpath`, `size`, and whether a GNU sparse
/// key is present.
fn pax(rec: &[u8]) -> Result<Pax, String> {
    let (mut path, mut link, mut size, mut sparse) = (None, None, None, false);
    let mut rest = rec;
    while !rest.is_empty() {
        if rest.iter().all(|&b| b == 0) {
            break;
        }
        let sp = rest
            .iter()
            .position(|&b| b == b' ')
            .ok_or("a record without a length")?;
        let len: usize = std::str::from_utf8(&rest[..sp])
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("a bad record length")?;
        if len <= sp + 1 || len > rest.len() || rest[len - 1] != b'\n' {
            return Err(format!("a record length {len} that does not fit"));
        }
        let kv = &rest[sp + 1..len - 1];
        let eq = kv
            .iter()
            .position(|&b| b == b'=')
            .ok_or("a record without '='")?;
        let (k, v) = (&kv[..eq], &kv[eq + 1..]);
        match k {
            b"path" => path = Some(v.to_vec()),
            b"linkpath" => link = Some(v.to_vec()),
            b"size" => {
                size = Some(
                    std::str::from_utf8(v)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .ok_or("a bad size")?,
                )
            }
            k if k.starts_with(b"GNU.sparse") => sparse = true,
            _ => {}
        }
        rest = &rest[len..];
    }
    Ok((path, link, size, sparse))
}

/// Writes tar members (ustar; PAX for names over 100 bytes): the sample builder's and the
/// tests' writer. `kind`: the typeflag.
pub fn write_member(out: &mut Vec<u8>, name: &str, typeflag: u8, link: &str, data: &[u8]) {
    let mut h = [0u8; 512];
    if name.len() > 100 {
        let rec = {
            let body = format!("path={name}\n");
            let mut len = body.len() + 2;
            loop {
                let l = format!("{len} {body}");
                if l.len() == len {
                    break l;
                }
                len = l.len();
            }
        };
        write_member(out, "PaxHeader", b'x', "", rec.as_bytes());
        h[..100].copy_from_slice(&name.as_bytes()[..100]);
    } else {
        h[..name.len()].copy_from_slice(name.as_bytes());
    }
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0000000");
    h[116..123].copy_from_slice(b"0000000");
    h[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
    h[136..147].copy_from_slice(b"00000000000");
    h[156] = typeflag;
    h[157..157 + link.len().min(100)].copy_from_slice(&link.as_bytes()[..link.len().min(100)]);
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(data);
    out.resize(out.len() + (512 - data.len() % 512) % 512, 0);
}

/// Ends a tar written by [`write_member`] (two zero blocks).
pub fn write_end(out: &mut Vec<u8>) {
    out.resize(out.len() + 1024, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(tar: &[u8]) -> Result<Vec<(String, Vec<u8>)>, NeffError> {
        let mut t = TarReader::new(tar, 100);
        let mut out = Vec::new();
        while let Some(e) = t.next_entry()? {
            let mut data = Vec::new();
            let mut buf = [0u8; 7];
            loop {
                let n = t.read_data(&mut buf)?;
                if n == 0 {
                    break;
                }
                data.extend_from_slice(&buf[..n]);
            }
            out.push((e.name, data));
        }
        Ok(out)
    }

    #[test]
    fn members_are_read_with_dot_slash_stripped_and_folders_skipped() {
        let mut t = Vec::new();
        write_member(&mut t, "./", b'5', "", b"");
        write_member(&mut t, "./sg00/", b'5', "", b"");
        write_member(&mut t, "./sg00/def.json", b'0', "", b"{}");
        let long = format!("sg00/{}/PE.bin", "d".repeat(120));
        write_member(&mut t, &long, b'0', "", &[1u8; 600]);
        write_end(&mut t);
        let got = read_all(&t).unwrap();
        assert_eq!(got[0], ("sg00/def.json".to_string(), b"{}".to_vec()));
        assert_eq!(got[1].0, long);
        assert_eq!(got[1].1, vec![1u8; 600]);
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn hostile_members_are_refused_by_name() {
        let one = |name: &str, flag: u8, link: &str| {
            let mut t = Vec::new();
            write_member(&mut t, name, flag, link, b"x");
            write_end(&mut t);
            read_all(&t).unwrap_err()
        };
        assert!(
            matches!(one("../x", b'0', ""), NeffError::UnsafePath { reason, .. } if reason.contains(".."))
        );
        assert!(matches!(
            one("sg00/../../x", b'0', ""),
            NeffError::UnsafePath { .. }
        ));
        // (name, typeflag, link name, the refusal and what it names)
        for (name, flag, link, want) in [
            ("/etc/x", b'0', "", ("unsafe path", "an absolute path")),
            ("a", b'2', "/etc/passwd", ("link", "symlink")),
            ("a", b'1', "b", ("link", "hard link")),
            ("a", b'3', "", ("special", "character device")),
            ("a", b'4', "", ("special", "block device")),
            ("a", b'6', "", ("special", "FIFO")),
        ] {
            let got = match one(name, flag, link) {
                NeffError::UnsafePath { reason, .. } => ("unsafe path", reason),
                NeffError::Link { kind, .. } => ("link", kind),
                NeffError::Special { kind, .. } => ("special", kind),
                other => panic!("{name} {flag}: {other:?}"),
            };
            assert_eq!(got, want, "{name} {flag}");
        }
        assert!(matches!(
            one("a", b'S', ""),
            NeffError::UnsupportedType { typeflag: 'S', .. }
        ));
        let mut t = Vec::new();
        write_member(&mut t, "sg00/PE.bin", b'0', "", b"x");
        write_member(&mut t, "./sg00/PE.bin", b'0', "", b"y");
        write_end(&mut t);
        assert_eq!(
            read_all(&t).unwrap_err(),
            NeffError::Duplicate {
                member: "sg00/PE.bin".into()
            }
        );
    }

    /// Names of up to 4096 bytes, 100 000 members: 400 MB per copy of the names, from a gzip
    /// payload of a few MB (724 MB RSS before the gzip-bomb cap stopped a 1.5 MB NEFF).
    #[test]
    fn the_member_names_are_capped_in_all() {
        let mut t = Vec::new();
        let n = MAX_NAMES_TOTAL / 4000 + 1;
        for i in 0..n {
            write_member(
                &mut t,
                &format!("sg00/{}{i:08}", "a".repeat(3987)),
                b'0',
                "",
                b"",
            );
        }
        write_end(&mut t);
        let mut r = TarReader::new(&t[..], 100_000);
        let e = loop {
            match r.next_entry() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("read all {n} members"),
                Err(e) => break e,
            }
        };
        assert!(
            matches!(&e, NeffError::TooBig { what, .. } if what.contains("names")),
            "{e:?}"
        );
    }

    #[test]
    fn truncation_and_bad_checksums_are_named() {
        let mut t = Vec::new();
        write_member(&mut t, "sg00/PE.bin", b'0', "", &[0u8; 1000]);
        let cut = &t[..700];
        assert!(matches!(
            read_all(cut).unwrap_err(),
            NeffError::Truncated { member, .. } if member == "sg00/PE.bin"
        ));
        // Cut inside the next member's header: named by the member before it.
        let mut two = t.clone();
        write_member(&mut two, "sg00/Pool.bin", b'0', "", b"x");
        let e = read_all(&two[..t.len() + 100]).unwrap_err();
        assert_eq!(
            e,
            NeffError::Truncated {
                member: "(the header after sg00/PE.bin)".into(),
                offset: t.len() as u64 + 100
            }
        );
        let e = read_all(&t[..100]).unwrap_err();
        assert!(
            matches!(&e, NeffError::Truncated { member, .. } if member == "(the first member's header)"),
            "{e:?}"
        );
        let mut bad = t.clone();
        bad[0] ^= 1;
        assert!(matches!(
            read_all(&bad).unwrap_err(),
            NeffError::BadTarHeader { .. }
        ));
        // A PAX record past the cap is refused before it is read.
        let mut h = Vec::new();
        write_member(&mut h, "PaxHeader", b'x', "", b"");
        let size = format!("{:011o}", MAX_RECORD + 1);
        h[124..135].copy_from_slice(size.as_bytes());
        h[148..156].copy_from_slice(b"        ");
        let sum: u32 = h[..512].iter().map(|&b| u32::from(b)).sum();
        h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
        assert!(matches!(
            read_all(&h).unwrap_err(),
            NeffError::TooBig { .. }
        ));
    }
}
