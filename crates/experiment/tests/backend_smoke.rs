//! The same code on the accelerator backends compiled in: wgpu (lavapipe when there is no GPU) and
//! LibTorch (`tch`, its CPU kernels). For each, one training step, and a forward pass that matches
//! flex's. Built only with either feature:
//!   cargo test -p experiment --features wgpu --test backend_smoke
//!   eval "$(scripts/libtorch-env)" && cargo test -p experiment --features tch --test backend_smoke
#![cfg(any(feature = "wgpu", feature = "tch"))]

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::{Device, Distribution, Tensor};
use data::{ImageDataset, Normalization, Pixels};
use experiment::device::device;
use train::{FitOptions, ImageData, TrainConfig, fit};

fn tiny(device: &Device) -> VisionTransformer {
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_num_classes(3)
        .init(device)
        .unwrap()
}

#[cfg(feature = "wgpu")]
#[test]
fn wgpu_forward_matches_the_cpu_and_a_training_step_runs() {
    forward_matches_the_cpu_and_a_training_step_runs("wgpu");
}

#[cfg(feature = "tch")]
#[test]
fn tch_forward_matches_the_cpu_and_a_training_step_runs() {
    forward_matches_the_cpu_and_a_training_step_runs("tch");
}

fn forward_matches_the_cpu_and_a_training_step_runs(backend: &str) {
    let cpu = Device::flex();
    let other = device(backend).expect("the backend is compiled in");
    cpu.seed(1);
    let model = tiny(&cpu);
    let images = Tensor::<4>::random([4, 1, 8, 8], Distribution::Uniform(0.0, 1.0), &cpu);
    let on_cpu = model.forward(images.clone(), &Gates::none(), Mode::Deterministic);
    let on_other = model.clone().to_device(&other).forward(
        images.to_device(&other),
        &Gates::none(),
        Mode::Deterministic,
    );
    let gap: f32 = (on_cpu - on_other.to_device(&cpu))
        .abs()
        .max()
        .into_scalar();
    assert!(gap < 1e-4, "{backend} and flex logits differ by {gap}");

    // One optimiser step of the ordinary training loop on the backend's autodiff device.
    let n = 8;
    let set = ImageDataset {
        name: "smoke".into(),
        pixels: Pixels::F32((0..n * 64).map(|i| (i % 7) as f32 / 7.0).collect()),
        labels: (0..n as u32).map(|i| i % 3).collect(),
        dims: [1, 8, 8],
        num_classes: 3,
    };
    let norm = Normalization::new(vec![0.5], vec![0.25]).unwrap();
    let recipe = TrainConfig {
        epochs: 1,
        batch_size: n,
        warmup_epochs: 0.0,
        ..Default::default()
    };
    // Built on the autodiff device, as the runner builds every model it trains.
    let autodiff = other.clone().autodiff();
    let start = tiny(&autodiff);
    let opts = FitOptions {
        device: autodiff,
        seed: 2,
        label: backend.into(),
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill: None,
    };
    let trained = fit(
        start.clone(),
        ImageData {
            set: &set,
            norm: &norm,
        },
        &recipe,
        &opts,
    )
    .unwrap()
    .valid();
    let probe = Tensor::<4>::random([2, 1, 8, 8], Distribution::Uniform(0.0, 1.0), &other);
    let before = start
        .valid()
        .forward(probe.clone(), &Gates::none(), Mode::Deterministic);
    let after = trained.forward(probe, &Gates::none(), Mode::Deterministic);
    let change: f32 = (after - before).abs().max().into_scalar();
    assert!(change > 0.0, "the training step changed nothing");
}
