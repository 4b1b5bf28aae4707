//! Per-channel standardisation `(x - mean[c]) / std[c]` of float images.

use serde::{Deserialize, Serialize};

use crate::dataset::ImageDataset;
use crate::error::{DataError, Result};

/// Per-channel mean and standard deviation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Normalization {
    /// Mean per channel.
    pub mean: Vec<f32>,
    /// Standard deviation per channel (positive).
    pub std: Vec<f32>,
}

impl Normalization {
    /// From given statistics; errors unless both have the same non-zero length and every std
    /// is positive and finite.
    pub fn new(mean: Vec<f32>, std: Vec<f32>) -> Result<Self> {
        if mean.is_empty() || mean.len() != std.len() {
            return Err(DataError::invalid(format!(
                "normalization needs one mean and one std per channel, got {} means and {} stds",
                mean.len(),
                std.len()
            )));
        }
        if let Some(s) = std.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
            return Err(DataError::invalid(format!(
                "normalization std {s} is not positive and finite"
            )));
        }
        Ok(Self { mean, std })
    }

    /// Fits the statistics of `data` on its [0, 1]-scaled pixels (population std, accumulated in
    /// f64). A constant channel gets std 1, so that it is only centred. Errors on a dataset with
    /// no images or empty images.
    pub fn fit(data: &ImageDataset) -> Result<Self> {
        let [c, h, w] = data.dims;
        let hw = h * w;
        if data.is_empty() || c * hw == 0 {
            return Err(DataError::invalid(format!(
                "cannot fit a normalization on dataset {} ({} images of dims {:?})",
                data.name,
                data.len(),
                data.dims
            )));
        }
        let mut sum = vec![0.0f64; c];
        let mut sum_sq = vec![0.0f64; c];
        for i in 0..data.len() {
            let image = data.image_f32(i);
            for (ch, plane) in image.chunks_exact(hw).enumerate() {
                for &x in plane {
                    sum[ch] += f64::from(x);
                    sum_sq[ch] += f64::from(x) * f64::from(x);
                }
            }
        }
        let count = (data.len() * hw) as f64;
        let mean: Vec<f64> = sum.iter().map(|s| s / count).collect();
        let std = sum_sq
            .iter()
            .zip(&mean)
            .map(|(sq, m)| {
                let var = (sq / count - m * m).max(0.0);
                if var > 0.0 { var.sqrt() as f32 } else { 1.0 }
            })
            .collect();
        Ok(Self {
            mean: mean.into_iter().map(|m| m as f32).collect(),
            std,
        })
    }

    /// Standardises `data`, a flat `[B, channels, hw]` buffer, in place.
    pub fn apply(&self, data: &mut [f32], channels: usize, hw: usize) -> Result<()> {
        if channels != self.mean.len() {
            return Err(DataError::invalid(format!(
                "normalization has {} channels, data has {channels}",
                self.mean.len()
            )));
        }
        if hw == 0 || !data.len().is_multiple_of(channels * hw) {
            return Err(DataError::invalid(format!(
                "buffer of {} values is not a whole number of {channels}x{hw} images",
                data.len()
            )));
        }
        for (k, plane) in data.chunks_exact_mut(hw).enumerate() {
            let ch = k % channels;
            let (m, s) = (self.mean[ch], self.std[ch]);
            for x in plane {
                *x = (*x - m) / s;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Pixels;

    #[test]
    fn fit_matches_hand_computed_statistics_and_apply_standardises() {
        // Two 2-channel 1x2 images. Channel 0 bytes: 0, 255, 255, 255 -> mean 0.75, std sqrt(3)/4.
        // Channel 1 bytes: all 51 -> mean 0.2, constant so std 1.
        let d = ImageDataset {
            name: "n".into(),
            pixels: Pixels::U8(vec![0, 255, 51, 51, 255, 255, 51, 51]),
            labels: vec![0, 0],
            dims: [2, 1, 2],
            num_classes: 1,
        };
        let n = Normalization::fit(&d).unwrap();
        assert!(Normalization::fit(&d.subset(&[])).is_err());
        assert!((n.mean[0] - 0.75).abs() < 1e-6 && (n.mean[1] - 0.2).abs() < 1e-6);
        assert!((n.std[0] - 3f32.sqrt() / 4.0).abs() < 1e-6 && n.std[1] == 1.0);
        let mut batch = d.batch_f32(&[0, 1]);
        n.apply(&mut batch, 2, 2).unwrap();
        // Channel 0 standardised has mean 0 and variance 1.
        let ch0 = [batch[0], batch[1], batch[4], batch[5]];
        let mean: f32 = ch0.iter().sum::<f32>() / 4.0;
        let var: f32 = ch0.iter().map(|x| (x - mean).powi(2)).sum::<f32>() / 4.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5);
        assert!(batch[2].abs() < 1e-6 && batch[7].abs() < 1e-6);
    }

    #[test]
    fn given_statistics_are_validated_and_applied_per_channel() {
        let n = Normalization::new(vec![0.5, 0.0], vec![0.25, 2.0]).unwrap();
        let mut x = vec![1.0, 0.5, 4.0, -2.0];
        n.apply(&mut x, 2, 2).unwrap();
        assert_eq!(x, vec![2.0, 0.0, 2.0, -1.0]);
        assert!(Normalization::new(vec![0.0], vec![0.0]).is_err());
        assert!(Normalization::new(vec![0.0, 1.0], vec![1.0]).is_err());
        assert!(n.apply(&mut [0.0; 4], 1, 4).is_err());
        assert!(n.apply(&mut [0.0; 5], 2, 2).is_err());
    }
}
