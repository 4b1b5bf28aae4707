//! Small models and data shared by the unit tests.

use std::sync::{Mutex, MutexGuard};

use backbone::{ViTConfig, VisionTransformer};
use burn::tensor::{Device, Tensor};
use data::{ImageDataset, Pixels};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Held by every test that draws from or seeds the device RNG (model init, `fit`): on flex that
/// generator is process-wide, so parallel tests would otherwise perturb each other's draws.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A 3-block ViT on 8x8 grey images (patch 4: 4 patches + class token), width 16, 2 heads,
/// MLP 32, 3 classes, initialised from `seed`.
pub fn tiny_vit(device: &Device, seed: u64) -> (ViTConfig, VisionTransformer) {
    let cfg = ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(3)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_num_classes(3);
    device.seed(seed);
    let model = cfg.init(device).unwrap();
    (cfg, model)
}

/// `n` 8x8 images in 3 classes: class k has a bright 4x4 patch in quadrant k (quadrant 3 is
/// never bright), on uniform noise. Telling the classes apart needs the class token to attend
/// to the patches.
pub fn quadrants(n: usize, seed: u64) -> ImageDataset {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pixels = Vec::with_capacity(n * 64);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let label = (i % 3) as u32;
        let (r0, c0) = ((label as usize / 2) * 4, (label as usize % 2) * 4);
        for r in 0..8 {
            for c in 0..8 {
                let bright = (r0..r0 + 4).contains(&r) && (c0..c0 + 4).contains(&c);
                let noise: f32 = rng.random_range(0.0..0.5);
                pixels.push(if bright { 0.5 + noise } else { noise });
            }
        }
        labels.push(label);
    }
    ImageDataset {
        name: "quadrants".into(),
        pixels: Pixels::F32(pixels),
        labels,
        dims: [1, 8, 8],
        num_classes: 3,
    }
}

/// `max |a - b| / max |b|`.
pub fn max_rel_diff<const D: usize>(a: &Tensor<D>, b: &Tensor<D>) -> f32 {
    let scale: f32 = b.clone().abs().max().into_scalar();
    let diff: f32 = (a.clone() - b.clone()).abs().max().into_scalar();
    diff / scale.max(f32::MIN_POSITIVE)
}
