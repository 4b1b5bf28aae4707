//! Image preprocessing as a checkpoint's `transformers` image processor does it: convert to RGB,
//! resize (ViT: straight to `height`x`width`; CLIP: the shorter side, keeping the aspect
//! ratio), centre crop, scale bytes to [0, 1], normalise by mean / std. [`Preprocess`] reads a
//! Hugging Face `preprocessor_config.json` and takes overrides field by field.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{DataError, Result};
use crate::normalize::Normalization;
use crate::resample::{Bytes, Interpolation, center_crop, resample, shortest_edge_size};

/// How an image is resized before cropping.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resize {
    /// To exactly `height`x`width`, aspect ratio not kept (ViT; DeiT before its crop).
    Exact { height: usize, width: usize },
    /// The shorter side to this many pixels, the longer one scaled alike (CLIP, DeiT).
    ShortestEdge(usize),
}

/// The preprocessing of one image into `[3, H, W]` floats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preprocess {
    /// The resize; `None` keeps each image's own size.
    pub resize: Option<Resize>,
    /// The centre crop `[height, width]` after the resize; `None` for no crop.
    pub crop: Option<[usize; 2]>,
    /// Per-channel (R, G, B) mean subtracted after scaling.
    pub mean: [f32; 3],
    /// Per-channel standard deviation divided by after subtracting the mean.
    pub std: [f32; 3],
    /// The resampling filter of the resize.
    pub interpolation: Interpolation,
    /// The factor bytes are multiplied by (`transformers`' `rescale_factor`, 1/255).
    #[serde(default = "default_rescale")]
    pub rescale: f64,
}

fn default_rescale() -> f64 {
    1.0 / 255.0
}

/// Field-by-field overrides of a [`Preprocess`] (e.g. an experiment file's table); a field left
/// `None` keeps the value read from the checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreprocessOverrides {
    /// Replaces [`Preprocess::resize`].
    pub resize: Option<Resize>,
    /// Replaces [`Preprocess::crop`].
    pub crop: Option<[usize; 2]>,
    /// Replaces [`Preprocess::mean`].
    pub mean: Option<[f32; 3]>,
    /// Replaces [`Preprocess::std`].
    pub std: Option<[f32; 3]>,
    /// Replaces [`Preprocess::interpolation`].
    pub interpolation: Option<Interpolation>,
    /// Replaces [`Preprocess::rescale`].
    pub rescale: Option<f64>,
}

impl Preprocess {
    /// Reads a Hugging Face `preprocessor_config.json`. `size` may be an integer, `{height,
    /// width}` or `{shortest_edge}`; `do_resize`, `do_center_crop`, `do_normalize` and
    /// `do_rescale` false turn their step off; `resample` must be 2 (bilinear) or 3 (bicubic).
    pub fn from_hf_config(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| DataError::caused(path, "cannot read the preprocessor config", e))?;
        let config: Value =
            serde_json::from_str(&text).map_err(|e| DataError::caused(path, "invalid JSON", e))?;
        Self::from_hf_value(&config).map_err(|e| DataError::file(path, e.message))
    }

    /// As [`Preprocess::from_hf_config`], from the parsed JSON.
    pub fn from_hf_value(config: &Value) -> Result<Self> {
        let flag = |name: &str| field(config, name).map_or(Ok(true), |v| as_bool(v, name));
        let resize = match (flag("do_resize")?, field(config, "size")) {
            (false, _) | (true, None) => None,
            (true, Some(size)) => Some(parse_size(size, "size", int_is_shortest_edge(config))?),
        };
        let crop = match (flag("do_center_crop")?, field(config, "crop_size")) {
            (true, Some(size)) => Some(match parse_size(size, "crop_size", false)? {
                Resize::Exact { height, width } => [height, width],
                Resize::ShortestEdge(_) => {
                    return Err(expected("crop_size", size, "an integer or {height, width}"));
                }
            }),
            _ => None,
        };
        let (mean, std) = if flag("do_normalize")? {
            (
                triple(config, "image_mean", [0.5; 3])?,
                triple(config, "image_std", [0.5; 3])?,
            )
        } else {
            ([0.0; 3], [1.0; 3])
        };
        let rescale = match (flag("do_rescale")?, field(config, "rescale_factor")) {
            (false, _) => 1.0,
            (true, None) => default_rescale(),
            (true, Some(v)) => v
                .as_f64()
                .ok_or_else(|| expected("rescale_factor", v, "a number"))?,
        };
        let interpolation = match field(config, "resample") {
            None => Interpolation::Bilinear,
            Some(v) => v
                .as_u64()
                .and_then(Interpolation::from_pil)
                .ok_or_else(|| expected("resample", v, "2 (bilinear) or 3 (bicubic)"))?,
        };
        let pre = Self {
            resize,
            crop,
            mean,
            std,
            interpolation,
            rescale,
        };
        pre.validate()?;
        Ok(pre)
    }

    /// This preprocessing with the fields `overrides` sets replaced.
    pub fn with(&self, overrides: &PreprocessOverrides) -> Result<Self> {
        let o = overrides.clone();
        let pre = Self {
            resize: o.resize.or(self.resize),
            crop: o.crop.or(self.crop),
            mean: o.mean.unwrap_or(self.mean),
            std: o.std.unwrap_or(self.std),
            interpolation: o.interpolation.unwrap_or(self.interpolation),
            rescale: o.rescale.unwrap_or(self.rescale),
        };
        pre.validate()?;
        Ok(pre)
    }

    /// Errors on a zero size, a std that is not positive and finite, or a non-finite scale.
    pub fn validate(&self) -> Result<()> {
        let sizes = match self.resize {
            Some(Resize::Exact { height, width }) => vec![height, width],
            Some(Resize::ShortestEdge(edge)) => vec![edge],
            None => vec![],
        };
        if sizes
            .into_iter()
            .chain(self.crop.into_iter().flatten())
            .any(|s| s == 0)
        {
            return Err(DataError::invalid(format!(
                "preprocess sizes must be positive: resize {:?}, crop {:?}",
                self.resize, self.crop
            )));
        }
        if !self.rescale.is_finite() {
            return Err(DataError::invalid(format!(
                "preprocess rescale {} is not finite",
                self.rescale
            )));
        }
        Normalization::new(self.mean.to_vec(), self.std.to_vec()).map(|_| ())
    }

    /// The mean / std step alone, for code that scales bytes and normalises per batch
    /// ([`ImageDataset::batch_f32`](crate::ImageDataset::batch_f32) then `apply`).
    pub fn normalization(&self) -> Normalization {
        Normalization {
            mean: self.mean.to_vec(),
            std: self.std.to_vec(),
        }
    }

    /// The output `[H, W]` when every image gets the same one (a crop, or an exact resize).
    pub fn output_size(&self) -> Option<[usize; 2]> {
        match (self.crop, self.resize) {
            (Some(crop), _) => Some(crop),
            (None, Some(Resize::Exact { height, width })) => Some([height, width]),
            _ => None,
        }
    }

    /// Resize then crop an RGB image, still in bytes (`[H, W, 3]` interleaved).
    pub(crate) fn geometry(&self, image: Bytes) -> Bytes {
        let resized = match self.resize {
            None => image,
            Some(Resize::Exact { height, width }) => {
                resample(&image, height, width, self.interpolation)
            }
            Some(Resize::ShortestEdge(edge)) => {
                let (height, width) = shortest_edge_size(image.height, image.width, edge);
                resample(&image, height, width, self.interpolation)
            }
        };
        match self.crop {
            Some([height, width]) => center_crop(&resized, height, width),
            None => resized,
        }
    }

    /// Appends a geometry-transformed image as `[3, H, W]` floats: scaled, then normalised
    /// (in f32, as `transformers` does).
    pub(crate) fn extend_floats(&self, image: &Bytes, out: &mut Vec<f32>) {
        let c = image.channels;
        for ch in 0..c {
            let (mean, std) = (self.mean[ch], self.std[ch]);
            let scale = self.rescale;
            out.extend(
                (image.data[ch..].iter().step_by(c))
                    .map(|&b| ((f64::from(b) * scale) as f32 - mean) / std),
            );
        }
    }
}

fn field<'a>(config: &'a Value, name: &str) -> Option<&'a Value> {
    config.get(name).filter(|v| !v.is_null())
}

fn expected(name: &str, found: &Value, what: &str) -> DataError {
    DataError::invalid(format!("field {name}: expected {what}, found {found}"))
}

fn as_bool(v: &Value, name: &str) -> Result<bool> {
    v.as_bool()
        .ok_or_else(|| expected(name, v, "true or false"))
}

fn as_size(v: &Value, name: &str) -> Result<usize> {
    v.as_u64()
        .filter(|&n| n > 0)
        .map(|n| n as usize)
        .ok_or_else(|| expected(name, v, "a positive integer"))
}

/// Whether an integer `size` means the shorter side: CLIP's processor reads it so
/// (`get_size_dict(size, default_to_square=False)`), ViT's and DeiT's as a square.
fn int_is_shortest_edge(config: &Value) -> bool {
    ["image_processor_type", "feature_extractor_type"]
        .iter()
        .filter_map(|key| config.get(*key).and_then(Value::as_str))
        .any(|kind| kind.starts_with("CLIP"))
}

/// `size` or `crop_size`: an integer (a square, or the shorter side where `int_is_edge`),
/// `{height, width}` or `{shortest_edge}`.
fn parse_size(v: &Value, name: &str, int_is_edge: bool) -> Result<Resize> {
    if v.is_number() {
        let n = as_size(v, name)?;
        return Ok(if int_is_edge {
            Resize::ShortestEdge(n)
        } else {
            Resize::Exact {
                height: n,
                width: n,
            }
        });
    }
    match (v.get("height"), v.get("width"), v.get("shortest_edge")) {
        (Some(h), Some(w), None) => Ok(Resize::Exact {
            height: as_size(h, &format!("{name}.height"))?,
            width: as_size(w, &format!("{name}.width"))?,
        }),
        (None, None, Some(edge)) => Ok(Resize::ShortestEdge(as_size(
            edge,
            &format!("{name}.shortest_edge"),
        )?)),
        _ => Err(expected(
            name,
            v,
            "an integer, {\"height\", \"width\"} or {\"shortest_edge\"}",
        )),
    }
}

fn triple(config: &Value, name: &str, default: [f32; 3]) -> Result<[f32; 3]> {
    let Some(v) = field(config, name) else {
        return Ok(default);
    };
    let values: Option<Vec<f32>> = v
        .as_array()
        .map(|a| a.iter().map(|x| x.as_f64().map(|x| x as f32)).collect())
        .unwrap_or_else(|| v.as_f64().map(|x| vec![x as f32; 3]));
    match values.as_deref() {
        Some(&[r, g, b]) => Ok([r, g, b]),
        _ => Err(expected(name, v, "three numbers (R, G, B) or one number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vit_deit_and_clip_configs_read_as_their_processors_do() {
        // google/vit-base-patch16-224: a straight resize, no crop, mean / std 0.5.
        let vit = json!({"do_normalize": true, "do_resize": true, "image_mean": [0.5, 0.5, 0.5],
            "image_std": [0.5, 0.5, 0.5], "resample": 2, "size": 224,
            "image_processor_type": "ViTImageProcessor"});
        let vit = Preprocess::from_hf_value(&vit).unwrap();
        assert_eq!(
            vit.resize,
            Some(Resize::Exact {
                height: 224,
                width: 224
            })
        );
        assert_eq!(
            (vit.crop, vit.interpolation),
            (None, Interpolation::Bilinear)
        );
        assert_eq!(
            (vit.mean, vit.std, vit.rescale),
            ([0.5; 3], [0.5; 3], 1.0 / 255.0)
        );
        assert_eq!(vit.output_size(), Some([224, 224]));
        // facebook/deit-base-distilled-patch16-224: 256x256 bicubic, crop 224.
        let deit = json!({"crop_size": {"height": 224, "width": 224}, "do_center_crop": true,
            "resample": 3, "size": {"height": 256, "width": 256},
            "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]});
        let deit = Preprocess::from_hf_value(&deit).unwrap();
        assert_eq!(
            deit.resize,
            Some(Resize::Exact {
                height: 256,
                width: 256
            })
        );
        assert_eq!(
            (deit.crop, deit.interpolation),
            (Some([224, 224]), Interpolation::Bicubic)
        );
        assert_eq!(deit.std, [0.229, 0.224, 0.225]);
        // openai/clip-vit-base-patch32, old and new: an integer size is the shorter side.
        let old = json!({"crop_size": 224, "do_center_crop": true, "do_resize": true,
            "feature_extractor_type": "CLIPFeatureExtractor", "resample": 3, "size": 224,
            "image_mean": [0.48145466, 0.4578275, 0.40821073],
            "image_std": [0.26862954, 0.26130258, 0.27577711]});
        let new = json!({"crop_size": {"height": 224, "width": 224}, "do_center_crop": true,
            "image_processor_type": "CLIPImageProcessor", "resample": 3,
            "size": {"shortest_edge": 224}, "image_mean": [0.48145466, 0.4578275, 0.40821073],
            "image_std": [0.26862954, 0.26130258, 0.27577711], "rescale_factor": 0.00392156862745098});
        for clip in [old, new] {
            let clip = Preprocess::from_hf_value(&clip).unwrap();
            assert_eq!(clip.resize, Some(Resize::ShortestEdge(224)));
            assert_eq!(clip.crop, Some([224, 224]));
            assert_eq!(clip.mean, [0.48145466, 0.4578275, 0.40821073]);
        }
    }

    #[test]
    fn steps_turned_off_and_overrides_field_by_field() {
        let off = json!({"do_resize": false, "size": 224, "do_center_crop": false,
            "crop_size": 224, "do_normalize": false, "do_rescale": false});
        let off = Preprocess::from_hf_value(&off).unwrap();
        assert_eq!(
            (off.resize, off.crop, off.output_size()),
            (None, None, None)
        );
        assert_eq!((off.mean, off.std, off.rescale), ([0.0; 3], [1.0; 3], 1.0));
        let overrides: PreprocessOverrides =
            serde_json::from_value(json!({"crop": [32, 30], "interpolation": "bicubic"})).unwrap();
        let over = off.with(&overrides).unwrap();
        assert_eq!(
            (over.crop, over.interpolation),
            (Some([32, 30]), Interpolation::Bicubic)
        );
        assert_eq!((over.resize, over.mean), (None, [0.0; 3]));
        let bad = PreprocessOverrides {
            std: Some([1.0, 0.0, 1.0]),
            ..Default::default()
        };
        assert!(off.with(&bad).is_err());
        assert!(serde_json::from_value::<PreprocessOverrides>(json!({"size": 3})).is_err());
    }

    #[test]
    fn bad_fields_are_named() {
        for (config, needle) in [
            (
                json!({"resample": 1}),
                "field resample: expected 2 (bilinear) or 3 (bicubic), found 1",
            ),
            (
                json!({"size": {"width": 3}}),
                "field size: expected an integer",
            ),
            (
                json!({"size": 0}),
                "field size: expected a positive integer, found 0",
            ),
            (
                json!({"size": {"height": 2, "width": -1}}),
                "field size.width",
            ),
            (
                json!({"crop_size": {"shortest_edge": 3}}),
                "field crop_size",
            ),
            (
                json!({"image_std": [1, 2]}),
                "field image_std: expected three numbers",
            ),
            (
                json!({"do_resize": "yes"}),
                "field do_resize: expected true or false",
            ),
        ] {
            let err = Preprocess::from_hf_value(&config).unwrap_err().to_string();
            assert!(err.contains(needle), "{err}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preprocessor_config.json");
        std::fs::write(&path, "{\"resample\": 7}").unwrap();
        let err = Preprocess::from_hf_config(&path).unwrap_err();
        assert_eq!(err.path.as_deref(), Some(path.as_path()));
        std::fs::write(&path, "{").unwrap();
        let err = Preprocess::from_hf_config(&path).unwrap_err().to_string();
        assert!(err.contains("invalid JSON"), "{err}");
    }
}
