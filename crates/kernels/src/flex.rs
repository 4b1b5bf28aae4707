//! Flex's side of the extension: the vectorised kernels of [`cpu`](crate::cpu),
//! [`rows`](crate::rows) and [`matmul`](crate::matmul), each falling back to Burn's ops for
//! shapes and types it does not take.

use burn::backend::ops::{ActivationOps, FloatTensorOps, ModuleOps};
use burn::backend::tensor::{BoolTensor, FloatTensor};
use burn::backend::{DType, Distribution, Flex, FloatDType, TensorMetadata};

use crate::adamw::AdamWStep;
use crate::extension::{KernelBackend, mlp_ops};
use crate::matmul::flex_tensor;
use crate::ops::{
    adamw_step_ops, attention_ops, bernoulli_mask, layer_norm_backward_ops, softmax_backward_ops,
};
use crate::{attention, cpu, matmul, mlp, rows};

impl KernelBackend for Flex {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 {
            return Self::gelu(x);
        }
        let mut y = owned_contiguous(x);
        if let Some(values) = y.try_storage_mut::<f32>() {
            cpu::gelu(values);
            return y;
        }
        // Held elsewhere (autodiff keeps a GELU's input for its backward pass): written from it
        // into a fresh buffer, one pass where a copy and then a pass over the copy were two.
        let xs = y.as_slice::<f32>().expect("a contiguous f32 tensor");
        flex_tensor(y.layout().shape().clone(), cpu::gelu_into(xs))
    }

    fn gelu_exact_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let same_shape = x.layout().shape() == grad.layout().shape();
        if !same_shape || grad.dtype() != DType::F32 {
            return Self::gelu_backward(x, grad);
        }
        let Some(xs) = x.as_slice::<f32>() else {
            return Self::gelu_backward(x, grad);
        };
        let mut grad = owned_contiguous(grad);
        cpu::gelu_backward(xs, grad.storage_mut::<f32>());
        grad
    }

    fn matmul_add(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        matmul::matmul_add(&lhs, &rhs, &bias)
            .unwrap_or_else(|| Self::float_add(Self::float_matmul(lhs, rhs), bias))
    }

    fn attention_heads(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        attention::attention(&q, &k, &v, None)
            .unwrap_or_else(|| attention_ops::<Self>(q, k, v, None))
    }

    fn attention_masked(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        key_padding: BoolTensor<Self>,
    ) -> FloatTensor<Self> {
        let mask = key_padding.to_contiguous();
        attention::attention(&q, &k, &v, Some(&mask))
            .unwrap_or_else(|| attention_ops::<Self>(q, k, v, Some(mask)))
    }

    fn mlp_gelu(
        x: FloatTensor<Self>,
        w1: FloatTensor<Self>,
        b1: FloatTensor<Self>,
        w2: FloatTensor<Self>,
        b2: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        mlp::mlp(&x, [&w1, &b1, &w2, &b2]).unwrap_or_else(|| mlp_ops::<Self>(x, [w1, b1, w2, b2]))
    }

    fn softmax_last(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let width = x.layout().shape().last().copied().unwrap_or(0);
        if x.dtype() != DType::F32 || width == 0 {
            let last = x.layout().shape().num_dims() - 1;
            return Self::softmax(x, last);
        }
        let mut y = owned_contiguous(x);
        rows::softmax(y.storage_mut::<f32>(), width);
        y
    }

    fn softmax_last_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let same_shape = y.layout().shape() == grad.layout().shape();
        let ys = (y.as_slice::<f32>()).filter(|_| same_shape && grad.dtype() == DType::F32);
        let Some(ys) = ys else {
            return softmax_backward_ops::<Self>(y, grad);
        };
        let width = *y.layout().shape().last().expect("softmax over a dimension");
        let mut grad = owned_contiguous(grad);
        rows::softmax_backward(ys, grad.storage_mut::<f32>(), width);
        grad
    }

    fn layer_norm_backward(
        x: FloatTensor<Self>,
        gamma: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        epsilon: f64,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let same_shape = x.layout().shape() == grad.layout().shape();
        let f32s = same_shape && grad.dtype() == DType::F32;
        let (Some(xs), Some(gs)) = (
            x.as_slice::<f32>().filter(|_| f32s),
            gamma.as_slice::<f32>().filter(|_| f32s),
        ) else {
            return layer_norm_backward_ops::<Self>(x, gamma, grad, epsilon);
        };
        let mut dx = owned_contiguous(grad);
        let (dgamma, dbeta) = rows::layer_norm_backward(xs, gs, dx.storage_mut::<f32>(), epsilon);
        let width = gs.len();
        let vector = |v| flex_tensor([width].into(), v);
        (dx, vector(dgamma), vector(dbeta))
    }

    fn matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        matmul::matmul(&lhs, &rhs).unwrap_or_else(|| Self::float_matmul(lhs, rhs))
    }

    fn linear_with_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        matmul::linear(&x, &weight, &bias).unwrap_or_else(|| Self::linear(x, weight, Some(bias)))
    }

    fn linear_x_grad(weight: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        matmul::linear_x_grad(&weight, &grad)
            .unwrap_or_else(|| Self::linear_x_backward(weight, grad))
    }

    fn linear_weight_grad(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        matmul::linear_weight_grad(&x, &grad)
            .unwrap_or_else(|| Self::linear_weight_backward(x, grad))
    }

    fn adamw_step(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        step: AdamWStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        let shape = param.layout().shape();
        let fits = [&grad, &moment_1, &moment_2]
            .iter()
            .all(|t| t.layout().shape() == shape && t.dtype() == DType::F32);
        let g = grad
            .as_slice::<f32>()
            .filter(|_| fits && param.dtype() == DType::F32);
        let Some(g) = g else {
            return adamw_step_ops::<Self>(param, grad, moment_1, moment_2, step);
        };
        let [mut p, mut m1, mut m2] = [param, moment_1, moment_2].map(owned_contiguous);
        let (ps, m1s, m2s) = (p.storage_mut(), m1.storage_mut(), m2.storage_mut());
        cpu::adamw(ps, g, [m1s, m2s], &step);
        (p, m1, m2)
    }

    fn dropout_mask(x: FloatTensor<Self>, keep: f64) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 {
            return bernoulli_mask::<Self>(x, keep);
        }
        // The key comes from the device generator, so `device.seed(..)` fixes every mask.
        let draw = Self::float_random(
            [2].into(),
            Distribution::Uniform(0.0, 16_777_216.0),
            &x.device(),
            FloatDType::F32,
        );
        let key = match draw.as_slice::<f32>() {
            Some(&[hi, lo]) => ((hi as u64) << 24) | lo as u64,
            _ => unreachable!("a fresh f32 tensor of 2 elements is contiguous"),
        };
        let shape = x.layout().shape().clone();
        flex_tensor(
            shape.clone(),
            cpu::dropout_mask(shape.num_elements(), keep, key),
        )
    }
}

/// `x` contiguous, for a kernel to write over through `storage_mut`: `x`'s own buffer when
/// nothing else holds it (a layer's output on its way to the activation), else `storage_mut`
/// copies first, so a tensor still in use (kept for a backward pass, cloned by the caller) is
/// never changed.
fn owned_contiguous(x: FloatTensor<Flex>) -> FloatTensor<Flex> {
    let y = x.to_contiguous();
    drop(x);
    y
}
