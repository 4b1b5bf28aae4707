//! Errors of the experiment layer: each says where (file, section, field) and what was expected.

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
