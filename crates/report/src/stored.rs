//! What a join reads of a run's `config.toml` (the resolved experiment, as the run wrote it).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{ReportError, Result};

/// What a join reads of a run's `config.toml` (the resolved experiment, as the run wrote it):
/// the whole file, to tell a part of the same experiment, and the fields it uses.
pub(crate) struct StoredConfig {
    pub(crate) table: toml::Table,
    pub(crate) data: toml::Table,
    pub(crate) eval: StoredEval,
    /// `[[claim]]`: none in runs that declare none (or predate claims).
    pub(crate) claims: Vec<crate::Claim>,
}

/// `[eval]` as far as a join uses it.
#[derive(Deserialize)]
pub(crate) struct StoredEval {
    #[serde(default = "default_reference")]
    pub(crate) reference: String,
    #[serde(default)]
    pub(crate) margins: BTreeMap<String, f64>,
}

/// The reference of runs whose `config.toml` predates `[eval] reference`.
fn default_reference() -> String {
    crate::DEFAULT_REFERENCE.into()
}

impl StoredConfig {
    pub(crate) fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| ReportError::io(path, e))?;
        let table: toml::Table =
            toml::from_str(&text).map_err(|e| ReportError::parse(path, "a TOML file", e))?;
        let section = |name: &str| match table.get(name) {
            Some(toml::Value::Table(t)) => t.clone(),
            _ => toml::Table::new(),
        };
        let eval = StoredEval::deserialize(section("eval"))
            .map_err(|e| ReportError::parse(path, "an experiment's [eval]", e))?;
        let claims = match table.get("claim") {
            Some(v) => Vec::deserialize(v.clone())
                .map_err(|e| ReportError::parse(path, "an experiment's [[claim]]", e))?,
            None => Vec::new(),
        };
        Ok(Self {
            data: section("data"),
            eval,
            claims,
            table,
        })
    }

    /// `[data] ood_score` (one name or a list): the first.
    pub(crate) fn ood_score(&self) -> Option<String> {
        match self.data.get("ood_score")? {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Array(a) => a.first()?.as_str().map(str::to_string),
            _ => None,
        }
    }

    pub(crate) fn eval_batch_size(&self) -> Option<i64> {
        self.data.get("eval_batch_size")?.as_integer()
    }
}
