//! Exact (erf) GELU and dropout masks with vectorised, multi-threaded kernels on the flex
//! backend; matrix products that add their bias as they are written and use every thread from
//! a smaller size than flex does (`kernels/matmul.rs`); attention for evaluation that reads the
//! heads where the projections left them (`kernels/attention.rs`); and, for training, Linears,
//! products, softmax and LayerNorm with backward passes of their own and a fused AdamW step.
//!
//! Why: burn-flex 0.22 evaluates GELU and its gradient one element at a time through libm's
//! scalar `erff` (about 13 ns an element here), and draws dropout masks one element at a time
//! from a ChaCha generator behind a lock (about 14 ns an element). On the quick-start ViT both
//! cost more than the matmuls of a forward pass (docs/performance.md). Under autodiff, Burn's
//! backward passes run flex's product, which zeroes and copies every output buffer, and step
//! back through softmax and LayerNorm op by op; its AdamW is fifteen passes per parameter.
//! Burn's backend extensions let this crate give flex its own kernels ([`cpu`], [`rows`],
//! [`matmul`], [`attention`], in [`flex`]), with their backward passes under autodiff
//! ([`autodiff`]), while every other backend keeps Burn's own ops ([`ops`]), so code stays
//! device-independent.

use burn::backend::tensor::{BoolTensor, FloatTensor};
use burn::backend::{Backend, Dispatch, backend_extension};
use burn::backend::{DType, TensorMetadata};
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Bool, Tensor};

mod attention;
mod autodiff;
mod cpu;
mod flex;
mod matmul;
mod mlp;
mod ops;
mod rows;

use flex::flex_tensor;
use ops::{
    adamw_step_ops, attention_ops, bernoulli_mask, layer_norm_backward_ops, mlp_ops,
    softmax_backward_ops,
};

/// GELU, `x·Φ(x)` with the exact Gaussian CDF, on any device; gradients flow under autodiff.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as KernelBackend>::gelu_exact(x.into_dispatch()))
}

/// `lhs · rhs + bias`, as `lhs.matmul(rhs) + bias` with `bias` `[.., 1, n]` (batch dimensions
/// of all three equal or 1). On flex (f32) gemm adds the bias as it writes the product, and
/// products from gemm's threading size up use every thread, where flex runs them on one below
/// 192³ multiply-adds (see `kernels/matmul.rs`); elsewhere Burn's ops. Under autodiff it is
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

/// `norm.forward(x)`; under autodiff (f32, with a bias) one op with one backward step (on flex
/// one pass over the rows) where Burn's autodiff runs its nine-op decomposition of the norm.
pub fn layer_norm<const D: usize>(norm: &LayerNorm, x: Tensor<D>) -> Tensor<D> {
    let fused = (norm.beta.as_ref()).filter(|_| x.is_autodiff() && x.dtype() == DType::F32);
    let (Some(beta), Some(epsilon)) = (fused, fused.and_then(|_| epsilon(norm))) else {
        return norm.forward(x);
    };
    let (x, gamma) = (x.into_dispatch(), norm.gamma.val().into_dispatch());
    let beta = beta.val().into_dispatch();
    Tensor::from_dispatch(<Dispatch as KernelBackend>::layer_norm_affine(
        x, gamma, beta, epsilon,
    ))
}

/// A LayerNorm's epsilon. Burn 0.22.1 keeps the field private and shows it only in the
/// module's display, in Rust's shortest round-trip form, so it is read back from there.
fn epsilon(norm: &LayerNorm) -> Option<f64> {
    let shown = norm.to_string();
    let (_, rest) = shown.split_once("epsilon: ")?;
    rest.split([',', '}']).next()?.trim().parse().ok()
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
/// cache (see `kernels/mlp.rs`); elsewhere, and for Linears without a bias, [`linear`] and
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
/// laid out `[B, T, H, d_h]`, so joining the heads is a view (see `kernels/attention.rs`);
/// elsewhere Burn's attention with the mask expanded. Under autodiff Burn's attention steps back
/// through its decomposition: training takes the explicit path of [`crate::attend`] instead.
pub fn attention([q, k, v]: [Tensor<4>; 3], key_padding: Option<Tensor<2, Bool>>) -> Tensor<4> {
    let [q, k, v] = [q, k, v].map(Tensor::into_dispatch);
    // Two entry points: Burn 0.22.1's extension macro does not route an optional bool tensor.
    Tensor::from_dispatch(match key_padding {
        Some(m) => <Dispatch as KernelBackend>::attention_masked(q, k, v, m.into_dispatch()),
        None => <Dispatch as KernelBackend>::attention_heads(q, k, v),
    })
}

/// The scalars of one AdamW step, in f32 as Burn's AdamW applies them: `correction_i` is
/// `1 - β_i^t` at step t, `keep` is `1 - lr·weight_decay`.
#[derive(Clone, Copy, Debug)]
pub struct AdamWStep {
    /// The first moment's decay β₁.
    pub beta_1: f32,
    /// The second moment's decay β₂.
    pub beta_2: f32,
    /// Added to `√v̂`.
    pub epsilon: f32,
    /// `1 - β₁^t`.
    pub correction_1: f32,
    /// `1 - β₂^t`.
    pub correction_2: f32,
    /// `1 - lr·weight_decay`: the decoupled weight decay.
    pub keep: f32,
    /// The learning rate.
    pub lr: f32,
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

    /// See [`matmul_add`].
    fn matmul_add(
        lhs: FloatTensor<Self>,
        rhs: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::float_add(Self::float_matmul(lhs, rhs), bias)
    }

    /// See [`attention`], without a key mask.
    fn attention_heads(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        attention_ops::<Self>(q, k, v, None)
    }

    /// See [`attention`], keys where `key_padding` `[B, T_k]` is true ignored.
    fn attention_masked(
        q: FloatTensor<Self>,
        k: FloatTensor<Self>,
        v: FloatTensor<Self>,
        key_padding: BoolTensor<Self>,
    ) -> FloatTensor<Self> {
        attention_ops::<Self>(q, k, v, Some(key_padding))
    }

    /// See [`mlp`]: weights `[in, out]`, biases `[out]`.
    fn mlp_gelu(
        x: FloatTensor<Self>,
        w1: FloatTensor<Self>,
        b1: FloatTensor<Self>,
        w2: FloatTensor<Self>,
        b2: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        mlp_ops::<Self>(x, [w1, b1, w2, b2])
    }

    /// See [`softmax_last`].
    fn softmax_last(x: FloatTensor<Self>) -> FloatTensor<Self> {
        let last = x.shape().num_dims() - 1;
        Self::softmax(x, last)
    }

    /// Softmax's input gradient from its output `y` and output gradient: `y·(grad - Σ grad·y)`
    /// over the last dimension.
    fn softmax_last_backward(y: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        softmax_backward_ops::<Self>(y, grad)
    }

    /// LayerNorm over the last dimension with scale and bias (see [`layer_norm`]).
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

    /// See [`matmul`].
    fn matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::float_matmul(lhs, rhs)
    }

    /// A Linear with a bias, `x` `[.., in]`, weight `[in, out]`, bias `[out]`: what
    /// `Linear::forward` runs (see [`linear`]).
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

    /// See [`adamw_step`].
    fn adamw_step(
        param: FloatTensor<Self>,
        grad: FloatTensor<Self>,
        moment_1: FloatTensor<Self>,
        moment_2: FloatTensor<Self>,
        step: AdamWStep,
    ) -> (FloatTensor<Self>, FloatTensor<Self>, FloatTensor<Self>) {
        adamw_step_ops::<Self>(param, grad, moment_1, moment_2, step)
    }

    /// See [`dropout_mask`]; `x` gives the shape, device and dtype.
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

/// What the kernels' gradient tests share.
#[cfg(test)]
mod testing {
    use burn::backend::flex::FlexTensor;
    use burn::tensor::{Device, Gradients, Tensor, TensorData};

    /// A flex tensor of spread values in [-2, 2), a different spread for each `seed`; not drawn,
    /// as other tests reseed the generator.
    pub fn spread<const D: usize>(dims: [usize; D], seed: usize) -> FlexTensor {
        let n = dims.iter().product::<usize>();
        let v: Vec<f32> = (0..n)
            .map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 / 250.0 - 2.0)
            .collect();
        FlexTensor::from_data(TensorData::new(v, dims))
    }

    /// Runs `check` on rayon pools of 1 and 2 threads.
    pub fn pools(check: impl Fn() + Sync) {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(&check);
        }
    }

    /// Values and gradients of `y` under the loss `Σ y²·c` (`c` cycling through 1..2, so that
    /// output elements' gradients differ; not drawn, as other tests reseed the generator), for
    /// each tensor in `wrt`.
    pub fn grads<const D: usize>(
        y: Tensor<D>,
        device: &Device,
        wrt: &[&dyn Fn(&Gradients) -> TensorData],
    ) -> Vec<TensorData> {
        let c: Vec<f32> = (0..y.shape().num_elements())
            .map(|i| 1.0 + (i % 7) as f32 / 7.0)
            .collect();
        let c = Tensor::<D>::from_data(TensorData::new(c, y.shape()), device);
        let g = (y.clone() * y.clone() * c).sum().backward();
        let mut out = vec![y.into_data()];
        out.extend(wrt.iter().map(|f| f(&g)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::cpu as kernel;

    /// Flex's random generator is process-wide: tests that seed it must not interleave.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The reference: `x·Φ(x)` and its derivative in f64 with libm's erf.
    fn reference(x: f64) -> (f64, f64) {
        let cdf = 0.5 * (1.0 + libm_erf(x / std::f64::consts::SQRT_2));
        let pdf = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
        (x * cdf, cdf + x * pdf)
    }

    /// erf in f64 by its Taylor series (|x| ≤ 3) and continued fraction beyond, so the test
    /// does not share code with the kernel.
    fn libm_erf(x: f64) -> f64 {
        let a = x.abs();
        let v = if a <= 3.0 {
            let (mut term, mut sum, mut n) = (a, a, 0.0);
            while term.abs() > 1e-17 {
                n += 1.0;
                term *= -a * a / n;
                sum += term / (2.0 * n + 1.0);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc(a) = exp(-a²)/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + ...))))
            let mut f = a;
            for k in (1..60).rev() {
                f = a + (k as f64 / 2.0) / f;
            }
            1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
        };
        v.copysign(x)
    }

    /// Every loop this CPU can run (AVX-512, AVX2, portable), forward and backward.
    fn each_kernel(xs: &[f32], grads: &[f32], check: impl Fn(&str, &[f32], &[f32])) {
        let names = ["avx512", "avx2", "portable"];
        let into = kernel::into_kernels();
        for ((name, kernel), into) in names.iter().zip(kernel::kernels()).zip(into) {
            let (Some(kernel), Some(into)) = (kernel, into) else {
                continue;
            };
            let mut y = xs.to_vec();
            kernel(&mut y, None);
            // The forward pass into a fresh buffer gives the in-place pass's bits.
            let mut fresh = vec![std::mem::MaybeUninit::new(f32::NAN); xs.len()];
            into(&mut fresh, xs);
            // SAFETY: every element was initialised (NaN) before the kernel wrote it.
            let fresh: Vec<u32> = (fresh.iter())
                .map(|v| unsafe { v.assume_init() }.to_bits())
                .collect();
            assert!(
                fresh.iter().zip(&y).all(|(a, b)| *a == b.to_bits()),
                "{name}: into"
            );
            let mut dy = grads.to_vec();
            kernel(&mut dy, Some(xs));
            check(name, &y, &dy);
        }
    }

    /// The SIMD widths give the same bits, forward and backward (each element is computed
    /// alone, by the same operations): a CPU's GELU results do not depend on its vector width.
    #[test]
    fn simd_widths_give_the_same_bits() {
        let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 * 1.3e-3).collect();
        let grads: Vec<f32> = xs.iter().map(|x| 1.0 + 0.25 * x.cos()).collect();
        let outputs = std::sync::Mutex::new(Vec::new());
        each_kernel(&xs, &grads, |name, y, dy| {
            if name != "portable" {
                outputs
                    .lock()
                    .unwrap()
                    .push((name.to_string(), y.to_vec(), dy.to_vec()));
            }
        });
        let outputs = outputs.into_inner().unwrap();
        for pair in outputs.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a.1), bits(&b.1), "{} vs {} forward", a.0, b.0);
            assert_eq!(bits(&a.2), bits(&b.2), "{} vs {} backward", a.0, b.0);
        }
    }

    #[test]
    fn matches_the_exact_gelu_and_its_derivative() {
        let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 * 1e-3).collect();
        let grads: Vec<f32> = xs.iter().map(|x| 1.0 + 0.25 * x.sin()).collect();
        each_kernel(&xs, &grads, |name, y, dy| {
            for ((&x, &g), (&y, &dy)) in xs.iter().zip(&grads).zip(y.iter().zip(dy)) {
                let (ry, rd) = reference(x as f64);
                // |Δerf| ≤ 1.5e-7 gives |Δgelu| ≤ |x|·0.75e-7, plus f32 rounding.
                let tol = 1e-7 * (1.0 + x.abs() as f64) + 2e-7 * ry.abs();
                assert!(
                    (y as f64 - ry).abs() <= tol,
                    "{name}: gelu({x}) = {y}, expected {ry}"
                );
                let rg = g as f64 * rd;
                assert!(
                    (dy as f64 - rg).abs() <= 4e-7 * (1.0 + x.abs() as f64),
                    "{name}: gelu'({x})·{g} = {dy}, expected {rg}"
                );
            }
        });
        // The threaded pass over many chunks gives what one loop gives.
        let (mut y, mut dy) = (xs.clone(), grads.clone());
        kernel::gelu(&mut y);
        kernel::gelu_backward(&xs, &mut dy);
        let widest = kernel::widest();
        let (mut y1, mut dy1) = (xs.clone(), grads.clone());
        widest(&mut y1, None);
        widest(&mut dy1, Some(&xs));
        assert_eq!((y, dy), (y1, dy1));
    }

    #[test]
    fn extremes_and_nan() {
        let xs = [f32::NAN, f32::INFINITY, -200.0, 200.0, 0.0, -0.0];
        each_kernel(&xs, &[1.0; 6], |name, y, d| {
            assert!(y[0].is_nan(), "{name}");
            assert_eq!(y[1], f32::INFINITY, "{name}");
            assert!(
                y[2] <= 0.0 && y[2] > -1e-30,
                "{name}: gelu(-200) = {}",
                y[2]
            );
            assert_eq!(y[3], 200.0, "{name}");
            assert_eq!(y[4], 0.0, "{name}");
            assert!(d[0].is_nan(), "{name}");
            assert!(d[2].abs() < 1e-30 && d[3] == 1.0, "{name}: {d:?}");
            assert_eq!(d[4], 0.5, "{name}");
        });
    }

    /// Evaluation writes over the activation's input when nothing else holds it, so a tensor
    /// the caller still holds must come back unchanged.
    #[test]
    fn a_held_input_is_not_written_over() {
        use burn::tensor::{Device, Distribution, Tensor, activation};
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let device = Device::flex();
        device.seed(3);
        let x = Tensor::<2>::random([40, 33], Distribution::Normal(0.0, 2.0), &device);
        let before = x.to_data();
        let y = super::gelu(x.clone());
        x.to_data().assert_eq(&before, true);
        let tol = burn::tensor::Tolerance::absolute(2e-6);
        (y.into_data()).assert_approx_eq::<f32>(&activation::gelu(x.clone()).into_data(), tol);
        // Owned and consumed: the same values computed in place.
        let y_owned = super::gelu(x.clone() * 1.0);
        y_owned
            .into_data()
            .assert_approx_eq::<f32>(&activation::gelu(x).into_data(), tol);
    }

    /// Through the tensor API on flex with autodiff: the same values and gradients as Burn's
    /// GELU, for a contiguous tensor and for a transposed (strided) one, which takes Burn's path.
    #[test]
    fn tensor_api_matches_burns_gelu_with_gradients() {
        use burn::tensor::{Device, Distribution, Tensor, activation};
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let device = Device::flex().autodiff();
        device.seed(7);
        let x = Tensor::<2>::random([37, 29], Distribution::Normal(0.0, 3.0), &device);
        let w = Tensor::<2>::random([37, 29], Distribution::Normal(0.0, 1.0), &device);
        let grads_of = |f: &dyn Fn(Tensor<2>) -> Tensor<2>, transpose: bool| {
            let x = x.clone().require_grad();
            let input = if transpose {
                x.clone().transpose()
            } else {
                x.clone()
            };
            let y = f(input);
            let y = if transpose { y.transpose() } else { y };
            let loss = (y.clone() * w.clone()).sum();
            let grads = loss.backward();
            (y.inner().into_data(), x.grad(&grads).unwrap().into_data())
        };
        for transpose in [false, true] {
            let (y, dx) = grads_of(&|t| super::gelu(t), transpose);
            let (ry, rdx) = grads_of(&|t| activation::gelu(t), transpose);
            let tol = burn::tensor::Tolerance::absolute(2e-6);
            y.assert_approx_eq::<f32>(&ry, tol);
            dx.assert_approx_eq::<f32>(&rdx, tol);
        }
    }

    /// The kept fraction is within 6 binomial standard deviations of `keep`, values are 0 or
    /// `1/keep`, a mask depends only on (index, key), and another key gives another mask.
    #[test]
    fn dropout_masks_keep_the_right_fraction_and_depend_on_the_key() {
        let (n, keep) = (300_000, 0.9);
        let mask = kernel::dropout_mask(n, keep, 12_345);
        let kept = mask.iter().filter(|&&v| v != 0.0).count() as f64;
        let sd = (n as f64 * keep * (1.0 - keep)).sqrt();
        assert!(
            (kept - n as f64 * keep).abs() < 6.0 * sd,
            "kept {kept} of {n}"
        );
        let scale = (1.0 / keep) as f32;
        assert!(mask.iter().all(|&v| v == 0.0 || v == scale));
        assert_eq!(kernel::dropout_mask(1000, keep, 12_345), mask[..1000]);
        let other = kernel::dropout_mask(n, keep, 12_346);
        let same = mask.iter().zip(&other).filter(|(a, b)| a == b).count() as f64;
        // Independent masks agree where both keep or both drop: keep² + (1 - keep)² = 0.82.
        let agree = keep * keep + (1.0 - keep) * (1.0 - keep);
        assert!((same - n as f64 * agree).abs() < 6.0 * (n as f64 * agree * (1.0 - agree)).sqrt());
        // Neighbouring elements are not correlated: P(both dropped) ≈ (1 - keep)².
        let pairs = mask
            .windows(2)
            .filter(|w| w[0] == 0.0 && w[1] == 0.0)
            .count() as f64;
        let p = (1.0 - keep) * (1.0 - keep);
        assert!(
            (pairs - n as f64 * p).abs() < 6.0 * (n as f64 * p).sqrt(),
            "pairs {pairs}"
        );
    }

    /// Dropout through the tensor API on flex with autodiff: reproducible after seeding, a new
    /// mask per call, and the gradient of `sum(dropout(x))` is the mask itself.
    #[test]
    fn dropout_is_seeded_and_passes_the_gradient_through_its_mask() {
        use crate::{Dropout, Mode};
        use burn::tensor::{Device, Distribution, Tensor};
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let device = Device::flex().autodiff();
        let dropout = Dropout { prob: 0.25 };
        let x = Tensor::<2>::random([64, 48], Distribution::Uniform(1.0, 2.0), &device);
        let draw = |seed: u64| {
            device.seed(seed);
            let x = x.clone().require_grad();
            let y = dropout.forward(x.clone(), Mode::Stochastic);
            let grads = y.clone().sum().backward();
            let y: Vec<f32> = y.inner().into_data().try_to_vec().unwrap();
            let dx: Vec<f32> = x.grad(&grads).unwrap().into_data().try_to_vec().unwrap();
            (y, dx)
        };
        let (y, dx) = draw(3);
        assert_eq!(draw(3).0, y, "same seed, same mask");
        assert_ne!(draw(4).0, y, "another seed, another mask");
        let xs: Vec<f32> = x.inner().into_data().try_to_vec().unwrap();
        for ((y, dx), x) in y.iter().zip(&dx).zip(&xs) {
            // y = x · m with m ∈ {0, 4/3}; dy/dx = m.
            assert!(
                *dx == 0.0 || (*dx - 4.0 / 3.0).abs() < 1e-6,
                "mask value {dx}"
            );
            assert!((y - x * dx).abs() < 1e-6);
        }
    }
}
