//! Resampling and centre cropping of 8-bit RGB images exactly as Pillow's `Image.resize` and
//! `transformers`' `center_crop` do them, since `transformers`' image processors resize through
//! Pillow: a separable convolution, horizontal pass first, whose filter widens by the scale
//! factor when shrinking (antialiasing), with Pillow's 22-bit fixed-point weights and a rounding
//! to bytes after each pass (Pillow's `libImaging/Resample.c`). Pillow 13 does some sizes
//! vertically first, which rounds differently by up to two byte steps; `transformers` 5's
//! default torchvision backend differs from Pillow by about one step on a few values too.

use serde::{Deserialize, Serialize};

/// The resampling filter, as `resample` in a Hugging Face preprocessor config names it
/// (Pillow's numbering: 2 bilinear, 3 bicubic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    /// Triangle filter of support 1 (`PIL.Image.BILINEAR`, 2).
    Bilinear,
    /// Cubic convolution with a = -0.5, support 2 (`PIL.Image.BICUBIC`, 3).
    Bicubic,
}

impl Interpolation {
    /// From Pillow's filter number; `None` for filters this crate does not implement.
    pub fn from_pil(code: u64) -> Option<Self> {
        match code {
            2 => Some(Self::Bilinear),
            3 => Some(Self::Bicubic),
            _ => None,
        }
    }

    fn support(self) -> f64 {
        match self {
            Self::Bilinear => 1.0,
            Self::Bicubic => 2.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        let x = x.abs();
        match self {
            Self::Bilinear if x < 1.0 => 1.0 - x,
            Self::Bicubic if x < 1.0 => (1.5 * x - 2.5) * x * x + 1.0,
            Self::Bicubic if x < 2.0 => (((x - 5.0) * x + 8.0) * x - 4.0) * -0.5,
            _ => 0.0,
        }
    }
}

/// An 8-bit image, interleaved `[H, W, C]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bytes {
    pub height: usize,
    pub width: usize,
    pub channels: usize,
    pub data: Vec<u8>,
}

/// Pillow's fixed-point precision for 8-bit weights (`32 - 8 - 2`).
const PRECISION_BITS: u32 = 22;

/// One output sample's taps: the first input index and the fixed-point weights.
struct Taps {
    first: usize,
    weights: Vec<i32>,
}

/// Pillow's `precompute_coeffs` followed by `normalize_coeffs_8bpc`.
fn taps(in_size: usize, out_size: usize, filter: Interpolation) -> Vec<Taps> {
    let scale = in_size as f64 / out_size as f64;
    let filter_scale = scale.max(1.0);
    let support = filter.support() * filter_scale;
    (0..out_size)
        .map(|o| {
            let center = (o as f64 + 0.5) * scale;
            // C's truncating casts, as Pillow rounds these bounds.
            let first = ((center - support + 0.5) as i64).max(0) as usize;
            let end = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
            let raw: Vec<f64> = (first..end)
                .map(|x| filter.weight((x as f64 - center + 0.5) / filter_scale))
                .collect();
            let total: f64 = raw.iter().sum();
            let one = f64::from(1u32 << PRECISION_BITS);
            let weights = raw
                .iter()
                .map(|&w| {
                    let w = if total != 0.0 { w / total } else { w };
                    // Round half away from zero, as Pillow's `(int)(±0.5 + w * one)`.
                    (w * one + 0.5f64.copysign(w)) as i32
                })
                .collect();
            Taps { first, weights }
        })
        .collect()
}

/// Pillow's `clip8`: the rounded fixed-point sum as a byte.
fn clip8(sum: i64) -> u8 {
    (sum >> PRECISION_BITS).clamp(0, 255) as u8
}

/// `image` resized to `height`x`width` as Pillow resizes it (no pass where a side is unchanged).
pub(crate) fn resample(image: &Bytes, height: usize, width: usize, filter: Interpolation) -> Bytes {
    let c = image.channels;
    let mut current = image.clone();
    if width != current.width {
        let taps = taps(current.width, width, filter);
        let mut data = Vec::with_capacity(current.height * width * c);
        for row in current.data.chunks_exact(current.width * c) {
            for t in &taps {
                for ch in 0..c {
                    let sum = t
                        .weights
                        .iter()
                        .enumerate()
                        .fold(1i64 << (PRECISION_BITS - 1), |acc, (k, &w)| {
                            acc + i64::from(row[(t.first + k) * c + ch]) * i64::from(w)
                        });
                    data.push(clip8(sum));
                }
            }
        }
        current = Bytes {
            width,
            data,
            ..current
        };
    }
    if height != current.height {
        let taps = taps(current.height, height, filter);
        let stride = current.width * c;
        let mut data = Vec::with_capacity(height * stride);
        for t in &taps {
            for i in 0..stride {
                let sum = t.weights.iter().enumerate().fold(
                    1i64 << (PRECISION_BITS - 1),
                    |acc, (k, &w)| {
                        acc + i64::from(current.data[(t.first + k) * stride + i]) * i64::from(w)
                    },
                );
                data.push(clip8(sum));
            }
        }
        current = Bytes {
            height,
            data,
            ..current
        };
    }
    current
}

/// The `height`x`width` centre of `image` as `transformers`' `center_crop` takes it: the top
/// row is `(H - height) // 2` (floor division), and a crop larger than the image is padded
/// with zeros.
pub(crate) fn center_crop(image: &Bytes, height: usize, width: usize) -> Bytes {
    let c = image.channels;
    let top = (image.height as i64 - height as i64).div_euclid(2);
    let left = (image.width as i64 - width as i64).div_euclid(2);
    let mut data = vec![0u8; height * width * c];
    for r in 0..height {
        let source_row = top + r as i64;
        if !(0..image.height as i64).contains(&source_row) {
            continue;
        }
        for col in 0..width {
            let source_col = left + col as i64;
            if (0..image.width as i64).contains(&source_col) {
                let from = (source_row as usize * image.width + source_col as usize) * c;
                let to = (r * width + col) * c;
                data[to..to + c].copy_from_slice(&image.data[from..from + c]);
            }
        }
    }
    Bytes {
        height,
        width,
        channels: c,
        data,
    }
}

/// The output size of resizing the shorter side of `height`x`width` to `edge`, keeping the
/// aspect ratio: `transformers`' `get_resize_output_image_size` with `default_to_square=False`
/// (the longer side truncated, not rounded).
pub(crate) fn shortest_edge_size(height: usize, width: usize, edge: usize) -> (usize, usize) {
    let (short, long) = (height.min(width), height.max(width));
    let new_long = ((edge * long) as f64 / short as f64) as usize;
    if width <= height {
        (new_long, edge)
    } else {
        (edge, new_long)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grey(height: usize, width: usize, data: Vec<u8>) -> Bytes {
        Bytes {
            height,
            width,
            channels: 1,
            data,
        }
    }

    #[test]
    fn shrinking_widens_the_triangle_filter_as_pillow_does() {
        // 4 -> 2: the filter covers 3 inputs with weights 3/7, 3/7, 1/7 (and mirrored), so
        // [0, 70, 140, 210] gives [30 + 20, 10 + 60 + 90]. PyTorch's bilinear without
        // antialiasing would give [35, 175].
        let row = grey(1, 4, vec![0, 70, 140, 210]);
        assert_eq!(
            resample(&row, 1, 2, Interpolation::Bilinear).data,
            [50, 160]
        );
        let column = grey(4, 1, vec![0, 70, 140, 210]);
        assert_eq!(
            resample(&column, 2, 1, Interpolation::Bilinear).data,
            [50, 160]
        );
    }

    #[test]
    fn enlarging_is_half_pixel_bilinear_and_bicubic_overshoots() {
        // 2 -> 4: samples at 0.25, 0.75, 1.25, 1.75 -> edges clamp, the middle mixes 3:1.
        let row = grey(1, 2, vec![0, 200]);
        let bilinear = resample(&row, 1, 4, Interpolation::Bilinear);
        assert_eq!(bilinear.data, [0, 50, 150, 200]);
        // Bicubic at 0.25 off the first pixel: weights f(0.25) = 0.8671875 and
        // f(1.25) = -0.0703125 normalised: 100 * 1.0882.. - 200 * 0.0882.. = 91.18 -> 91; at
        // 0.75: (100 f(0.25) + 200 f(0.75)) / (f(0.25) + f(0.75)) = 132.03 / 1.09375 -> 121.
        // (Pillow 13 gives the same four bytes.)
        let row = grey(1, 2, vec![100, 200]);
        let bicubic = resample(&row, 1, 4, Interpolation::Bicubic);
        assert_eq!(bicubic.data, [91, 121, 179, 209]);
    }

    #[test]
    fn same_size_is_the_identity_and_channels_stay_apart() {
        let data: Vec<u8> = (0..2 * 3 * 3).map(|i| (i * 29 % 256) as u8).collect();
        let image = Bytes {
            height: 2,
            width: 3,
            channels: 3,
            data,
        };
        assert_eq!(resample(&image, 2, 3, Interpolation::Bicubic), image);
        // A constant plane per channel stays constant in both filters.
        let flat = Bytes {
            data: [10, 128, 250].repeat(6),
            ..image
        };
        for filter in [Interpolation::Bilinear, Interpolation::Bicubic] {
            let out = resample(&flat, 5, 7, filter);
            assert_eq!(out.data, [10, 128, 250].repeat(35));
        }
    }

    #[test]
    fn centre_crop_floors_the_offset_and_pads_with_zeros() {
        let image = grey(3, 4, (1..=12).collect());
        // Rows (3 - 2) // 2 = 0.., columns (4 - 2) // 2 = 1..
        assert_eq!(center_crop(&image, 2, 2).data, [2, 3, 6, 7]);
        // Larger than the image: offsets (3 - 4) // 2 = -1 and (4 - 5) // 2 = -1.
        let padded = center_crop(&image, 4, 5);
        let want = [
            0, 0, 0, 0, 0, //
            0, 1, 2, 3, 4, //
            0, 5, 6, 7, 8, //
            0, 9, 10, 11, 12,
        ];
        assert_eq!(padded.data, want);
    }

    #[test]
    fn shortest_edge_truncates_the_long_side() {
        assert_eq!(shortest_edge_size(480, 640, 224), (224, 298)); // 298.67
        assert_eq!(shortest_edge_size(640, 480, 224), (298, 224));
        assert_eq!(shortest_edge_size(5, 5, 3), (3, 3));
    }
}
