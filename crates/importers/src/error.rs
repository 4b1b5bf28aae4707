//! [`ImportError`]: why a checkpoint could not be imported, naming the file and, for tensors,
//! every offending name.

use std::path::{Path, PathBuf};

use backbone::BackboneError;

/// Why a checkpoint could not be imported.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be read or is not valid: truncated, bad header, bad config field.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The tensors in the file do not fit the model; every offending name is listed.
    #[error(
        "{}: the tensors do not fit the model{}",
        path.display(),
        tensor_lists(missing, unexpected, mismatched)
    )]
    Tensors {
        /// The file.
        path: PathBuf,
        /// Names the model needs that the file lacks.
        missing: Vec<String>,
        /// Names in the file the model has no place for.
        unexpected: Vec<String>,
        /// `name: expected .., found ..` for tensors of the wrong shape or dtype.
        mismatched: Vec<String>,
    },
    /// The tokenizer beside the checkpoint cannot be read.
    #[error("{}: the tokenizer: {error}", path.display())]
    Tokenizer {
        /// The checkpoint folder.
        path: PathBuf,
        /// Why, naming the tokenizer file.
        #[source]
        error: data::DataError,
    },
    /// The image preprocessing beside the checkpoint (`preprocessor_config.json`) cannot be
    /// read.
    #[error("{}: the image preprocessing: {error}", path.display())]
    Preprocessor {
        /// The checkpoint folder.
        path: PathBuf,
        /// Why, naming the file.
        #[source]
        error: data::DataError,
    },
    /// The configuration read from the file cannot build a model.
    #[error("{}: {error}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// The rejected field.
        #[source]
        error: BackboneError,
    },
}

impl ImportError {
    pub(crate) fn file(path: &Path, message: impl Into<String>) -> Self {
        Self::File {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// `: missing (2): a, b; unexpected (1): c` for the lists that are not empty.
fn tensor_lists(missing: &[String], unexpected: &[String], mismatched: &[String]) -> String {
    let lists = [
        ("missing", missing),
        ("unexpected", unexpected),
        ("wrong shape or dtype", mismatched),
    ];
    (lists.iter())
        .filter(|(_, names)| !names.is_empty())
        .map(|(label, names)| format!("; {label} ({}): {}", names.len(), names.join(", ")))
        .collect()
}
