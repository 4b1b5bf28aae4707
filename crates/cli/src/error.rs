//! The command's error: the library's error kept as it is (its message is the whole line, its
//! `source()` the chain), or a check of the command's own (an input file, an argument) in words.

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Experiment(#[from] experiment::ExperimentError),
    #[error("{0}")]
    Config(#[from] experiment::ConfigError),
    #[error("{0}")]
    Report(#[from] report::ReportError),
    #[error("{0}")]
    Data(#[from] data::DataError),
    #[error("{0}")]
    Metrics(#[from] uq_metrics::MetricsError),
    #[error("{0}")]
    Backbone(#[from] backbone::BackboneError),
    #[error("{0}")]
    Import(#[from] importers::ImportError),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Toml(#[from] toml::ser::Error),
    /// A file or argument of the command itself, named in the message.
    #[error("{0}")]
    Invalid(String),
}

/// The command-line checks (input files, arguments) say what is wrong in words.
impl From<String> for CliError {
    fn from(message: String) -> Self {
        Self::Invalid(message)
    }
}

/// The result of a command.
pub type Result<T, E = CliError> = std::result::Result<T, E>;
