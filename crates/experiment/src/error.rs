//! Errors of the experiment layer: each says where (file, section, field, method, seed) and what
//! was expected. [`ConfigError`] is an invalid experiment file; [`ExperimentError`] is anything a
//! run can hit, with the error of the crate it came from kept as its source.

use std::fmt;

/// An invalid experiment file or value.
#[derive(Debug, Clone, PartialEq)]
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

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{file}: {}", self.message.trim_end()),
            None => f.write_str(self.message.trim_end()),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Declares [`ExperimentError`] with one variant per wrapped error type, its `From` impls,
/// `Display` and `source`, from one list.
macro_rules! experiment_error {
    ($($variant:ident($ty:ty)),* $(,)?) => {
        /// What went wrong in a run, from the crate where it happened; [`Context::context`]
        /// adds where.
        #[derive(Debug)]
        pub enum ExperimentError {
            $($variant($ty),)*
            /// A check of this crate's own, in words.
            Invalid(String),
            /// `source`, and where it happened (a field, a method and seed, a file).
            At {
                place: String,
                source: Box<ExperimentError>,
            },
        }

        impl fmt::Display for ExperimentError {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $(Self::$variant(e) => fmt::Display::fmt(e, f),)*
                    Self::Invalid(message) => f.write_str(message),
                    Self::At { place, source } => write!(f, "{place}: {source}"),
                }
            }
        }

        impl std::error::Error for ExperimentError {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                match self {
                    $(Self::$variant(e) => Some(e),)*
                    Self::Invalid(_) => None,
                    Self::At { source, .. } => Some(source.as_ref()),
                }
            }
        }

        $(impl From<$ty> for ExperimentError {
            fn from(e: $ty) -> Self {
                Self::$variant(e)
            }
        })*
    };
}

experiment_error!(
    Config(ConfigError),
    Data(data::DataError),
    Backbone(backbone::BackboneError),
    Import(backbone::ImportError),
    Train(train::TrainError),
    Hydra(hydra::HydraError),
    Lora(lora_ensemble::LoraError),
    HetDpt(hetdpt::HetDptError),
    Metrics(uq_metrics::MetricsError),
    Io(std::io::Error),
    Json(serde_json::Error),
    Plot(plots::PlotError),
);

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
pub trait Context<T> {
    fn context(self, place: impl fmt::Display) -> Result<T>;
}

impl<T, E: Into<ExperimentError>> Context<T> for std::result::Result<T, E> {
    fn context(self, place: impl fmt::Display) -> Result<T> {
        self.map_err(|e| ExperimentError::At {
            place: place.to_string(),
            source: Box::new(e.into()),
        })
    }
}
