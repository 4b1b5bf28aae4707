//! Errors of reading, joining, drawing and writing runs: each names the file (or the runs) and
//! keeps the underlying error as its source; the message is the whole line.

use std::path::{Path, PathBuf};

use plots::PlotError;

/// What went wrong with a stored run.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A run's file could not be read or written.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A run's file that is not what it should be (`what`: "a run summary", ...).
    #[error("{}: not {what}", path.display())]
    Parse {
        path: PathBuf,
        what: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// A run folder without a readable summary (the I/O error is the source).
    #[error("{}: cannot read it (is this a run directory?)", path.display())]
    NotARun {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Runs that cannot be joined, or an argument that cannot be used, in words.
    #[error("{0}")]
    Invalid(String),
}

impl ReportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn parse(
        path: &Path,
        what: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Parse {
            path: path.to_path_buf(),
            what,
            source: Box::new(source),
        }
    }
}

/// The result type of this crate.
pub type Result<T, E = ReportError> = std::result::Result<T, E>;
