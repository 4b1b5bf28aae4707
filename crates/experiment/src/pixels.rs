//! How images are sized and normalised. With `[backbone] checkpoint` a folder holding a
//! `preprocessor_config.json`, its resize, centre crop, filter and mean / std; otherwise image
//! folders at `[data] image_size` and the mean / std fitted on the training split. The keys of
//! `[data.preprocess]` replace either, field by field.

use std::path::Path;

use data::{Interpolation, Normalization, Preprocess, Resize};

use crate::config::ExperimentConfig;
use crate::error::{ExperimentError, Result};

/// The file of a checkpoint folder that says how its images were preprocessed.
pub const PREPROCESSOR_CONFIG: &str = "preprocessor_config.json";

/// How a run's images are sized and normalised.
#[derive(Debug, Clone, PartialEq)]
pub struct PixelSpec {
    /// The resize and crop image folders are read with (its mean / std unused); `None` when
    /// nothing gives a side.
    pub geometry: Option<Preprocess>,
    /// The mean / std every batch is normalised with; `None`: fitted on the training split.
    pub normalization: Option<Normalization>,
}

impl PixelSpec {
    /// From the checkpoint's preprocessor config (if any), `[data] image_size` and
    /// `[data.preprocess]`.
    pub fn new(config: &ExperimentConfig) -> Result<Self> {
        let checkpoint = match &config.backbone.checkpoint {
            Some(dir) => read_checkpoint(dir)?,
            None => None,
        };
        Ok(Self::from_parts(config, checkpoint.as_ref()))
    }

    /// As [`PixelSpec::new`] with the checkpoint's preprocessing already read.
    fn from_parts(config: &ExperimentConfig, checkpoint: Option<&Preprocess>) -> Self {
        let keys = config.data.preprocess.clone().unwrap_or_default();
        let side = config.data.image_size;
        // The checkpoint's sizes stand unless `image_size` asks for another side (the tests'
        // small stand-ins of the papers' models).
        let sized = checkpoint.filter(|c| side.is_none_or(|s| c.output_size() == Some([s, s])));
        let (resize, crop) = match sized {
            Some(c) => (c.resize, c.crop),
            None => (side.map(Resize::ShortestEdge), side.map(|s| [s, s])),
        };
        let geometry = Preprocess {
            resize: keys.resize.map(Resize::ShortestEdge).or(resize),
            crop: keys.crop.map(|c| [c, c]).or(crop),
            mean: [0.0; 3],
            std: [1.0; 3],
            interpolation: checkpoint.map_or(Interpolation::Bilinear, |c| c.interpolation),
            rescale: 1.0 / 255.0,
        };
        let normalization = match (keys.mean, keys.std) {
            (Some(mean), Some(std)) => Some(Normalization {
                mean: mean.to_vec(),
                std: std.to_vec(),
            }),
            _ => checkpoint.map(Preprocess::normalization),
        };
        Self {
            geometry: geometry.output_size().map(|_| geometry),
            normalization,
        }
    }
}

/// The preprocessing of the checkpoint folder `dir`, if it has a preprocessor config. Its
/// bytes must be scaled by 1/255: the run's mean / std apply to [0, 1] pixels.
fn read_checkpoint(dir: &Path) -> Result<Option<Preprocess>> {
    let path = dir.join(PREPROCESSOR_CONFIG);
    if !dir.is_dir() || !path.is_file() {
        return Ok(None);
    }
    let preprocess = Preprocess::from_hf_config(&path)?;
    if (preprocess.rescale - 1.0 / 255.0).abs() > 1e-12 {
        return Err(ExperimentError::invalid(format!(
            "{}: rescale_factor {} (or do_rescale false); expected 1/255, the scale the run's \
             mean and std apply to",
            path.display(),
            preprocess.rescale
        )));
    }
    Ok(Some(preprocess))
}
