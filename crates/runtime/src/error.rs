//! Errors of the runtime: a check of its own in words, or a file it could not read or write,
//! named once, with the I/O or JSON error underneath as the source.

use std::path::{Path, PathBuf};

/// What went wrong in the runtime machinery (the cache's folders, a worker's spec, a device).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A check of this crate's own, in words (the file, value or name it refers to included).
    #[error("{0}")]
    Invalid(String),
    /// The file or folder `path`, and the I/O error it gave.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// What did not parse as JSON (a worker spec), and serde's error.
    #[error("{what}")]
    Json {
        what: String,
        source: serde_json::Error,
    },
    /// A name that its registry lacks (a backend's).
    #[error(transparent)]
    Unknown(#[from] registry::Unknown),
}

impl RuntimeError {
    /// An error found by this crate's own checks.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }

    /// The I/O error `source` at `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Names the path an I/O error happened at: `fs::read(&p).at(&p)?`.
pub(crate) trait IoContext<T> {
    fn at(self, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &Path) -> Result<T> {
        self.map_err(|source| RuntimeError::io(path, source))
    }
}

/// The result type of the runtime.
pub type Result<T, E = RuntimeError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_named_once_and_the_io_error_follows_as_the_source() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let err = RuntimeError::io(Path::new("cache/x.lock"), io);
        let parts: Vec<String> =
            std::iter::successors(Some(&err as &(dyn std::error::Error + 'static)), |e| {
                e.source()
            })
            .map(ToString::to_string)
            .collect();
        assert_eq!(parts, ["cache/x.lock", "no such file"]);
    }
}
