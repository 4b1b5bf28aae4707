//! Integration tests of the backbone crate (one binary; one module per topic).

mod attention;
mod blocks;
mod classifier;
mod clip;
mod cost;
mod dropout;
mod gradients;
mod models;

use burn::tensor::{Device, Tensor};

/// A two-block BERT small enough for exact comparisons (vocabulary 50, width 8, 2 heads).
pub fn tiny_bert() -> backbone::BertConfig {
    backbone::BertConfig::new()
        .with_vocab_size(50)
        .with_d_model(8)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_max_position(16)
}

/// Tests run on the flex CPU device, chosen explicitly.
pub fn test_device() -> Device {
    Device::flex()
}

/// Flattened f32 values of a tensor.
pub fn values<const D: usize>(t: &Tensor<D>) -> Vec<f32> {
    t.to_data().try_to_vec::<f32>().expect("f32 tensor")
}

/// Asserts two tensors have the same shape and agree to `tol` (absolute + relative).
pub fn assert_close<const D: usize>(a: &Tensor<D>, b: &Tensor<D>, tol: f32) {
    assert_eq!(a.dims(), b.dims(), "shapes differ");
    for (i, (x, y)) in values(a).iter().zip(values(b)).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "element {i}: {x} vs {y} (tol {tol})"
        );
    }
}

/// A random tensor from the standard normal distribution.
pub fn randn<const D: usize>(shape: [usize; D], device: &Device) -> Tensor<D> {
    Tensor::random(shape, burn::tensor::Distribution::Normal(0.0, 1.0), device)
}
