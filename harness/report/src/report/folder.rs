//! The report folder, claimed before the run ([`claim_dir`]) and filled atomically
//! ([`write_dir`]: a marked staging folder renamed onto the claim). Promises: `reports/README.md`.

use crate::atomic::write_atomic;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Report-folder problems (exit 2).
#[derive(Debug)]
pub enum ReportDirError {
    Exists(PathBuf),
    Io { path: PathBuf, error: io::Error },
}

impl std::fmt::Display for ReportDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportDirError::Exists(p) => write!(
                f,
                "{}: report folder exists already; refusing to overwrite (choose another \
                 --report-dir)",
                p.display()
            ),
            ReportDirError::Io { path, error } => {
                write!(f, "{}: cannot write report: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for ReportDirError {}

/// `(YYYYMMDDTHHMMSSZ, YYYY-MM-DDTHH:MM:SSZ)` for the current UTC time.
pub fn utc_now() -> (String, String) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_stamp(secs)
}

/// `(compact, iso)` UTC stamps of a Unix time (civil-from-days, proleptic Gregorian).
pub fn utc_stamp(secs: u64) -> (String, String) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (h, mi, s) = (rem / 3600, (rem % 3600) / 60, rem % 60);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        format!("{y:04}{m:02}{d:02}T{h:02}{mi:02}{s:02}Z"),
        format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z"),
    )
}

/// Creates `explicit` (refused if anything is there) or the first free `root/<stamp>`,
/// `root/<stamp>-1`, ...: creating a folder is atomic, so two concurrent runs never get the same
/// one. It stays empty until [`write_dir`]; dropping a [`ClaimGuard`] gives it back.
pub fn claim_dir(
    explicit: Option<&Path>,
    root: &Path,
    stamp: &str,
) -> Result<PathBuf, ReportDirError> {
    let mut created = Vec::new();
    let result = (|| {
        let parent = match explicit {
            Some(p) if std::fs::symlink_metadata(p).is_ok() => {
                return Err(ReportDirError::Exists(p.to_path_buf()))
            }
            Some(p) => p.parent().filter(|d| !d.as_os_str().is_empty()),
            None => Some(root),
        };
        if let Some(d) = parent {
            create_dirs(d, &mut created)?;
        }
        let mut n = 0u32;
        loop {
            let p = match explicit {
                Some(p) => p.to_path_buf(),
                None if n == 0 => root.join(stamp),
                None => root.join(format!("{stamp}-{n}")),
            };
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(p),
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(io_error(&p, e)),
                Err(_) if explicit.is_some() => return Err(ReportDirError::Exists(p)),
                Err(_) => n += 1,
            }
        }
    })();
    match &result {
        Ok(dir) => drop(put(
            &CLAIMED,
            Some(Claim {
                dir: dir.clone(),
                created,
            }),
        )),
        Err(_) => remove_created(&created),
    }
    result
}

fn io_error(path: &Path, error: io::Error) -> ReportDirError {
    ReportDirError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// `create_dir_all` that records, outermost first, the folders it created.
fn create_dirs(dir: &Path, created: &mut Vec<PathBuf>) -> Result<(), ReportDirError> {
    let mut missing = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at.filter(|d| !d.as_os_str().is_empty()) {
        if std::fs::symlink_metadata(d).is_ok() {
            break;
        }
        missing.push(d.to_path_buf());
        at = d.parent();
    }
    for d in missing.into_iter().rev() {
        match std::fs::create_dir(&d) {
            Ok(()) => created.push(d),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io_error(&d, e)),
        }
    }
    let not_a_folder = io::Error::new(io::ErrorKind::NotADirectory, "not a folder");
    refuse!(
        !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()),
        io_error(dir, not_a_folder)
    );
    Ok(())
}

/// Removes `created` folders, innermost first, each only while empty.
fn remove_created(created: &[PathBuf]) {
    for d in created.iter().rev() {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
    }
}

/// Dropped before [`write_dir`] filled the claim: removes it and the parents created for it,
/// while still empty, so no early return leaves an empty folder behind.
#[derive(Debug)]
pub struct ClaimGuard;

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        if let Some(c) = put(&CLAIMED, None) {
            if std::fs::remove_dir(&c.dir).is_ok() {
                remove_created(&c.created);
            }
        }
    }
}

struct Claim {
    dir: PathBuf,
    created: Vec<PathBuf>,
}

static CLAIMED: Mutex<Option<Claim>> = Mutex::new(None);
static STAGING: Mutex<Option<PathBuf>> = Mutex::new(None);
static STAGING_PAUSE_MS: AtomicU64 = AtomicU64::new(0);

/// Sets `slot` to `value` and returns what it held (nothing when its lock is poisoned).
fn put<T>(slot: &Mutex<Option<T>>, value: Option<T>) -> Option<T> {
    slot.lock()
        .ok()
        .and_then(|mut g| std::mem::replace(&mut *g, value))
}

/// Test hook: [`write_dir`] waits this long with its staging folder in place.
pub fn set_staging_pause_ms(ms: u64) {
    STAGING_PAUSE_MS.store(ms, Ordering::Relaxed);
}

/// Removes the staging folder, if any, and the still-empty claim (signals, fatal errors).
pub fn abort_staging() {
    if let Some(p) = put(&STAGING, None) {
        let _ = std::fs::remove_dir_all(p);
    }
    drop(ClaimGuard);
}

/// The marker file of a staging folder: [`marker_text`] of its own `<pid>-<token>` suffix.
const STAGING_MARKER: &str = ".tpbconform-staging";
const STAGING_INFIX: &str = ".staging-";

fn marker_text(suffix: &str) -> String {
    format!("tpbconform report staging {suffix}\n")
}

/// A fresh `<pid>-<token>` suffix (the token only differs between runs of one pid).
fn staging_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let h = crate::fuzz_entry::fnv1a64(&nanos.to_le_bytes());
    format!("{}-{h:016x}", std::process::id())
}

fn staging_name(final_dir: &Path, suffix: &str) -> PathBuf {
    let name = final_dir
        .file_name()
        .map_or_else(|| "report".into(), |n| n.to_string_lossy().to_string());
    final_dir
        .parent()
        .unwrap_or(Path::new("."))
        .join(format!(".{name}{STAGING_INFIX}{suffix}"))
}

/// Removes the staging folders a killed `tpbconform` left in `parent`: only
/// `.<name>.staging-<pid>-<token>` holding the marker that names that `<pid>-<token>`, whose
/// process is gone (Linux: no `/proc/<pid>`; elsewhere nothing is removed).
pub fn cleanup_stale(parent: &Path) {
    let proc_root = Path::new("/proc");
    if !proc_root.join("self").exists() {
        return;
    }
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let n = e.file_name().to_string_lossy().to_string();
        let staging = n.strip_prefix('.').and(n.rsplit_once(STAGING_INFIX));
        let pid = |s: &str| s.split_once('-')?.0.parse::<u32>().ok();
        let Some((suffix, pid)) = staging.and_then(|(_, s)| Some((s, pid(s)?))) else {
            continue;
        };
        let ours = e.file_type().is_ok_and(|t| t.is_dir())
            && std::fs::read(e.path().join(STAGING_MARKER))
                .is_ok_and(|m| m == marker_text(suffix).as_bytes());
        if ours && pid != std::process::id() && !proc_root.join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Writes `files` (relative path, bytes) as `final_dir`, atomically; `final_dir` must be
/// absent or this process's claim.
pub fn write_dir(final_dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), ReportDirError> {
    let parent = final_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
    cleanup_stale(parent);
    let claimed = CLAIMED
        .lock()
        .ok()
        .is_some_and(|g| g.as_ref().is_some_and(|c| c.dir == final_dir));
    if !claimed && std::fs::symlink_metadata(final_dir).is_ok() {
        return Err(ReportDirError::Exists(final_dir.to_path_buf()));
    }
    let suffix = staging_suffix();
    let staging = staging_name(final_dir, &suffix);
    std::fs::create_dir(&staging).map_err(|e| io_error(&staging, e))?;
    put(&STAGING, Some(staging.clone()));
    let result = (|| {
        let marker = staging.join(STAGING_MARKER);
        write_atomic(&marker, marker_text(&suffix).as_bytes()).map_err(|e| io_error(&marker, e))?;
        let pause = STAGING_PAUSE_MS.load(Ordering::Relaxed);
        if pause > 0 {
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
        for (rel, bytes) in files {
            let p = staging.join(rel);
            if let Some(d) = p.parent() {
                std::fs::create_dir_all(d).map_err(|e| io_error(d, e))?;
            }
            write_atomic(&p, bytes).map_err(|e| io_error(&p, e))?;
        }
        std::fs::remove_file(&marker).map_err(|e| io_error(&marker, e))?;
        // rename(2) replaces the empty claimed folder atomically; a folder
        // that is not empty (someone else's) makes it fail.
        std::fs::rename(&staging, final_dir).map_err(|e| match e.kind() {
            io::ErrorKind::DirectoryNotEmpty | io::ErrorKind::AlreadyExists => {
                ReportDirError::Exists(final_dir.to_path_buf())
            }
            _ => io_error(final_dir, e),
        })?;
        if let Ok(d) = std::fs::File::open(parent) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    put(&STAGING, None);
    if claimed && result.is_ok() {
        put(&CLAIMED, None);
    }
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0).1, "1970-01-01T00:00:00Z");
        assert_eq!(utc_stamp(1_709_164_800).0, "20240229T000000Z");
        assert_eq!(utc_stamp(951_782_400).1, "2000-02-29T00:00:00Z");
    }

    #[test]
    fn claim_dir_never_reuses_and_write_dir_fills_the_claim() {
        let root = std::env::temp_dir().join(format!("tpb-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("S")).unwrap();
        let c = claim_dir(None, &root, "S").unwrap();
        assert_eq!(c, root.join("S-1"));
        assert!(c.is_dir(), "claimed at once");
        assert_eq!(claim_dir(None, &root, "S").unwrap(), root.join("S-2"));
        assert!(matches!(
            claim_dir(Some(&root.join("S")), &root, "x"),
            Err(ReportDirError::Exists(_))
        ));
        // Concurrent default claims of one stamp get distinct folders.
        let got: Vec<PathBuf> = (0..8)
            .map(|_| {
                let root = root.clone();
                std::thread::spawn(move || claim_dir(None, &root, "T").unwrap())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        let mut uniq = got.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), 8, "{got:?}");
        let r = claim_dir(Some(&root.join("R")), &root, "x").unwrap();
        write_dir(&r, &[("a/b.txt".into(), b"x".to_vec())]).unwrap();
        assert_eq!(std::fs::read(root.join("R/a/b.txt")).unwrap(), b"x");
        assert!(write_dir(&root.join("R"), &[]).is_err());
        assert!(write_dir(&root.join("S-1"), &[]).is_err(), "not claimed");
        let left: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(left.is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn cleanup_stale_removes_only_marked_staging_of_dead_processes() {
        let root = std::env::temp_dir().join(format!("tpb-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // A pid that is not running (pid_max is at most 2^22 on Linux).
        let dead = 4_194_999u32;
        let ours = root.join(format!(".r.staging-{dead}-00ab"));
        std::fs::create_dir(&ours).unwrap();
        std::fs::write(
            ours.join(STAGING_MARKER),
            marker_text(&format!("{dead}-00ab")),
        )
        .unwrap();
        // Same name pattern, no marker / a marker naming another token /
        // the old `.staging-<pid>` form: not ours, kept.
        let foreign = [
            root.join(format!(".r.staging-{dead}-00cd")),
            root.join(format!(".q.staging-{dead}-00ef")),
            root.join(format!(".p.staging-{dead}")),
        ];
        for f in &foreign {
            std::fs::create_dir(f).unwrap();
            std::fs::write(f.join("data"), b"precious").unwrap();
        }
        std::fs::write(
            foreign[1].join(STAGING_MARKER),
            marker_text(&format!("{dead}-0000")),
        )
        .unwrap();
        cleanup_stale(&root);
        if Path::new("/proc/self").exists() {
            assert!(!ours.exists(), "marked staging of a dead pid removed");
        }
        for f in &foreign {
            assert!(f.join("data").exists(), "{} kept", f.display());
        }
        std::fs::remove_dir_all(&root).unwrap();
    }
}
