//! Seeded image corruptions for covariate-shift tests, after CIFAR-10-C (Hendrycks & Dietterich
//! 2019): five severities per corruption, each with its own parameter. Parameters are the
//! CIFAR-C ones, except `pixelate`, which here averages over an integer partition of the image
//! (so a block-constant image is left unchanged) with resolution factors 0.9..0.5.
//!
//! | corruption       | parameter per severity 1..=5              |
//! |------------------|-------------------------------------------|
//! | `gaussian_noise` | noise std 0.04, 0.06, 0.08, 0.09, 0.10    |
//! | `shot_noise`     | photons per unit 500, 250, 100, 75, 50    |
//! | `gaussian_blur`  | kernel std (pixels) 0.4, 0.6, 0.7, 0.8, 1 |
//! | `contrast`       | contrast factor 0.75, 0.5, 0.4, 0.3, 0.15 |
//! | `brightness`     | HSV value shift 0.05, 0.1, 0.15, 0.2, 0.3 |
//! | `pixelate`       | resolution factor 0.9, 0.8, 0.7, 0.6, 0.5 |

use std::fmt;
use std::str::FromStr;

use rand::SeedableRng;
use rand::rngs::StdRng;
use registry::{Entry, Registry};
use serde::{Deserialize, Serialize};

use crate::dataset::{ImageDataset, Pixels};
use crate::error::{DataError, Result};
use crate::noise::{poisson, standard_normal};

/// A corruption type; names are snake_case (`gaussian_noise`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Corruption {
    /// Additive Gaussian noise.
    GaussianNoise,
    /// Poisson (photon) noise.
    ShotNoise,
    /// Gaussian blur with edge replication.
    GaussianBlur,
    /// Pulls every channel towards its image mean.
    Contrast,
    /// Raises the HSV value (plain addition for one channel).
    Brightness,
    /// Replaces blocks by their mean.
    Pixelate,
}

impl Corruption {
    /// Every corruption by name (`[[data.shift]] corruption = "<name>"`).
    pub const NAMES: Registry<Self> = Registry::new(
        "corruption",
        &[
            Entry {
                name: "gaussian_noise",
                about: "additive Gaussian noise",
                item: Self::GaussianNoise,
            },
            Entry {
                name: "shot_noise",
                about: "Poisson (photon) noise",
                item: Self::ShotNoise,
            },
            Entry {
                name: "gaussian_blur",
                about: "Gaussian blur with edge replication",
                item: Self::GaussianBlur,
            },
            Entry {
                name: "contrast",
                about: "every channel pulled towards its image mean",
                item: Self::Contrast,
            },
            Entry {
                name: "brightness",
                about: "the HSV value raised (plain addition for one channel)",
                item: Self::Brightness,
            },
            Entry {
                name: "pixelate",
                about: "blocks replaced by their mean",
                item: Self::Pixelate,
            },
        ],
    );

    /// Every corruption, in table order.
    pub const ALL: [Corruption; 6] = Self::NAMES.values();

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        Self::NAMES.entry_of(self).name
    }

    /// The parameter for severities 1..=5 (see the module table).
    fn table(self) -> [f64; 5] {
        match self {
            Corruption::GaussianNoise => [0.04, 0.06, 0.08, 0.09, 0.10],
            Corruption::ShotNoise => [500.0, 250.0, 100.0, 75.0, 50.0],
            Corruption::GaussianBlur => [0.4, 0.6, 0.7, 0.8, 1.0],
            Corruption::Contrast => [0.75, 0.5, 0.4, 0.3, 0.15],
            Corruption::Brightness => [0.05, 0.1, 0.15, 0.2, 0.3],
            Corruption::Pixelate => [0.9, 0.8, 0.7, 0.6, 0.5],
        }
    }
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Corruption {
    type Err = DataError;

    fn from_str(s: &str) -> Result<Self> {
        Ok(Self::NAMES.get(s)?.item)
    }
}

/// Corrupts every image of `data` at `severity` (1..=5), drawing noise from `seed`. The result
/// has float pixels clipped to [0, 1] and is named `<name>-<corruption>-<severity>`.
pub fn corrupt(
    data: &ImageDataset,
    corruption: Corruption,
    severity: u8,
    seed: u64,
) -> Result<ImageDataset> {
    if !(1..=5).contains(&severity) {
        return Err(DataError::invalid(format!(
            "severity {severity} is outside 1..=5"
        )));
    }
    if data.image_size() == 0 {
        return Err(DataError::invalid(format!(
            "dataset {} has empty images (dims {:?})",
            data.name, data.dims
        )));
    }
    let param = corruption.table()[usize::from(severity - 1)];
    let dims = data.dims;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pixels = Vec::with_capacity(data.len() * data.image_size());
    for i in 0..data.len() {
        let mut image = data.image_f32(i);
        match corruption {
            Corruption::GaussianNoise => {
                for x in &mut image {
                    *x += (param * standard_normal(&mut rng)) as f32;
                }
            }
            Corruption::ShotNoise => {
                for x in &mut image {
                    let photons = (f64::from(*x) * param).max(0.0);
                    *x = (poisson(&mut rng, photons) as f64 / param) as f32;
                }
            }
            Corruption::GaussianBlur => gaussian_blur(&mut image, dims, param),
            Corruption::Contrast => contrast(&mut image, dims, param as f32),
            Corruption::Brightness => brightness(&mut image, dims, param as f32),
            Corruption::Pixelate => pixelate(&mut image, dims, param),
        }
        pixels.extend(image.into_iter().map(|x| x.clamp(0.0, 1.0)));
    }
    Ok(ImageDataset {
        name: format!("{}-{corruption}-{severity}", data.name),
        pixels: Pixels::F32(pixels),
        ..data.clone_without_pixels()
    })
}

/// Separable Gaussian blur, kernel truncated at 4 std, edges replicated (so constants stay).
fn gaussian_blur(image: &mut [f32], [_, h, w]: [usize; 3], sigma: f64) {
    let radius = (4.0 * sigma).ceil() as usize;
    let weights: Vec<f64> = (0..=2 * radius)
        .map(|k| {
            let d = k as f64 - radius as f64;
            (-d * d / (2.0 * sigma * sigma)).exp()
        })
        .collect();
    let total: f64 = weights.iter().sum();
    let kernel: Vec<f64> = weights.iter().map(|k| k / total).collect();
    for plane in image.chunks_exact_mut(h * w) {
        for row in plane.chunks_exact_mut(w) {
            let blurred = blur_line(&kernel, row);
            row.copy_from_slice(&blurred);
        }
        for x in 0..w {
            let column: Vec<f32> = (0..h).map(|y| plane[y * w + x]).collect();
            for (y, v) in blur_line(&kernel, &column).into_iter().enumerate() {
                plane[y * w + x] = v;
            }
        }
    }
}

/// Convolves `line` with the odd-length `kernel`, replicating the end values.
fn blur_line(kernel: &[f64], line: &[f32]) -> Vec<f32> {
    let radius = kernel.len() / 2;
    let last = line.len() - 1;
    (0..line.len())
        .map(|i| {
            let s: f64 = kernel
                .iter()
                .enumerate()
                .map(|(k, &wt)| wt * f64::from(line[(i + k).saturating_sub(radius).min(last)]))
                .sum();
            s as f32
        })
        .collect()
}

/// `(x - mean) * factor + mean` per channel, the mean taken over the image.
fn contrast(image: &mut [f32], [_, h, w]: [usize; 3], factor: f32) {
    for plane in image.chunks_exact_mut(h * w) {
        let mean = plane.iter().map(|&x| f64::from(x)).sum::<f64>() as f32 / (h * w) as f32;
        for x in plane {
            *x = (*x - mean) * factor + mean;
        }
    }
}

/// Adds `delta` to the HSV value (max over channels), clipped at 1, keeping hue and saturation:
/// every channel scales by new/old value (a black pixel becomes grey `delta`).
fn brightness(image: &mut [f32], [c, h, w]: [usize; 3], delta: f32) {
    let hw = h * w;
    for p in 0..hw {
        let value = (0..c).map(|ch| image[ch * hw + p]).fold(0.0f32, f32::max);
        let new_value = (value + delta).min(1.0);
        for ch in 0..c {
            let x = &mut image[ch * hw + p];
            *x = if value > 0.0 {
                *x * new_value / value
            } else {
                new_value
            };
        }
    }
}

/// Cuts rows and columns into `round(size * factor)` contiguous groups (boundaries at
/// `floor(g * size / groups)`) and replaces every block by its mean.
fn pixelate(image: &mut [f32], [_, h, w]: [usize; 3], factor: f64) {
    let bounds = |size: usize| -> Vec<usize> {
        let groups = ((size as f64 * factor).round() as usize).clamp(1, size);
        (0..=groups).map(|g| g * size / groups).collect()
    };
    let (rows, cols) = (bounds(h), bounds(w));
    for plane in image.chunks_exact_mut(h * w) {
        for r in rows.windows(2) {
            for cb in cols.windows(2) {
                let block = || (r[0]..r[1]).flat_map(|y| (cb[0]..cb[1]).map(move |x| y * w + x));
                let sum: f64 = block().map(|i| f64::from(plane[i])).sum();
                let mean = (sum / ((r[1] - r[0]) * (cb[1] - cb[0])) as f64) as f32;
                for i in block() {
                    plane[i] = mean;
                }
            }
        }
    }
}
