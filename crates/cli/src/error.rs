//! The command's error: the library's error kept whole (transparent: its message and its
//! `source()` chain are its own), a check of the command's own (an input file, an argument) in
//! words, or a place of the command (a file, an argument, a step) with the error underneath as
//! the source. `main` prints the chain, each part once ([`experiment::error_chain`]). The errors
//! of the crates under the pipeline (data, backbones, imports, training) arrive inside
//! [`experiment::ExperimentError`], never wrapped again here.

use std::error::Error;
use std::fmt::Display;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Experiment(#[from] experiment::ExperimentError),
    #[error(transparent)]
    Config(#[from] experiment::ConfigError),
    #[error(transparent)]
    Report(#[from] report::ReportError),
    #[error(transparent)]
    Runtime(#[from] runtime::RuntimeError),
    #[error(transparent)]
    Metrics(#[from] uq_metrics::MetricsError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Toml(#[from] toml::ser::Error),
    /// A check of the command's own (a file or argument, named in the message), in words.
    #[error("{0}")]
    Invalid(String),
    /// Where the command was (a file, an argument, a step) when `source` happened.
    #[error("{place}")]
    At {
        place: String,
        source: Box<dyn Error + Send + Sync>,
    },
}

impl CliError {
    /// `source` (an error, or a reason in words) at `place`.
    pub fn at(place: impl Display, source: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        Self::At {
            place: place.to_string(),
            source: source.into(),
        }
    }
}

/// The command-line checks (input files, arguments) say what is wrong in words; an error
/// underneath is kept with [`CliError::at`] instead.
impl From<String> for CliError {
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

impl From<&str> for CliError {
    fn from(message: &str) -> Self {
        Self::Invalid(message.to_string())
    }
}

/// The result of a command.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use experiment::error_chain;

    #[test]
    fn the_chain_prints_each_part_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let runtime = runtime::RuntimeError::io(std::path::Path::new("a.lock"), io);
        let err = CliError::at("--features", runtime);
        assert_eq!(error_chain(&err), "--features: a.lock: no such file");
        // Transparent: the library's error is not repeated.
        let plain = CliError::from(experiment::ExperimentError::invalid("x"));
        assert_eq!(error_chain(&plain), "x");
        let inner = CliError::from(experiment::ExperimentError::from(
            runtime::RuntimeError::invalid("y"),
        ));
        assert_eq!(error_chain(&inner), "y");
        assert_eq!(
            error_chain(&CliError::at("--k", "must be positive".to_string())),
            "--k: must be positive"
        );
    }
}
