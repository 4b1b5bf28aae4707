//! One `train::fit` epoch runs for each efficient ensemble and moves its parameters; its
//! evaluation-mode logits (the validation pass's) are its test-time ones.

use backbone::ViTConfig;
use burn::tensor::Device;
use data::{ImageDataset, Normalization, Pixels};
use ensembles::{BatchEnsembleConfig, MimoConfig, PackedConfig};
use seam::EnsembleModel;
use seam::Trainable;
use train::{FitOptions, ImageData, TrainConfig, fit};

use crate::{images, serial, tiny, values};

/// 16 images of two classes: bright top half (class 0) or bright bottom half (class 1), with a
/// fixed ripple so no two images are equal.
fn halves() -> ImageDataset {
    let mut pixels = Vec::with_capacity(16 * 64);
    for i in 0..16 {
        for r in 0..8 {
            for c in 0..8 {
                let bright = (r < 4) == (i % 2 == 0);
                let ripple = 0.05 * (((i * 7 + r * 3 + c) % 5) as f32 - 2.0);
                pixels.push(if bright { 0.8 } else { 0.2 } + ripple);
            }
        }
    }
    ImageDataset {
        name: "halves".into(),
        pixels: Pixels::F32(pixels),
        labels: (0..16).map(|i| i % 2).collect(),
        dims: [1, 8, 8],
        num_classes: 2,
    }
}

/// Trains one epoch and checks the model's test-time logits moved.
fn one_epoch<M>(model: M)
where
    M: Trainable + EnsembleModel,
{
    let device = Device::flex().autodiff();
    let set = halves();
    let norm = Normalization::new(vec![0.5], vec![0.3]).unwrap();
    let recipe = TrainConfig {
        epochs: 1,
        batch_size: 8,
        lr: 1e-2,
        ..Default::default()
    };
    let opts = FitOptions {
        device: device.clone(),
        seed: 21,
        label: "efficient".into(),
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill: None,
        validation: None,
    };
    let probe = images(4, 1, &Device::flex());
    let before = values(&model.valid().member_logits(probe.clone().into()));
    // `fit` fails on a non-finite loss, so Ok means every step's loss was finite.
    let trained = fit(
        model,
        ImageData {
            set: &set,
            norm: &norm,
        },
        &recipe,
        &opts,
    )
    .unwrap();
    let after = values(&trained.valid().member_logits(probe.clone().into()));
    assert!(after.iter().all(|v| v.is_finite()));
    // The validation pass between epochs sees what evaluation sees.
    assert_eq!(values(&trained.valid().eval_logits(probe.into())), after);
    let moved = before
        .iter()
        .zip(&after)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(moved > 1e-4, "training left the logits unchanged");
}

fn config() -> ViTConfig {
    tiny(1).with_num_classes(2).with_dropout(0.1)
}

#[test]
fn batch_ensemble_trains() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    one_epoch(
        BatchEnsembleConfig {
            members: 2,
            ..BatchEnsembleConfig::default()
        }
        .init(&config(), 1, &device)
        .unwrap(),
    );
}

#[test]
fn mimo_trains() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let settings = MimoConfig {
        members: 2,
        input_repetition: 0.25,
    };
    one_epoch(settings.init(&config(), 2, &device).unwrap());
}

#[test]
fn packed_ensemble_trains() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let settings = PackedConfig {
        members: 2,
        gamma: 2,
        ..PackedConfig::default()
    };
    one_epoch(settings.init(&config(), 3, &device).unwrap());
}
