//! How images are sized and normalised: the one place a run decides it. With `[backbone]
//! checkpoint` a folder holding a `preprocessor_config.json` (or a CLIP checkpoint, whose
//! processor's defaults stand in for a missing one), its resize, centre crop, filter and mean /
//! std; otherwise image folders at `[data] image_size` and the mean / std fitted on the
//! training split. The keys of `[data.preprocess]` replace either, field by field.

use std::path::Path;

use data::{Interpolation, Normalization, Preprocess, Resize};
use importers::PREPROCESSOR_CONFIG;

use crate::config::ExperimentConfig;
use crate::error::{ExperimentError, Result};

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
            Some(path) => read_checkpoint(path)?,
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

/// The preprocessing the checkpoint at `path` declares ([`importers::checkpoint_preprocess`]:
/// its `preprocessor_config.json`, else CLIP's defaults for CLIP). Its bytes must be scaled by
/// 1/255: the run's mean / std apply to [0, 1] pixels.
fn read_checkpoint(path: &Path) -> Result<Option<Preprocess>> {
    let Some(preprocess) = importers::checkpoint_preprocess(path)? else {
        return Ok(None);
    };
    if (preprocess.rescale - 1.0 / 255.0).abs() > 1e-12 {
        return Err(ExperimentError::invalid(format!(
            "{}: {PREPROCESSOR_CONFIG}: rescale_factor {} (or do_rescale false); expected \
             1/255, the scale the run's mean and std apply to",
            path.display(),
            preprocess.rescale
        )));
    }
    Ok(Some(preprocess))
}
