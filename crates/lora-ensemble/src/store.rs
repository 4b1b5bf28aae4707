//! Adapters saved and loaded apart from the backbone: a file holds only what differs between
//! members, so N members' files sit beside one backbone checkpoint instead of N models.

use std::path::Path;

use backbone::Classifier;
use burn::module::Module;
use burn::store::ModuleRecord;

use crate::config::LoraConfig;
use crate::error::LoraError;
use crate::model::LoraEnsemble;

impl LoraEnsemble {
    /// Writes the adapters and member classifiers (not the backbone) to `path` as a Burn record,
    /// atomically: a reader sees the old file or the complete new one.
    pub fn save_adapters(&self, path: &Path) -> Result<(), LoraError> {
        let bytes = self
            .adapters
            .clone()
            .into_record()
            .into_bytes()
            .map_err(|e| LoraError::file(path, "cannot be encoded", e))?;
        // atomic_write's error names the file.
        Ok(data::atomic_write(path, &bytes)?)
    }

    /// Rebuilds the ensemble `config` describes around `backbone` and loads its adapters and
    /// member classifiers from `path`. A file made for another shape (members, rank, width,
    /// depth or classes) is an error naming the file and the mismatched tensors.
    pub fn load_adapters(
        backbone: Classifier,
        config: &LoraConfig,
        path: &Path,
    ) -> Result<Self, LoraError> {
        let record =
            ModuleRecord::load(path).map_err(|e| LoraError::file(path, "cannot be read", e))?;
        // The seed only shapes values the file overwrites.
        let mut model = config.init(backbone, 0)?;
        model.adapters = model
            .adapters
            .try_load_record(record)
            .map_err(|e| LoraError::file(path, "does not fit this ensemble", e))?;
        Ok(model)
    }
}
