//! The same code on the accelerator backends compiled in: wgpu (lavapipe when there is no GPU) and
//! LibTorch (`tch`, its CPU kernels). For each, one training step, and a forward pass that matches
//! flex's. Built only with either feature:
//!   cargo test --profile smoke -p train --features wgpu --test backend_smoke
//!   eval "$(scripts/libtorch-env)" && cargo test --profile smoke -p train --features tch --test backend_smoke
#![cfg(any(feature = "wgpu", feature = "tch"))]

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Distribution, Tensor};
use data::{ImageDataset, Normalization, Pixels};
use runtime::Backend;
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
    forward_matches_the_cpu_and_a_training_step_runs(Backend::Wgpu);
}

#[cfg(feature = "tch")]
#[test]
fn tch_forward_matches_the_cpu_and_a_training_step_runs() {
    forward_matches_the_cpu_and_a_training_step_runs(Backend::Tch);
}

fn forward_matches_the_cpu_and_a_training_step_runs(backend: Backend) {
    let cpu = Device::flex();
    let other = backend.device().expect("the backend is compiled in");
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

    // One optimiser step of the ordinary training loop, from the same weights on the backend's
    // autodiff device and on flex's: the step lowers the batch's loss on the backend, and both
    // take the same step (the backend's result is compared with flex's, not only with its start).
    let n = 8;
    let set = ImageDataset {
        name: "smoke".into(),
        pixels: Pixels::F32((0..n * 64).map(|i| (i % 7) as f32 / 7.0).collect()),
        labels: (0..n as u32).map(|i| i % 3).collect(),
        dims: [1, 8, 8],
        num_classes: 3,
    };
    let norm = Normalization::new(vec![0.5], vec![0.25]).unwrap();
    let data = ImageData {
        set: &set,
        norm: &norm,
    };
    let recipe = TrainConfig {
        epochs: 1,
        batch_size: n,
        warmup_epochs: 0.0,
        ..Default::default()
    };
    let trained_on = |device: &Device| {
        let autodiff = device.clone().autodiff();
        let opts = FitOptions {
            device: autodiff.clone(),
            seed: 2,
            label: backend.name().into(),
            checkpoint: None,
            quiet: true,
            stop_after: None,
            distill: None,
            validation: None,
        };
        let start = model.clone().fork(&autodiff).train();
        fit(start, data, &recipe, &opts).unwrap().valid()
    };
    let on_other = trained_on(&other);
    let on_cpu = trained_on(&cpu);

    let all: Vec<usize> = (0..n).collect();
    let loss = |model: &VisionTransformer, device: &Device| -> f32 {
        let images = data.batch(&all, None, device).unwrap();
        let logits = model.forward(images, &Gates::none(), Mode::Deterministic);
        let labels = data.labels(&all, device).unsqueeze_dim::<2>(1);
        let picked = log_softmax(logits, 1).gather(1, labels);
        -picked.mean().into_scalar::<f32>()
    };
    let before = loss(&model.clone().to_device(&other), &other);
    let after = loss(&on_other, &other);
    assert!(
        after < before,
        "the step on {backend} did not lower the batch's loss: {before} -> {after}"
    );
    let probe = Tensor::<4>::random([2, 1, 8, 8], Distribution::Uniform(0.0, 1.0), &cpu);
    let logits = |m: &VisionTransformer, device: &Device| {
        m.forward(
            probe.clone().to_device(device),
            &Gates::none(),
            Mode::Deterministic,
        )
        .to_device(&cpu)
    };
    let change: f32 = (logits(&on_cpu, &cpu) - logits(&model, &cpu))
        .abs()
        .max()
        .into_scalar();
    let gap: f32 = (logits(&on_other, &other) - logits(&on_cpu, &cpu))
        .abs()
        .max()
        .into_scalar();
    // Adam's first step moves every weight by about the learning rate whatever its gradient's
    // size, so float differences in near-zero gradients show; a tenth of the step bounds them.
    assert!(
        gap < 0.1 * change,
        "the step on {backend} differs from flex's by {gap} (the step moved the logits by {change})"
    );
}
