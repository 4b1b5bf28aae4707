//! The efficient ensembles (BatchEnsemble, MIMO, Packed-Ensembles) against their definitions:
//! exact equivalences with plain ViTs holding the same weights, closed-form parameter and FLOP
//! counts, and one training epoch each. One binary; one module per method.

mod batch_ensemble;
mod fit;
mod grouped;
mod mimo;
mod packed;

use std::sync::{Mutex, MutexGuard};

use backbone::ViTConfig;
use burn::module::Param;
use burn::nn::LayerNorm;
use burn::tensor::{Device, Distribution, Tensor};

/// Burn's flex RNG is process-wide: tests that seed it must not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A tiny ViT: 8x8 images, patch 4 (4 patches, 5 tokens), width 8, 2 blocks of 2 heads.
pub fn tiny(channels: usize) -> ViTConfig {
    ViTConfig::new()
        .with_image_size(8)
        .with_channels(channels)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_num_classes(3)
}

pub fn images(batch: usize, channels: usize, device: &Device) -> Tensor<4> {
    device.seed(99);
    Tensor::random(
        [batch, channels, 8, 8],
        Distribution::Normal(0.0, 1.0),
        device,
    )
}

pub fn values<const D: usize>(t: &Tensor<D>) -> Vec<f32> {
    t.to_data().try_to_vec::<f32>().expect("f32 tensor")
}

/// Asserts equal shapes and agreement to `tol` (absolute + relative).
pub fn assert_close<const D: usize>(a: &Tensor<D>, b: &Tensor<D>, tol: f32) {
    assert_eq!(a.dims(), b.dims(), "shapes differ");
    for (i, (x, y)) in values(a).iter().zip(values(b)).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "element {i}: {x} vs {y} (tol {tol})"
        );
    }
}

/// Member `m` of member logits `[M, B, C]`.
pub fn member(logits: &Tensor<3>, m: usize) -> Tensor<2> {
    logits.clone().narrow(0, m, 1).squeeze_dim(0)
}

pub fn param<const D: usize>(t: Tensor<D>) -> Param<Tensor<D>> {
    Param::from_tensor(t)
}

/// A LayerNorm with the given scale and shift (epsilon from `like`).
pub fn layer_norm(like: &LayerNorm, gamma: Tensor<1>, beta: Tensor<1>) -> LayerNorm {
    let mut norm = like.clone();
    norm.gamma = param(gamma);
    norm.beta = Some(param(beta));
    norm
}

/// Row `i` of a `[R, n]` tensor as `[n]`.
pub fn row(t: &Tensor<2>, i: usize) -> Tensor<1> {
    t.clone().narrow(0, i, 1).squeeze_dim(0)
}
