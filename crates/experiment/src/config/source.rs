//! Where a data set comes from: a name of the built-in catalog, or a set on disk.

use std::path::PathBuf;

use data::{DATASETS, Modality};
use serde::{Deserialize, Deserializer, Serialize};

/// `[data] dataset` and each entry of `[data] ood`: a catalog name (`uqformer list` shows them),
/// or a table naming a set on disk, `{ path = "...", ... }` ([`DiskSet`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DataSource {
    /// A set of the built-in catalog, read from the data root.
    Catalog(String),
    /// A set on disk.
    Disk(DiskSet),
}

/// A data set on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSet {
    /// A class-per-folder image tree (`{train,val,test}/<class>/<image>`, or `<class>/<image>`
    /// alone; JPEG and PNG), an extracted CIFAR binary folder (`cifar-10-batches-bin`,
    /// `cifar-100-binary`), or a text table (`.csv`, `.tsv`, `.jsonl`, optionally `.gz`).
    /// A relative path is read from the working directory.
    pub path: PathBuf,
    /// `image_folder`, `cifar10`, `cifar100` or `text`; absent: told from the path (a file is a
    /// text table, a folder with `data_batch_1.bin` CIFAR-10, one with `train.bin` CIFAR-100,
    /// any other folder an image tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<DiskFormat>,
    /// Text tables: the column (or JSON field) of the text.
    #[serde(default = "default_text_column")]
    pub text: String,
    /// Text tables: the column of the label, an integer or a class name.
    #[serde(default = "default_label_column")]
    pub label: String,
    /// Text tables: a second file, in the same columns, holding the test set (else the test set
    /// is `[data] test_fraction` of `path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<PathBuf>,
    /// The set's name in results and in `ood_groups` (default: the file or folder name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// What a [`DiskSet`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiskFormat {
    /// A class-per-folder image tree.
    ImageFolder,
    /// CIFAR-10's binary batches.
    Cifar10,
    /// CIFAR-100's binary files (fine labels).
    Cifar100,
    /// A CSV, TSV or JSON-lines text table.
    Text,
}

fn default_text_column() -> String {
    "text".into()
}

fn default_label_column() -> String {
    "label".into()
}

impl DiskSet {
    /// The format, as given or told from the path.
    pub fn format(&self) -> DiskFormat {
        if let Some(format) = self.format {
            return format;
        }
        if !self.path.is_dir() {
            DiskFormat::Text
        } else if self.path.join("data_batch_1.bin").is_file() {
            DiskFormat::Cifar10
        } else if self.path.join("train.bin").is_file() {
            DiskFormat::Cifar100
        } else {
            DiskFormat::ImageFolder
        }
    }

    /// The name given, else the file or folder name without its extensions.
    pub fn name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let file = (self.path.file_name()).map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        file.split('.').next().unwrap_or(&file).to_string()
    }
}

impl DataSource {
    /// The set's name in results and in `ood_groups`.
    pub fn name(&self) -> String {
        match self {
            Self::Catalog(name) => name.clone(),
            Self::Disk(set) => set.name(),
        }
    }

    /// Images or texts; an error for a catalog name it does not know (listing the known ones).
    pub fn modality(&self) -> Result<Modality, String> {
        match self {
            Self::Catalog(name) => modality_of(name),
            Self::Disk(set) if set.format() == DiskFormat::Text => Ok(Modality::Text),
            Self::Disk(_) => Ok(Modality::Image),
        }
    }
}

/// A string is a catalog name, a table a [`DiskSet`] (its own errors kept: an unknown key is
/// named with the valid ones).
impl<'de> Deserialize<'de> for DataSource {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match toml::Value::deserialize(deserializer)? {
            toml::Value::String(name) => Ok(Self::Catalog(name)),
            table @ toml::Value::Table(_) => (DiskSet::deserialize(table))
                .map(Self::Disk)
                .map_err(|e| D::Error::custom(e.message())),
            other => Err(D::Error::custom(format!(
                "expected a catalog name or a table {{ path = \"...\" }}, found a {}",
                other.type_str()
            ))),
        }
    }
}

/// The modality of a catalog dataset, or the list of known names.
fn modality_of(name: &str) -> Result<Modality, String> {
    (DATASETS.get(name).map(|d| d.item.modality())).map_err(|unknown| unknown.to_string())
}
