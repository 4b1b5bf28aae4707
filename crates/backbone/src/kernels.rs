//! Exact (erf) GELU and dropout masks with vectorised, multi-threaded kernels on the flex
//! backend, and matrix products that add their bias as they are written and use every thread
//! from a smaller size than flex does (`kernels/matmul.rs`).
//!
//! Why: burn-flex 0.22 evaluates GELU and its gradient one element at a time through libm's
//! scalar `erff` (about 13 ns an element here), and draws dropout masks one element at a time
//! from a ChaCha generator behind a lock (about 14 ns an element). On the quick-start ViT both
//! cost more than the matmuls of a forward pass (docs/performance.md). Burn's backend
//! extensions let this crate give flex its own kernels, with GELU's backward pass under
//! autodiff, while every other backend keeps Burn's own ops, so code stays device-independent.
//! The kernels themselves are in [`cpu`].

use burn::backend::AutodiffBackend;
use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::ops::{ActivationOps, FloatTensorOps, ModuleOps};
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor};
use burn::backend::{DType, Distribution, FloatDType, TensorMetadata};
use burn::nn::Linear;
use burn::tensor::{Tensor, TensorData};

mod cpu;
mod matmul;

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

/// `layer.forward(x)`, on flex (f32) through the product of [`matmul_add`]; under autodiff, or
/// without a bias, `layer.forward(x)` itself.
pub fn linear<const D: usize>(layer: &Linear, x: Tensor<D>) -> Tensor<D> {
    let Some(bias) = (layer.bias.as_ref()).filter(|_| !x.is_autodiff()) else {
        return layer.forward(x);
    };
    let (x, w, b) = (x.into_dispatch(), layer.weight.val(), bias.val());
    let (w, b) = (w.into_dispatch(), b.into_dispatch());
    Tensor::from_dispatch(<Dispatch as KernelBackend>::linear_with_bias(x, w, b))
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

    /// A Linear with a bias, `x` `[.., in]`, weight `[in, out]`, bias `[out]`: what
    /// `Linear::forward` runs (see [`linear`]).
    fn linear_with_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        Self::linear(x, weight, Some(bias))
    }

    /// See [`dropout_mask`]; `x` gives the shape, device and dtype.
    fn dropout_mask(x: FloatTensor<Self>, keep: f64) -> FloatTensor<Self> {
        bernoulli_mask::<Self>(x, keep)
    }
}

/// Burn's own way: a Bernoulli draw, then a division.
fn bernoulli_mask<B: Backend>(x: FloatTensor<B>, keep: f64) -> FloatTensor<B> {
    let (shape, dtype) = (x.shape(), x.dtype().into());
    let mask = B::float_random(shape, Distribution::Bernoulli(keep), &x.device(), dtype);
    B::float_div_scalar(mask, keep.into())
}

impl KernelBackend for Flex {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        if x.dtype() != DType::F32 {
            return Self::gelu(x);
        }
        let mut y = owned_contiguous(x);
        cpu::gelu(y.storage_mut::<f32>());
        y
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

    fn linear_with_bias(
        x: FloatTensor<Self>,
        weight: FloatTensor<Self>,
        bias: FloatTensor<Self>,
    ) -> FloatTensor<Self> {
        matmul::linear(&x, &weight, &bias).unwrap_or_else(|| Self::linear(x, weight, Some(bias)))
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

fn flex_tensor(shape: burn::tensor::Shape, values: Vec<f32>) -> FloatTensor<Flex> {
    debug_assert_eq!(values.len(), shape.num_elements());
    burn::backend::flex::FlexTensor::from_data(TensorData::new(values, shape))
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

#[cfg(feature = "ndarray")]
impl KernelBackend for burn::backend::NdArray {}

#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl KernelBackend for burn::backend::Cube {}

// burn-tch is deprecated in Burn 0.22.1 but still the only LibTorch route (docs/backends.md).
#[cfg(feature = "tch")]
#[allow(deprecated)]
impl KernelBackend for burn::backend::LibTorch {}

impl<B: KernelBackend, C: CheckpointStrategy> KernelBackend for Autodiff<B, C> {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct GeluExact;

        impl<B: KernelBackend> Backward<B, 1> for GeluExact {
            // The input, kept for the backward pass (a shared handle, not a copy).
            type State = B::FloatTensorPrimitive;

            fn backward(
                self,
                ops: Ops<Self::State, 1>,
                grads: &mut Gradients,
                _: &mut Checkpointer,
            ) {
                let input = ops.state;
                unary::<B, _>(ops.parents, ops.node, grads, |grad| {
                    B::gelu_exact_backward(input, grad)
                });
            }
        }

        match GeluExact
            .prepare::<C>([x.node()])
            .compute_bound()
            .stateful()
        {
            OpsKind::Tracked(prep) => {
                let input = x.primitive().clone();
                prep.finish(input.clone(), B::gelu_exact(input))
            }
            OpsKind::UnTracked(prep) => prep.finish(B::gelu_exact(x.into_primitive())),
        }
    }

    fn dropout_mask(x: FloatTensor<Self>, keep: f64) -> FloatTensor<Self> {
        // A constant on the graph: the product with it carries the gradient.
        Self::from_inner(B::dropout_mask(x.into_primitive(), keep))
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
        for (name, kernel) in names.iter().zip(kernel::kernels()) {
            let Some(kernel) = kernel else { continue };
            let mut y = xs.to_vec();
            kernel(&mut y, None);
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
        let widest = kernel::kernels().into_iter().flatten().next().unwrap();
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
