//! Errors of the experiment layer: each says where (file, section, field, method, seed) and what
//! was expected. [`ConfigError`] is an invalid experiment file; [`ExperimentError`] is anything a
//! run can hit, with the error of the crate it came from kept as its source.

use std::fmt;

/// An invalid experiment file or value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}", file.as_ref().map(|f| format!("{f}: ")).unwrap_or_default(), message.trim_end())]
pub struct ConfigError {
    file: Option<String>,
    message: String,
}

impl ConfigError {
    pub fn msg(message: impl Into<String>) -> Self {
        Self {
            file: None,
            message: message.into(),
        }
    }

    pub fn new(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: Some(file.to_string()),
            message: message.into(),
        }
    }

    /// Names the file the error was found in.
    pub fn in_file(mut self, file: &str) -> Self {
        self.file = Some(file.to_string());
        self
    }

    /// Prefixes the message with the place (section, entry) it refers to.
    pub fn at(mut self, place: &str) -> Self {
        self.message = format!("{place}: {}", self.message);
        self
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

/// What went wrong in a run, from the crate where it happened (kept as the source);
/// [`ErrorContext::context`] adds where. The message of each is the whole story in one line
/// (`where: what`), since that line is what a researcher reads; `source()` walks the same
/// chain for programs.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Data(#[from] data::DataError),
    #[error("{0}")]
    Backbone(#[from] backbone::BackboneError),
    #[error("{0}")]
    Import(#[from] importers::ImportError),
    #[error("{0}")]
    Train(#[from] train::TrainError),
    #[error("{0}")]
    Hydra(#[from] hydra::HydraError),
    #[error("{0}")]
    Lora(#[from] lora_ensemble::LoraError),
    #[error("{0}")]
    HetDpt(#[from] hetdpt::HetDptError),
    #[error("{0}")]
    Metrics(#[from] uq_metrics::MetricsError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("{0}")]
    Report(#[from] report::ReportError),
    /// A check of this crate's own, in words.
    #[error("{0}")]
    Invalid(String),
    /// `source`, and where it happened (a field, a method and seed, a file).
    #[error("{place}: {source}")]
    At {
        place: String,
        source: Box<ExperimentError>,
    },
}

impl ExperimentError {
    /// An error found by this crate's own checks.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }
}

/// Fails when a signal has asked the process to stop ([`train::interrupt`]), naming the stage
/// it stopped before. Called between stages, where nothing is half-done; training itself stops
/// at its next step.
pub(crate) fn check_stop(before: impl fmt::Display) -> Result<()> {
    match train::interrupt::requested() {
        None => Ok(()),
        Some(signal) => Err(ExperimentError::invalid(format!(
            "stopped by {} before {before}; the models trained so far are in the cache, and \
             a rerun reads them back",
            train::interrupt::signal_name(signal)
        ))),
    }
}

/// The result type of the experiment layer.
pub type Result<T, E = ExperimentError> = std::result::Result<T, E>;

/// Says where an error happened: `load().context("data.dataset")?` reads
/// `data.dataset: <the error>`.
pub trait ErrorContext<T> {
    fn context(self, place: impl fmt::Display) -> Result<T>;
}

impl<T, E: Into<ExperimentError>> ErrorContext<T> for std::result::Result<T, E> {
    fn context(self, place: impl fmt::Display) -> Result<T> {
        self.map_err(|e| ExperimentError::At {
            place: place.to_string(),
            source: Box::new(e.into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;

    #[test]
    fn context_keeps_the_crate_error_as_the_source_of_the_line() {
        let inner = backbone::BackboneError::invalid("ViTConfig.n_heads", 0, "at least 1");
        let failed: std::result::Result<(), _> = Err(hydra::HydraError::from(inner.clone()));
        let err = failed.context("method `hydra`, seed 2").unwrap_err();
        assert_eq!(err.to_string(), format!("method `hydra`, seed 2: {inner}"));
        // The chain: At -> Hydra -> HydraError::Backbone -> BackboneError.
        let hydra = err
            .source()
            .and_then(|e| e.source())
            .expect("the hydra error");
        assert!(hydra.downcast_ref::<hydra::HydraError>().is_some());
        let root = hydra.source().expect("the backbone error");
        assert_eq!(root.downcast_ref::<backbone::BackboneError>(), Some(&inner));
    }
}
