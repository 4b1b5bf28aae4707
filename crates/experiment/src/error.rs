//! Errors of the experiment layer: each says where (file, section, field, method, seed) and what
//! was expected. [`ConfigError`] is an invalid experiment file; [`ExperimentError`] is anything a
//! run can hit, with the error of the crate it came from kept as its source.

use std::error::Error;
use std::fmt;

/// An invalid experiment file or value: `file: place: what`, and the error underneath (a TOML
/// or serde error, a checkpoint that cannot be read) as the source.
#[derive(Debug, Clone)]
pub struct ConfigError {
    file: Option<String>,
    message: String,
    source: Option<data::Cause>,
}

impl ConfigError {
    pub fn msg(message: impl Into<String>) -> Self {
        Self {
            file: None,
            message: message.into(),
            source: None,
        }
    }

    pub fn new(file: &str, message: impl Into<String>) -> Self {
        Self::msg(message).in_file(file)
    }

    /// `message` (the place or what was being done) with `source` underneath.
    pub fn caused(message: impl Into<String>, source: impl Error + Send + Sync + 'static) -> Self {
        Self {
            source: Some(std::sync::Arc::new(source)),
            ..Self::msg(message)
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

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        f.write_str(self.message.trim_end())
    }
}

/// Written out rather than derived, as for [`data::DataError`]: the source is the error inside
/// the `Arc`, so `downcast_ref` sees its type.
impl Error for ConfigError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.source.as_deref().map(|c| c as &(dyn Error + 'static))
    }
}

/// Two errors are equal when they say the same thing about the same file, sources included.
impl PartialEq for ConfigError {
    fn eq(&self, other: &Self) -> bool {
        let source = |e: &Self| e.source.as_ref().map(ToString::to_string);
        self.file == other.file && self.message == other.message && source(self) == source(other)
    }
}

/// What went wrong in a run, from the crate where it happened (kept whole: the wrappers are
/// transparent); [`ErrorContext::context`] adds where. Each message is its own part
/// (`where`, or `what`), and `source()` gives the next: the command line prints the chain
/// (`where: what: cause`), each part once.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Data(#[from] data::DataError),
    #[error(transparent)]
    Backbone(#[from] backbone::BackboneError),
    #[error(transparent)]
    Import(#[from] importers::ImportError),
    #[error(transparent)]
    Train(#[from] train::TrainError),
    #[error(transparent)]
    Hydra(#[from] hydra::HydraError),
    #[error(transparent)]
    Pruning(#[from] pruning::PruningError),
    #[error(transparent)]
    Lora(#[from] lora_ensemble::LoraError),
    #[error(transparent)]
    HetDpt(#[from] hetdpt::HetDptError),
    #[error(transparent)]
    Metrics(#[from] uq_metrics::MetricsError),
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Toml(#[from] toml::ser::Error),
    #[error(transparent)]
    Tensor(#[from] burn::tensor::DataError),
    #[error(transparent)]
    Report(#[from] report::ReportError),
    /// A name that its registry lacks (a method kind's, a data source's).
    #[error(transparent)]
    Unknown(#[from] registry::Unknown),
    /// The runtime's: the cache's folders, a device, a shard.
    #[error(transparent)]
    Runtime(#[from] runtime::RuntimeError),
    /// A check of this crate's own, in words.
    #[error("{0}")]
    Invalid(String),
    /// `source`, and where it happened (a field, a method and seed, a file).
    #[error("{place}")]
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

/// Whether a signal has asked the process to stop ([`train::interrupt`]): worker processes
/// then start no new job, and running ones are asked to stop.
pub(crate) fn stop_requested() -> bool {
    train::interrupt::requested().is_some()
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

    fn chain(e: &dyn Error) -> Vec<String> {
        std::iter::successors(Some(e), |&e| e.source())
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn context_is_its_own_part_and_the_crate_error_follows_once() {
        let inner = backbone::BackboneError::invalid("ViTConfig.n_heads", 0, "at least 1");
        let failed: std::result::Result<(), _> = Err(hydra::HydraError::from(inner.clone()));
        let err = failed.context("method `hydra`, seed 2").unwrap_err();
        // The wrappers (ExperimentError::Hydra, HydraError::Backbone) are transparent.
        assert_eq!(
            chain(&err),
            ["method `hydra`, seed 2".to_string(), inner.to_string()]
        );
        // At's source is its boxed error.
        let source = err.source().expect("the hydra error");
        assert!(matches!(
            source.downcast_ref::<Box<ExperimentError>>().map(|b| &**b),
            Some(ExperimentError::Hydra(hydra::HydraError::Backbone(b))) if *b == inner
        ));
    }

    #[test]
    fn a_config_error_names_its_file_once_and_keeps_the_toml_error() {
        let toml = "a = ".parse::<toml::Table>().unwrap_err();
        let err = ConfigError::caused("not valid TOML", toml.clone()).in_file("x.toml");
        let parts = chain(&err);
        assert_eq!(
            parts,
            ["x.toml: not valid TOML".to_string(), toml.to_string()]
        );
        let source = err
            .source()
            .and_then(|s| s.downcast_ref::<toml::de::Error>());
        assert_eq!(source, Some(&toml));
        assert_eq!(data::error_chain(&err), parts.join(": ").trim_end());
    }
}
