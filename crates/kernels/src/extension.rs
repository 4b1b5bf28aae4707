//! The operations as a Burn backend extension ([`KernelBackend`]); the default bodies are Burn's
//! own ops (`ops.rs`, and a block's MLP here, which needs the extension's GELU), which every
//! backend but flex keeps.

use burn::backend::tensor::{BoolTensor, FloatTensor};
use burn::backend::{Backend, TensorMetadata, backend_extension};

use crate::adamw::AdamWStep;
use crate::ops::{
    adamw_step_ops, attention_ops, bernoulli_mask, layer_norm_backward_ops, softmax_backward_ops,
};

/// The operations as a backend extension: flex gets the vectorised kernels, autodiff GELU's
/// backward pass, every other backend Burn's own ops (the default bodies).
#[cfg_attr(feature = "tch", allow(deprecated))]
#[backend_extension(
    Flex,
    NdArray: cfg(feature = "ndarray"),
    Cube: cfg(any(feature = "wgpu", feature = "cuda")),
    LibTorch: cfg(feature = "tch"),
    Autodiff
)]
pub trait KernelBackend: Backend {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu(x)
    }

    /// `grad · GELU'(x)`.
    fn gelu_exact_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu_backward(x, grad)
    }

    /// See [`crate::matmul_add`].
    fn matmul_add(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::float_add(Self::float_matmul(lhs, rhs), bias)
    }

    /// See [`crate::attention`], without a key mask.
    fn attention_heads(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        attention_ops::<Self>(q, k, v, None)
    }

    /// See [`crate::attention`], keys where `key_padding` `[B, T_k]` is true ignored.
    fn attention_masked(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        key_padding: BoolTensor<Self>,
    ) -> FloatTensor<Self> {
        attention_ops::<Self>(q, k, v, Some(key_padding))
    }

    /// See [`crate::mlp`]: weights `[in, out]`, biases `[out]`.
    fn mlp_gelu(
        x: FloatTensor<Self>,
        w1: FloatTensor<Self>,
        b1: FloatTensor<Self>,
        w2: FloatTensor<Self>,
        b2: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        mlp_ops::<Self>(x, [w1, b1, w2, b2])
    }

    /// See [`crate::softmax_last`].
    fn softmax_last(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let last = x.shape().num_dims() - 1;
        Self::softmax(x, last)
    }

    /// Softmax's input gradient from its output `y` and output gradient: `y·(grad - Σ grad·y)`
    /// over the last dimension.
    fn softmax_last_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        softmax_backward_ops::<Self>(y, grad)
    }

    /// LayerNorm over the last dimension with scale and bias (see [`crate::layer_norm`]).
    fn layer_norm_affine(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        beta: FloatTensor<Self>,
        epsilon: f64,
    ) -> FloatTensor<Self> {
        Self::layer_norm(x, gamma, Some(beta), epsilon)
    }

    /// LayerNorm's gradients `(dx, dγ, dβ)` from its input and output gradient.
    fn layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        layer_norm_backward_ops::<Self>(x, gamma, grad, epsilon)
    }

    /// See [`crate::matmul`].
    fn matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::float_matmul(lhs, rhs)
    }

    /// A Linear with a bias, `x` `[.., in]`, weight `[in, out]`, bias `[out]`: what
    /// `Linear::forward` runs (see [`crate::linear`]).
    fn linear_with_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::linear(x, weight, Some(bias))
    }

    /// The gradient of a Linear's input, `grad · weightᵀ`.
    fn linear_x_grad(weight: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::linear_x_backward(weight, grad)
    }

    /// The gradient of a Linear's weight, `xᵀ · grad` summed over every leading row.
    fn linear_weight_grad(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::linear_weight_backward(x, grad)
    }

    /// See [`crate::adamw_step`].
    fn adamw_step(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        step: AdamWStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        adamw_step_ops::<Self>(param, grad, moment_1, moment_2, step)
    }

    /// See [`crate::dropout_mask`]; `x` gives the shape, device and dtype.
    fn dropout_mask(x: FloatTensor<Self>, keep: f64) -> FloatTensor<Self> {
        bernoulli_mask::<Self>(x, keep)
    }
}

#[cfg(feature = "ndarray")]
impl KernelBackend for burn::backend::NdArray {}

#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl KernelBackend for burn::backend::Cube {}

// burn-tch is deprecated in Burn 0.22.1 but still the only LibTorch route (docs/backends.md).
#[cfg(feature = "tch")]
#[allow(deprecated)]
impl KernelBackend for burn::backend::LibTorch {}

/// A block's MLP as its ops: fc1's Linear, GELU, fc2's Linear.
pub(crate) fn mlp_ops<B: KernelBackend>(
    x: FloatTensor<B>,
    [w1, b1, w2, b2]: [FloatTensor<B>; 4],
) -> FloatTensor<B> {
    let hidden = B::gelu_exact(B::linear_with_bias(x, w1, b1));
    B::linear_with_bias(hidden, w2, b2)
}
