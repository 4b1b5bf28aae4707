//! How a checkpoint's images are preprocessed ([`checkpoint_preprocess`]): what its
//! `preprocessor_config.json` says, or, for a CLIP folder without one, what `transformers`'
//! CLIP image processor does by default.

use std::path::Path;

use backbone::Architecture;
use data::{Interpolation, Preprocess, Resize};

use crate::clip::HfClipConfig;
use crate::config_json::locate;
use crate::error::ImportError;
use crate::local::checkpoint_architecture;

/// The file beside a checkpoint's `config.json` that says how its images were preprocessed.
pub const PREPROCESSOR_CONFIG: &str = "preprocessor_config.json";

/// OpenAI CLIP's mean / std, which `transformers`' CLIP processors carry.
const CLIP_MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
const CLIP_STD: [f32; 3] = [0.268_629_54, 0.261_302_6, 0.275_777_1];

/// How the images of the checkpoint at `path` (a folder, or a `.safetensors` file with
/// `config.json` beside it) are preprocessed: its `preprocessor_config.json`; else, for CLIP,
/// `CLIPImageProcessor`'s defaults at the vision tower's side (the shorter side resized to it
/// bicubically, centre-cropped square, bytes / 255, OpenAI's mean / std); else `None` (the
/// checkpoint does not say).
pub fn checkpoint_preprocess(path: &Path) -> Result<Option<Preprocess>, ImportError> {
    let (config, _) = locate(path)?;
    let folder = config.parent().unwrap_or(Path::new("."));
    let processor = folder.join(PREPROCESSOR_CONFIG);
    if processor.is_file() {
        let preprocess = Preprocess::from_hf_config(&processor);
        return (preprocess.map(Some)).map_err(|error| ImportError::Preprocessor {
            path: folder.to_path_buf(),
            error,
        });
    }
    if checkpoint_architecture(path)? != Architecture::ClipZeroShot {
        return Ok(None);
    }
    let side = HfClipConfig::read(&config)?.vision_config.image_size;
    Ok(Some(Preprocess {
        resize: Some(Resize::ShortestEdge(side)),
        crop: Some([side, side]),
        mean: CLIP_MEAN,
        std: CLIP_STD,
        interpolation: Interpolation::Bicubic,
        rescale: 1.0 / 255.0,
    }))
}
