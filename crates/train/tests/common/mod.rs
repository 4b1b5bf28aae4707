//! Shared by the training tests: a tiny ViT, a two-class image task and a bit-exact view of a
//! trained model.

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;
use std::sync::Mutex;

use data::{ImageDataset, Normalization, Pixels};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use train::{Checkpoint, FitOptions, ImageData, TrainConfig};

/// Two classes of 8x8 images: a bright top half (class 0) or a bright bottom half (class 1).
pub fn halves(n: usize, seed: u64) -> ImageDataset {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pixels = Vec::with_capacity(n * 64);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let class = (i % 2) as u32;
        for row in 0..8 {
            let bright = (row < 4) == (class == 0);
            for _ in 0..8 {
                pixels.push(if bright { 0.7 } else { 0.2 } + rng.random_range(-0.2f32..0.2));
            }
        }
        labels.push(class);
    }
    ImageDataset {
        name: "halves".into(),
        pixels: Pixels::F32(pixels),
        labels,
        dims: [1, 8, 8],
        num_classes: 2,
    }
}

pub fn model(device: &Device) -> VisionTransformer {
    device.seed(3);
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(1)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_num_classes(2)
        .with_dropout(0.1)
        .init(device)
        .unwrap()
}

pub fn recipe(epochs: usize) -> TrainConfig {
    TrainConfig {
        epochs,
        batch_size: 16,
        lr: 3e-3,
        warmup_epochs: 0.5,
        label_smoothing: 0.1,
        ..Default::default()
    }
}

/// Burn's flex RNG is global: tests that seed it must not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn options(device: &Device, checkpoint: Option<Checkpoint>) -> FitOptions<'static> {
    FitOptions {
        device: device.clone(),
        seed: 11,
        label: "test".into(),
        checkpoint,
        quiet: true,
        stop_after: None,
        distill: None,
        validation: None,
    }
}

/// The model's function, compared bit for bit: deterministic logits on a fixed probe batch.
pub fn params(model: &VisionTransformer) -> Vec<f32> {
    let device = Device::flex();
    let probe = halves(16, 99);
    let norm = Normalization::new(vec![0.0], vec![1.0]).unwrap();
    let indices: Vec<usize> = (0..16).collect();
    let images = ImageData {
        set: &probe,
        norm: &norm,
    }
    .batch(&indices, None, &device)
    .unwrap();
    model
        .valid()
        .forward(images, &Gates::none(), Mode::Deterministic)
        .into_data()
        .try_into_vec::<f32>()
        .unwrap()
}
