//! `[backbone] zero_shot`: the class names and prompt templates of a CLIP checkpoint's zero-shot
//! classifier, listed in the file or read from a file (one a line).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// The template of a `zero_shot` table that lists none.
pub const DEFAULT_TEMPLATE: &str = "a photo of a {}.";

/// `[backbone] zero_shot = { ... }`: what makes a CLIP checkpoint (`[backbone] checkpoint`) a
/// classifier of the data set's classes without training: class c's prompts are the templates
/// with `{}` replaced by its name. Every key is optional (`zero_shot = {}` takes the defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZeroShotSection {
    /// The class names in label order; absent (and no `classes_file`): the data set's own (an
    /// image folder's class folder names, CIFAR's names file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<String>>,
    /// A text file of class names, one a line, in label order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes_file: Option<PathBuf>,
    /// Prompt templates, each holding `{}` where the class name goes; absent (and no
    /// `templates_file`): [`DEFAULT_TEMPLATE`] alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templates: Option<Vec<String>>,
    /// A text file of templates, one a line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub templates_file: Option<PathBuf>,
}

impl ZeroShotSection {
    /// The class names the file gives (listed or read), `None` when they are the data set's.
    pub fn classes(&self) -> Result<Option<Vec<String>>, ConfigError> {
        let field = "backbone.zero_shot.classes";
        let classes = one_of(field, &self.classes, &self.classes_file)?;
        if let Some(names) = &classes
            && let Some(i) = names.iter().position(|n| n.trim().is_empty())
        {
            return Err(ConfigError::msg(format!(
                "{field}: name {} is empty; expected a class name",
                i + 1
            )));
        }
        Ok(classes)
    }

    /// The prompt templates (listed, read, else [`DEFAULT_TEMPLATE`]), each holding `{}`.
    pub fn templates(&self) -> Result<Vec<String>, ConfigError> {
        let field = "backbone.zero_shot.templates";
        let templates = one_of(field, &self.templates, &self.templates_file)?
            .unwrap_or_else(|| vec![DEFAULT_TEMPLATE.to_string()]);
        if let Some(bad) = templates.iter().find(|t| !t.contains("{}")) {
            return Err(ConfigError::msg(format!(
                "{field}: {bad:?} has no {{}}; expected {{}} where the class name goes, e.g. \
                 {DEFAULT_TEMPLATE:?}"
            )));
        }
        Ok(templates)
    }
}

/// The list given by `list` or by the lines of `file` (not both, not empty), if either is.
fn one_of(
    field: &str,
    list: &Option<Vec<String>>,
    file: &Option<PathBuf>,
) -> Result<Option<Vec<String>>, ConfigError> {
    let fail = |what: String| Err(ConfigError::msg(format!("{field}: {what}")));
    match (list, file) {
        (Some(_), Some(_)) => fail(format!("give `{field}` or `{field}_file`, not both")),
        (Some(list), None) if list.is_empty() => {
            fail("an empty list; expected at least one".into())
        }
        (Some(list), None) => Ok(Some(list.clone())),
        (None, Some(path)) => lines(path, &format!("{field}_file")).map(Some),
        (None, None) => Ok(None),
    }
}

/// The non-blank lines of `path`, trimmed; an error naming `field` and the file when it cannot
/// be read or holds none.
fn lines(path: &Path, field: &str) -> Result<Vec<String>, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::msg(format!("{field}: cannot read {}: {e}", path.display())))?;
    let lines: Vec<String> = (text.lines().map(str::trim))
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    if lines.is_empty() {
        return Err(ConfigError::msg(format!(
            "{field}: {} has no line; expected one entry a line",
            path.display()
        )));
    }
    Ok(lines)
}
