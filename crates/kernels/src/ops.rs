//! Attention, the backward passes and the optimizer step in Burn's ops: what every backend
//! without a kernel of its own runs (the extension's default bodies), and flex for shapes and
//! types its kernels do not take.

use burn::backend::ops::AttentionModuleOptions;
use burn::backend::tensor::{BoolTensor, FloatTensor};
use burn::backend::{Backend, Distribution, TensorMetadata};
use burn::tensor::Shape;

use crate::adamw::AdamWStep;

/// Burn's attention on `[B, H, T, d_h]` heads, the key mask `[B, T_k]` expanded to its
/// `[B, H, T, T_k]`.
pub(super) fn attention_ops<B: Backend>(
    q: FloatTensor<B>,
    k: FloatTensor<B>,
    v: FloatTensor<B>,
    key_padding: Option<BoolTensor<B>>,
) -> FloatTensor<B> {
    let [batch, heads, tokens, _] = q.shape().dims();
    let keys = k.shape().dims::<4>()[2];
    let mask = key_padding.map(|m| {
        let m = B::bool_reshape(m, [batch, 1, 1, keys].into());
        B::bool_expand(m, [batch, heads, tokens, keys].into())
    });
    B::attention(q, k, v, mask, None, AttentionModuleOptions::default())
}

/// AdamW's step in Burn's ops, as Burn's AdamW runs it.
pub(super) fn adamw_step_ops<B: Backend>(
    param: FloatTensor<B>,
    grad: FloatTensor<B>,
    moment_1: FloatTensor<B>,
    moment_2: FloatTensor<B>,
    s: AdamWStep,
) -> (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>) {
    let average = |m, g, beta: f32| {
        B::float_add(
            B::float_mul_scalar(m, beta.into()),
            B::float_mul_scalar(g, (1.0 - beta).into()),
        )
    };
    let moment_1 = average(moment_1, grad.clone(), s.beta_1);
    let moment_2 = average(moment_2, B::float_mul(grad.clone(), grad), s.beta_2);
    let m = B::float_div_scalar(moment_1.clone(), s.correction_1.into());
    let v = B::float_div_scalar(moment_2.clone(), s.correction_2.into());
    let delta = B::float_div(m, B::float_add_scalar(B::float_sqrt(v), s.epsilon.into()));
    let param = B::float_sub(
        B::float_mul_scalar(param, s.keep.into()),
        B::float_mul_scalar(delta, s.lr.into()),
    );
    (param, moment_1, moment_2)
}

/// Softmax's backward pass in Burn's ops.
pub(super) fn softmax_backward_ops<B: Backend>(
    y: FloatTensor<B>,
    grad: FloatTensor<B>,
) -> FloatTensor<B> {
    let last = y.shape().num_dims() - 1;
    let dot = B::float_sum_dim(B::float_mul(grad.clone(), y.clone()), last);
    B::float_mul(y, B::float_sub(grad, dot))
}

/// LayerNorm's backward pass in Burn's ops: with `x̂ = (x - μ)·r`, `r = 1/√(σ² + ε)` and
/// `g = grad·γ`, `dx = r·(g - mean(g) - x̂·mean(g·x̂))`, `dγ = Σ_rows grad·x̂`, `dβ = Σ_rows grad`.
pub(super) fn layer_norm_backward_ops<B: Backend>(
    x: FloatTensor<B>,
    gamma: FloatTensor<B>,
    grad: FloatTensor<B>,
    epsilon: f64,
) -> (FloatTensor<B>, FloatTensor<B>, FloatTensor<B>) {
    // Rows of `[rows, width]` throughout: backends other than flex do not broadcast across ranks.
    let shape = x.shape();
    let width = shape[shape.num_dims() - 1];
    let rows = shape.num_elements() / width;
    let matrix = |t: FloatTensor<B>, n| B::float_reshape(t, Shape::from([n, width]));
    let (x, grad) = (matrix(x, rows), matrix(grad, rows));
    let centred = B::float_sub(x.clone(), B::float_mean_dim(x, 1));
    let var = B::float_mean_dim(B::float_mul(centred.clone(), centred.clone()), 1);
    let r = B::float_recip(B::float_sqrt(B::float_add_scalar(var, epsilon.into())));
    let xhat = B::float_mul(centred, r.clone());
    let g = B::float_mul(grad.clone(), matrix(gamma, 1));
    let g_mean = B::float_mean_dim(g.clone(), 1);
    let gx_mean = B::float_mean_dim(B::float_mul(g.clone(), xhat.clone()), 1);
    let centred_g = B::float_sub(B::float_sub(g, g_mean), B::float_mul(xhat.clone(), gx_mean));
    let dx = B::float_reshape(B::float_mul(centred_g, r), shape);
    let column_sum =
        |t: FloatTensor<B>| B::float_reshape(B::float_sum_dim(t, 0), Shape::from([width]));
    let dgamma = column_sum(B::float_mul(grad.clone(), xhat));
    (dx, dgamma, column_sum(grad))
}

/// Burn's own way: a Bernoulli draw, then a division.
pub(super) fn bernoulli_mask<B: Backend>(x: FloatTensor<B>, keep: f64) -> FloatTensor<B> {
    let (shape, dtype) = (x.shape(), x.dtype().into());
    let mask = B::float_random(shape, Distribution::Bernoulli(keep), &x.device(), dtype);
    B::float_div_scalar(mask, keep.into())
}
