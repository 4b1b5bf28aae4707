use backbone::{Dropout, Gates, Mode, ViTConfig};
use burn::tensor::Tensor;

use crate::{test_device, values};

#[test]
fn deterministic_mode_is_the_identity() {
    let device = test_device();
    let x = Tensor::<2>::ones([50, 40], &device);
    let out = Dropout { prob: 0.3 }.forward(x.clone(), Mode::Deterministic);
    assert_eq!(values(&out), values(&x));
}

#[test]
fn stochastic_mode_zeroes_the_right_fraction_and_rescales() {
    let device = test_device();
    let dropout = Dropout { prob: 0.3 };
    let x = Tensor::<2>::ones([100, 100], &device);
    let a = values(&dropout.forward(x.clone(), Mode::Stochastic));
    let b = values(&dropout.forward(x, Mode::Stochastic));
    assert_ne!(a, b, "two stochastic calls gave the same mask");
    let zeros = a.iter().filter(|&&v| v == 0.0).count() as f64 / a.len() as f64;
    // 10,000 Bernoulli(0.3) draws: standard deviation 0.0046, so 0.03 is more than 6 sigma.
    assert!((zeros - 0.3).abs() < 0.03, "zero fraction {zeros}");
    let kept = 1.0 / 0.7;
    assert!(
        a.iter().all(|&v| v == 0.0 || (v - kept).abs() < 1e-5),
        "survivors must be scaled by 1/(1-p)"
    );
}

#[test]
fn mc_dropout_works_on_a_plain_device() {
    let device = test_device();
    assert!(!device.is_autodiff());
    let model = ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_dropout(0.2)
        .with_attention_dropout(0.1)
        .init(&device)
        .unwrap();
    let images = Tensor::<4>::ones([2, 1, 8, 8], &device);
    let run = |mode| values(&model.forward(images.clone(), &Gates::none(), mode));
    assert_eq!(run(Mode::Deterministic), run(Mode::Deterministic));
    assert_ne!(run(Mode::Stochastic), run(Mode::Stochastic));
}

#[test]
fn probability_outside_unit_interval_is_rejected() {
    let err = ViTConfig::new()
        .with_dropout(1.0)
        .init(&test_device())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("ViTConfig.dropout") && err.contains("[0, 1)"),
        "{err}"
    );
}
