//! Resizing image datasets for pretrained backbones, e.g. Fashion-MNIST 28x28 grey to
//! 56x56 or 112x112 RGB for DINOv2-S/14.

use crate::dataset::{ImageDataset, Pixels};
use crate::error::{DataError, Result};

/// `set` resized to `size`x`size` with `channels` channels, as float pixels (bytes scaled to
/// [0, 1]). Bilinear with half-pixel centres and edges clamped, as PyTorch's
/// `interpolate(mode="bilinear", align_corners=False)` without antialiasing; the same size is
/// the identity. A single (grey) channel is replicated to `channels`; otherwise `channels` must
/// equal the set's. Labels, name and classes are kept.
///
/// Memory grows with `size² · channels`: resize batch subsets (`set.subset(..)`) when the whole
/// set would not fit (60k images at 3x112x112 are 9 GB).
pub fn resize(set: &ImageDataset, size: usize, channels: usize) -> Result<ImageDataset> {
    let [c, h, w] = set.dims;
    let fail = |what: String| DataError::invalid(format!("resize {}: {what}", set.name));
    if size == 0 || channels == 0 {
        return Err(fail(format!(
            "size = {size}, channels = {channels}; expected both positive"
        )));
    }
    if channels != c && c != 1 {
        return Err(fail(format!(
            "cannot make {channels} channels from {c}: only a single (grey) channel is \
             replicated"
        )));
    }
    let stored = match &set.pixels {
        Pixels::U8(v) => v.len(),
        Pixels::F32(v) => v.len(),
    };
    if set.image_size() == 0 || stored != set.len() * set.image_size() {
        return Err(fail(format!(
            "{stored} pixel values for {} images of dims {:?}; expected {} and non-empty images",
            set.len(),
            set.dims,
            set.len() * set.image_size()
        )));
    }
    let (rows, cols) = (taps(h, size), taps(w, size));
    let mut pixels = Vec::with_capacity(set.len() * channels * size * size);
    let mut plane = Vec::with_capacity(size * size);
    for i in 0..set.len() {
        let image = set.image_f32(i);
        for source in image.chunks_exact(h * w) {
            plane.clear();
            for &(r0, r1, fr) in &rows {
                let (top, bottom) = (&source[r0 * w..(r0 + 1) * w], &source[r1 * w..(r1 + 1) * w]);
                plane.extend(cols.iter().map(|&(c0, c1, fc)| {
                    let upper = top[c0] + fc * (top[c1] - top[c0]);
                    let lower = bottom[c0] + fc * (bottom[c1] - bottom[c0]);
                    upper + fr * (lower - upper)
                }));
            }
            // A grey plane is written `channels` times; otherwise each plane once.
            for _ in 0..channels / c {
                pixels.extend_from_slice(&plane);
            }
        }
    }
    Ok(ImageDataset {
        pixels: Pixels::F32(pixels),
        dims: [channels, size, size],
        ..set.clone_without_pixels()
    })
}

/// Per output index: the two source indices and the weight of the second.
fn taps(from: usize, to: usize) -> Vec<(usize, usize, f32)> {
    let scale = from as f64 / to as f64;
    (0..to)
        .map(|o| {
            let x = ((o as f64 + 0.5) * scale - 0.5).max(0.0);
            let i0 = (x as usize).min(from - 1);
            (i0, (i0 + 1).min(from - 1), (x - i0 as f64) as f32)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pixels: Pixels, dims: [usize; 3], n: usize) -> ImageDataset {
        ImageDataset {
            name: "tiny".into(),
            pixels,
            labels: (0..n as u32).collect(),
            dims,
            num_classes: n,
        }
    }

    fn floats(d: &ImageDataset) -> &[f32] {
        match &d.pixels {
            Pixels::F32(v) => v,
            Pixels::U8(_) => panic!("expected float pixels"),
        }
    }

    #[test]
    fn upsampling_matches_half_pixel_bilinear_by_hand() {
        // PyTorch: interpolate([[0, 4], [8, 12]], size=4, mode="bilinear", align_corners=False).
        let d = set(Pixels::F32(vec![0.0, 4.0, 8.0, 12.0]), [1, 2, 2], 1);
        let out = resize(&d, 4, 1).unwrap();
        let want = [
            0.0, 1.0, 3.0, 4.0, 2.0, 3.0, 5.0, 6.0, 6.0, 7.0, 9.0, 10.0, 8.0, 9.0, 11.0, 12.0,
        ];
        assert_eq!(floats(&out), want);
        assert_eq!((out.dims, out.labels.clone()), ([1, 4, 4], vec![0]));
        // Halving averages each 2x2 block (samples fall between the pixels).
        let down = resize(&out, 2, 1).unwrap();
        assert_eq!(floats(&down), [1.5, 4.5, 7.5, 10.5]);
    }

    #[test]
    fn same_size_is_the_identity_and_bytes_are_scaled() {
        let bytes: Vec<u8> = (0..2 * 3 * 16).map(|i| (i * 37 % 256) as u8).collect();
        let d = set(Pixels::U8(bytes), [3, 4, 4], 2);
        assert_eq!(resize(&d, 4, 3).unwrap().pixels, d.to_f32().pixels);
        // Non-square: a 2x1 column keeps its rows and repeats its one column.
        let column = set(Pixels::F32(vec![1.0, 3.0]), [1, 2, 1], 1);
        assert_eq!(
            floats(&resize(&column, 2, 1).unwrap()),
            [1.0, 1.0, 3.0, 3.0]
        );
    }

    #[test]
    fn constant_images_stay_constant_and_grey_is_replicated() {
        let d = set(Pixels::U8(vec![51; 2 * 28 * 28]), [1, 28, 28], 2);
        for size in [14, 56, 112] {
            let out = resize(&d, size, 3).unwrap();
            assert_eq!(out.dims, [3, size, size]);
            assert_eq!(floats(&out).len(), 2 * 3 * size * size);
            assert!(floats(&out).iter().all(|&v| (v - 0.2).abs() < 1e-6));
        }
        // Each replicated plane is the resized grey plane.
        let ramp = set(
            Pixels::F32((0..9).map(|i| i as f32).collect()),
            [1, 3, 3],
            1,
        );
        let grey = resize(&ramp, 5, 1).unwrap();
        let rgb = resize(&ramp, 5, 3).unwrap();
        assert_eq!(floats(&rgb), floats(&grey).repeat(3));
    }

    #[test]
    fn bad_shapes_are_errors() {
        let rgb = set(Pixels::F32(vec![0.0; 2 * 4]), [2, 2, 2], 1);
        let err = resize(&rgb, 4, 3).unwrap_err().to_string();
        assert!(err.contains("cannot make 3 channels from 2"), "{err}");
        let short = set(Pixels::U8(vec![0; 7]), [1, 2, 2], 2);
        let err = resize(&short, 4, 1).unwrap_err().to_string();
        assert!(
            err.contains("7 pixel values for 2 images of dims [1, 2, 2]; expected 8"),
            "{err}"
        );
        for n in [0, 2] {
            let empty_images = set(Pixels::U8(vec![]), [1, 0, 3], n);
            let err = resize(&empty_images, 4, 1).unwrap_err().to_string();
            assert!(err.contains("non-empty images"), "{err}");
        }
        for (size, channels) in [(0, 1), (4, 0)] {
            let err = resize(&short, size, channels).unwrap_err().to_string();
            assert!(err.contains("expected both positive"), "{err}");
        }
        // No images: nothing to resize, but the dims still change.
        let none = set(Pixels::U8(vec![]), [1, 28, 28], 0);
        assert_eq!(resize(&none, 56, 3).unwrap().dims, [3, 56, 56]);
    }
}
