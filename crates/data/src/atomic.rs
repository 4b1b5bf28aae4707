//! Crash-safe file replacement: readers see either the old file or the complete new one.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::Path;
use std::process;

/// Writes `bytes` to `path` atomically: the data goes to `<name>.tmp.<pid>` in the same directory,
/// is fsynced, then renamed over `path` (a rename within one directory is atomic on POSIX and
/// NTFS). On failure the temporary file is removed and the error names the path.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: expected a path ending in a file name", path.display()),
        )
    })?;
    let mut tmp_name = name.to_os_string();
    tmp_name.push(format!(".tmp.{}", process::id()));
    let tmp = path.with_file_name(tmp_name);

    let written = write_synced(&tmp, bytes).and_then(|()| fs::rename(&tmp, path));
    if let Err(e) = written {
        // Best effort: the temporary may not exist if creating it was what failed.
        let _ = fs::remove_file(&tmp);
        return Err(with_path(path, e));
    }
    sync_parent(path);
    Ok(())
}

/// The I/O error with the path it concerns: same kind, its message the path, its `source()` the
/// original error (so the chain reads `path: cause`, each once).
pub fn with_path(path: &Path, e: io::Error) -> io::Error {
    let kind = e.kind();
    let path = path.to_path_buf();
    io::Error::new(kind, PathError { path, source: e })
}

/// An I/O error and the path it concerns; `io::Error` shows this message and gives its source.
#[derive(Debug, thiserror::Error)]
#[error("{}", path.display())]
struct PathError {
    path: std::path::PathBuf,
    source: io::Error,
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Makes the rename itself durable. Best effort: the new file is already in place, and some file
/// systems refuse to fsync a directory, which must not turn a completed write into an error.
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_files_and_reports_bad_paths() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ckpt.bin");
        atomic_write(&path, b"old").unwrap();
        atomic_write(&path, b"new contents").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new contents");

        let missing = dir.path().join("no-such-dir").join("x.json");
        let err = atomic_write(&missing, b"x").expect_err("parent does not exist");
        // The message is the path, once; the source is the operating system's error.
        assert_eq!(err.to_string(), missing.display().to_string());
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        let cause = std::error::Error::source(&err).expect("the original error");
        assert_eq!(
            cause.downcast_ref::<io::Error>().unwrap().kind(),
            io::ErrorKind::NotFound
        );
        let err = atomic_write(Path::new("/"), b"x").expect_err("no file name");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("ckpt.bin")],
            "no temporary left"
        );
    }
}
