//! The entry points: functions on Burn tensors, on any device, that route through the
//! [`KernelBackend`] extension (flex's kernels, Burn's ops elsewhere).

use burn::backend::DType;
use burn::backend::Dispatch;
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Bool, Tensor};

use crate::adamw::AdamWStep;
use crate::extension::KernelBackend;

/// GELU, `x·Φ(x)` with the exact Gaussian CDF, on any device; gradients flow under autodiff.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as KernelBackend>::gelu_exact(x.into_dispatch()))
}

/// `lhs · rhs + bias`, as `lhs.matmul(rhs) + bias` with `bias` `[.., 1, n]` (batch dimensions
/// of all three equal or 1). On flex (f32) gemm adds the bias as it writes the product, and
/// products from gemm's threading size up use every thread, where flex runs them on one below
/// 192³ multiply-adds (see `matmul.rs`); elsewhere Burn's ops. Under autodiff it is
/// `lhs.matmul(rhs) + bias` itself: training runs exactly the ops it ran before (routed through
/// the extension, a Linear's training losses moved in the 9th digit).
pub fn matmul_add<const D: usize>(lhs: Tensor<D>, rhs: Tensor<D>, bias: Tensor<D>) -> Tensor<D> {
    if lhs.is_autodiff() {
        return lhs.matmul(rhs) + bias;
    }
    let (lhs, rhs, bias) = (
        lhs.into_dispatch(),
        rhs.into_dispatch(),
        bias.into_dispatch(),
    );
    Tensor::from_dispatch(<Dispatch as KernelBackend>::matmul_add(lhs, rhs, bias))
}

/// `lhs.matmul(rhs)` for batch dimensions equal or 1, on any device. On flex (f32) gemm reads
/// strided operands (a transposed view) in place and writes the product without a zeroed
/// buffer, and under autodiff the two gradient products run the same way.
pub fn matmul<const D: usize>(lhs: Tensor<D>, rhs: Tensor<D>) -> Tensor<D> {
    let (lhs, rhs) = (lhs.into_dispatch(), rhs.into_dispatch());
    Tensor::from_dispatch(<Dispatch as KernelBackend>::matmul(lhs, rhs))
}

/// `softmax(x, D - 1)`; under autodiff with one backward step (on flex one pass over the rows),
/// where Burn's autodiff steps back through max, subtraction, exp, sum and division.
pub fn softmax_last<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as KernelBackend>::softmax_last(x.into_dispatch()))
}

/// `norm.forward(x)` for a LayerNorm of epsilon `epsilon` (Burn 0.22.1 keeps a LayerNorm's
/// epsilon private, so its owner passes the value it was built with); under autodiff (f32, with
/// a bias) one op with one backward step (on flex one pass over the rows) where Burn's autodiff
/// runs its nine-op decomposition of the norm.
pub fn layer_norm<const D: usize>(norm: &LayerNorm, epsilon: f64, x: Tensor<D>) -> Tensor<D> {
    let fused = (norm.beta.as_ref()).filter(|_| x.is_autodiff() && x.dtype() == DType::F32);
    let Some(beta) = fused else {
        return norm.forward(x);
    };
    let (x, gamma) = (x.into_dispatch(), norm.gamma.val().into_dispatch());
    let beta = beta.val().into_dispatch();
    Tensor::from_dispatch(<Dispatch as KernelBackend>::layer_norm_affine(
        x, gamma, beta, epsilon,
    ))
}

/// `layer.forward(x)`, on flex (f32) through the product of [`matmul_add`], under autodiff
/// with the gradient products of [`matmul`]; without a bias, `layer.forward(x)` itself.
pub fn linear<const D: usize>(layer: &Linear, x: Tensor<D>) -> Tensor<D> {
    let Some(bias) = layer.bias.as_ref() else {
        return layer.forward(x);
    };
    let (x, w, b) = (x.into_dispatch(), layer.weight.val(), bias.val());
    let (w, b) = (w.into_dispatch(), b.into_dispatch());
    Tensor::from_dispatch(<Dispatch as KernelBackend>::linear_with_bias(x, w, b))
}

/// `fc2(GELU(fc1(x)))`, a block's MLP with exact GELU. On flex (f32, outside autodiff, inputs
/// of a few hundred rows and more) a block of rows at a time, its hidden activations kept in
/// cache (see `mlp.rs`); elsewhere, and for Linears without a bias, [`linear`] and
/// [`gelu`] in turn.
pub fn mlp<const D: usize>(fc1: &Linear, fc2: &Linear, x: Tensor<D>) -> Tensor<D> {
    let (Some(b1), Some(b2)) = (fc1.bias.as_ref(), fc2.bias.as_ref()) else {
        return linear(fc2, gelu(linear(fc1, x)));
    };
    let [w1, w2] = [fc1, fc2].map(|l| l.weight.val().into_dispatch());
    let [b1, b2] = [b1, b2].map(|b| b.val().into_dispatch());
    let x = x.into_dispatch();
    Tensor::from_dispatch(<Dispatch as KernelBackend>::mlp_gelu(x, w1, b1, w2, b2))
}

/// `softmax(q kᵀ / √d_h) v` per head, for evaluation: `q`, `k`, `v` `[B, H, T, d_h]` in any
/// strides, keys where `key_padding` `[B, T]` is true weighted 0 (a query with no key left gets
/// zeros). On flex (f32) the products read the heads where they lie and the context comes back
/// laid out `[B, T, H, d_h]`, so joining the heads is a view (see `attention.rs`);
/// elsewhere Burn's attention with the mask expanded. Under autodiff Burn's attention steps back
/// through its decomposition: training takes the explicit path of `backbone::attend` instead.
pub fn attention([q, k, v]: [Tensor<4>; 3], key_padding: Option<Tensor<2, Bool>>) -> Tensor<4> {
    let [q, k, v] = [q, k, v].map(Tensor::into_dispatch);
    // Two entry points: Burn 0.22.1's extension macro does not route an optional bool tensor.
    Tensor::from_dispatch(match key_padding {
        Some(m) => <Dispatch as KernelBackend>::attention_masked(q, k, v, m.into_dispatch()),
        None => <Dispatch as KernelBackend>::attention_heads(q, k, v),
    })
}

/// One AdamW step on a parameter: `(param, moment_1, moment_2)` after it, from the gradient
/// and the moments before it (zeros at the first step): the moments' running averages, then
/// `param·keep - lr·m̂ / (√v̂ + ε)` with the bias-corrected moments. The same f32 operations in
/// the same order as Burn's AdamW; on flex one pass over the four tensors, where Burn runs about
/// fifteen tensor ops, each a pass of its own.
pub fn adamw_step<const D: usize>(
    param: Tensor<D>,
    grad: Tensor<D>,
    [moment_1, moment_2]: [Tensor<D>; 2],
    step: AdamWStep,
) -> [Tensor<D>; 3] {
    let (p, m1, m2) = <Dispatch as KernelBackend>::adamw_step(
        param.into_dispatch(),
        grad.into_dispatch(),
        moment_1.into_dispatch(),
        moment_2.into_dispatch(),
        step,
    );
    [p, m1, m2].map(Tensor::from_dispatch)
}

/// An inverted-dropout mask shaped like `x`: `1 / keep` with probability `keep`, else 0, drawn
/// from the device's random generator (reproducible after `device.seed(..)`). A constant: no
/// gradient flows into it.
pub fn dropout_mask<const D: usize>(x: &Tensor<D>, keep: f64) -> Tensor<D> {
    let x = x.clone().into_dispatch();
    Tensor::from_dispatch(<Dispatch as KernelBackend>::dropout_mask(x, keep))
}
