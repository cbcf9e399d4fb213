//! Crash-safe file replacement that only ever replaces a regular file.
//!
//! # Contracts
//!
//! - Readers see the old file or the new one, never a partial one: data goes
//!   to a temporary file in the same directory (created exclusively, so a
//!   planted symlink is never followed), which is fsynced and renamed over
//!   the target; the directory is then fsynced (best effort).
//! - Only a regular file (or nothing) is replaced. A symlink, directory,
//!   FIFO, device or socket at the target path is refused
//!   ([`io::ErrorKind::InvalidInput`]) before anything is written.
//! - Only a file the running user owns is replaced: a regular file owned
//!   by another uid (e.g. in a world-writable folder) is refused
//!   ([`io::ErrorKind::PermissionDenied`]) before anything is written.
//! - The replaced file's permissions are kept; a new file gets the usual
//!   `0666 & !umask`.
//! - No temporary file survives: an [`AtomicFile`] whose commit fails (the
//!   target became a symlink, a sticky folder refused the rename) or that
//!   is dropped without [`AtomicFile::commit`] removes its temporary file
//!   and leaves the target untouched; the temporary file is registered with
//!   [`crate::interrupt`] so a signal removes it too.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Checks that `path` is absent or a regular file (not followed if it is a
/// symlink) owned by the running user, and returns the permissions to
/// keep. Anything else is an [`io::ErrorKind::InvalidInput`] error naming
/// what is there; a file owned by another user is
/// [`io::ErrorKind::PermissionDenied`] naming both uids.
pub fn check_replaceable(path: &Path) -> io::Result<Option<Permissions>> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_file() => {
            check_owner(&m, nix::unistd::geteuid().as_raw())?;
            Ok(Some(m.permissions()))
        }
        Ok(m) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "is a {}, not a regular file; refusing to replace it",
                file_kind(&m.file_type())
            ),
        )),
    }
}

/// Refuses a file whose owner is not `me`.
fn check_owner(m: &fs::Metadata, me: u32) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if m.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "is owned by uid {}, not by the running user (uid {me}); refusing to replace it",
                m.uid()
            ),
        ));
    }
    Ok(())
}

/// A word for a file type, for messages.
pub fn file_kind(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "device"
    } else if t.is_socket() {
        "socket"
    } else if t.is_symlink() {
        "symlink"
    } else if t.is_dir() {
        "directory"
    } else if t.is_file() {
        "regular file"
    } else {
        "special file"
    }
}

/// A file being written next to its final path; [`AtomicFile::commit`]
/// renames it into place.
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    dir: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts replacing `path` (refused unless it is absent or a regular
    /// file, see [`check_replaceable`]).
    pub fn create(path: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let path = path.as_ref();
        let keep = check_replaceable(path)?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => Path::new(".").to_path_buf(),
        };
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
        let tmp = dir.join(format!(
            ".{}.{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let file = crate::interrupt::create_temp_file(&tmp, |p| {
            OpenOptions::new().write(true).create_new(true).open(p)
        })?;
        let mut me = AtomicFile {
            path: path.to_path_buf(),
            tmp,
            dir,
            file: Some(BufWriter::new(file)),
        };
        if let Some(p) = keep {
            fs::set_permissions(&me.tmp, p)?;
        }
        me.file.as_mut().map_or(Ok(()), |f| f.flush())?;
        Ok(me)
    }

    /// Finishes: fsync, re-check the target is still replaceable, rename
    /// over it, fsync the directory.
    /// On error the temporary file is removed (by `drop`) and the target is
    /// as it was.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(w) = self.file.as_mut() else {
            return Err(io::Error::other("already committed"));
        };
        w.flush()?;
        w.get_ref().sync_all()?;
        check_replaceable(&self.path)?;
        let (tmp, path) = (&self.tmp, &self.path);
        crate::interrupt::finish_temp(tmp, || fs::rename(tmp, path))?;
        self.file = None;
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            crate::interrupt::discard_temp(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically (see the module contracts).
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tpb-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Asserts no temporary file is left in `dir`, then removes it.
    #[track_caller]
    fn finish(dir: &Path) {
        let tmps = fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(tmps, 0, "temporary files left in {}", dir.display());
        fs::remove_dir_all(dir).unwrap();
    }

    /// `dir/name` holding `data`.
    fn file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, data).unwrap();
        p
    }

    #[test]
    fn writes_and_replaces() {
        let dir = scratch("replace");
        let p = dir.join("out.bin");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        finish(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions_and_refuses_special_files() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = scratch("special");
        let p = file(&dir, "secret", b"old");
        fs::set_permissions(&p, Permissions::from_mode(0o600)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "permissions kept");
        // A symlink, a directory, a device and a FIFO are refused, untouched.
        let target = file(&dir, "target", b"keep");
        let link = dir.join("link");
        symlink(&target, &link).unwrap();
        let sub = dir.join("sub");
        fs::create_dir(&sub).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        let mut refused = vec![link.clone(), sub.clone(), PathBuf::from("/dev/null")];
        if made {
            refused.push(fifo.clone());
        }
        for r in &refused {
            let e = write_atomic(r, b"x").unwrap_err();
            assert_eq!(
                e.kind(),
                io::ErrorKind::InvalidInput,
                "{}: {e}",
                r.display()
            );
        }
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"keep");
        assert!(sub.is_dir());
        if made {
            use std::os::unix::fs::FileTypeExt;
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        }
        finish(&dir);
    }

    /// The target replaced by a symlink between create and commit: the
    /// commit is refused, the symlink and what it points to are untouched,
    /// and the temporary file is gone (no `.out.<pid>.N.tmp` left).
    #[cfg(unix)]
    #[test]
    fn failed_commit_leaves_no_temporary_file() {
        let dir = scratch("swap");
        let p = file(&dir, "out", b"old");
        let elsewhere = file(&dir, "elsewhere", b"keep");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"new").unwrap();
        assert!(crate::interrupt::registered_temps().contains(&f.tmp));
        let tmp = f.tmp.clone();
        fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &p).unwrap();
        let e = f.commit().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
        assert_eq!(fs::read(&elsewhere).unwrap(), b"keep");
        assert!(fs::symlink_metadata(&p).unwrap().file_type().is_symlink());
        assert!(!crate::interrupt::registered_temps().contains(&tmp));
        finish(&dir);
    }

    /// A regular file owned by another uid is refused before anything is
    /// written (PermissionDenied naming both uids).
    #[cfg(unix)]
    #[test]
    fn refuses_a_file_owned_by_another_user() {
        use std::os::unix::fs::MetadataExt;
        let dir = scratch("owner");
        let p = file(&dir, "theirs", b"theirs");
        let m = fs::metadata(&p).unwrap();
        let e = check_owner(&m, m.uid().wrapping_add(1)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(
            e.to_string().contains(&format!("owned by uid {}", m.uid())),
            "{e}"
        );
        assert!(check_owner(&m, m.uid()).is_ok());
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::chown(&p, Some(65534), None).unwrap();
            let e = write_atomic(&p, b"x").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
            assert_eq!(fs::read(&p).unwrap(), b"theirs");
        }
        finish(&dir);
    }

    #[test]
    fn dropped_without_commit_changes_nothing() {
        let dir = scratch("drop");
        let p = file(&dir, "out", b"old");
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"partial").unwrap();
        }
        assert_eq!(fs::read(&p).unwrap(), b"old");
        finish(&dir);
    }
}
