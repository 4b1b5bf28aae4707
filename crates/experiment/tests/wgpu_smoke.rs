//! The same code on the wgpu backend (lavapipe when there is no GPU): one training step, and a
//! forward pass that matches the CPU's. Built only with `--features wgpu`:
//!   cargo test -p experiment --features wgpu --test wgpu_smoke
#![cfg(feature = "wgpu")]

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

#[test]
fn forward_matches_the_cpu_and_a_training_step_runs() {
    let cpu = Device::flex();
    let gpu = device("wgpu").expect("the wgpu backend is compiled in");
    cpu.seed(1);
    let model = tiny(&cpu);
    let images = Tensor::<4>::random([4, 1, 8, 8], Distribution::Uniform(0.0, 1.0), &cpu);
    let on_cpu = model.forward(images.clone(), &Gates::none(), Mode::Deterministic);
    let on_gpu = model.clone().to_device(&gpu).forward(
        images.to_device(&gpu),
        &Gates::none(),
        Mode::Deterministic,
    );
    let gap: f32 = (on_cpu - on_gpu.to_device(&cpu)).abs().max().into_scalar();
    assert!(gap < 1e-4, "wgpu and CPU logits differ by {gap}");

    // One optimiser step of the ordinary training loop on the wgpu autodiff device.
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
    // Built on the wgpu autodiff device, as the runner builds every model it trains.
    let autodiff = gpu.clone().autodiff();
    let start = tiny(&autodiff);
    let opts = FitOptions {
        device: autodiff,
        seed: 2,
        label: "wgpu".into(),
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
    let probe = Tensor::<4>::random([2, 1, 8, 8], Distribution::Uniform(0.0, 1.0), &gpu);
    let before = start
        .valid()
        .forward(probe.clone(), &Gates::none(), Mode::Deterministic);
    let after = trained.forward(probe, &Gates::none(), Mode::Deterministic);
    let change: f32 = (after - before).abs().max().into_scalar();
    assert!(change > 0.0, "the training step changed nothing");
}
