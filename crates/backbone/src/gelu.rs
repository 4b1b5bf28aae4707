//! Exact (erf) GELU with a vectorised, multi-threaded kernel on the flex backend.
//!
//! Why: burn-flex 0.22 evaluates GELU and its gradient one element at a time through libm's
//! scalar `erff` (about 13 ns an element here). On the quick-start ViT that made GELU dearer
//! than every matmul of a forward pass: the single largest cost in both training and
//! evaluation (docs/performance.md). Burn's backend extensions let this crate give flex its own
//! kernel, with its own backward pass under autodiff, while every other backend keeps Burn's
//! GELU, so code stays device-independent.
//!
//! The kernel: `Φ(x) = ½(1 + erf(x/√2))` from the Abramowitz–Stegun 7.1.26 rational form
//! (|error of erf| ≤ 1.5e-7, below half an f32 ulp of 1), whose `exp(-x²/2)` is also the
//! Gaussian density the gradient `Φ(x) + x·φ(x)` needs. Branch-free over blocks of 8 lanes, so
//! the compiler vectorises it (AVX2+FMA chosen at run time where the CPU has them).

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind, unary};
use burn::backend::ops::ActivationOps;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor};
use burn::tensor::{Tensor, TensorData};

/// GELU, `x·Φ(x)` with the exact Gaussian CDF, on any device; gradients flow under autodiff.
pub fn gelu<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    Tensor::from_dispatch(<Dispatch as GeluBackend>::gelu_exact(x.into_dispatch()))
}

/// The GELU operation as a backend extension: flex gets the vectorised kernel, autodiff its
/// backward pass, every other backend Burn's own GELU (the default bodies).
#[backend_extension(
    Flex,
    NdArray: cfg(feature = "ndarray"),
    Cube: cfg(any(feature = "wgpu", feature = "cuda")),
    LibTorch: cfg(feature = "tch"),
    Autodiff
)]
pub trait GeluBackend: Backend {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu(x)
    }

    /// `grad · GELU'(x)`.
    fn gelu_exact_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        Self::gelu_backward(x, grad)
    }
}

impl GeluBackend for Flex {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        match x.as_slice::<f32>() {
            Some(xs) => flex_tensor(x.layout().shape().clone(), kernel::gelu(xs)),
            None => Self::gelu(x),
        }
    }

    fn gelu_exact_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> {
        let same_shape = x.layout().shape() == grad.layout().shape();
        match (x.as_slice::<f32>(), grad.as_slice::<f32>()) {
            (Some(xs), Some(gs)) if same_shape => {
                flex_tensor(x.layout().shape().clone(), kernel::gelu_backward(xs, gs))
            }
            _ => Self::gelu_backward(x, grad),
        }
    }
}

fn flex_tensor(shape: burn::tensor::Shape, values: Vec<f32>) -> FloatTensor<Flex> {
    debug_assert_eq!(values.len(), shape.num_elements());
    burn::backend::flex::FlexTensor::from_data(TensorData::new(values, shape))
}

#[cfg(feature = "ndarray")]
impl GeluBackend for burn::backend::NdArray {}

#[cfg(any(feature = "wgpu", feature = "cuda"))]
impl GeluBackend for burn::backend::Cube {}

#[cfg(feature = "tch")]
impl GeluBackend for burn::backend::LibTorch {}

impl<B: GeluBackend, C: CheckpointStrategy> GeluBackend for Autodiff<B, C> {
    fn gelu_exact(x: FloatTensor<Self>) -> FloatTensor<Self> {
        #[derive(Debug)]
        struct GeluExact;

        impl<B: GeluBackend> Backward<B, 1> for GeluExact {
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
}

/// The element-wise kernels on f32 slices.
pub(crate) mod kernel {
    use std::f32::consts::{FRAC_1_SQRT_2, LN_2, LOG2_E};

    /// Elements per rayon task: below this a second thread costs more than it saves.
    const CHUNK: usize = 1 << 15;
    const LANES: usize = 8;

    /// `x·Φ(x)` for every element.
    pub fn gelu(x: &[f32]) -> Vec<f32> {
        map(x, None)
    }

    /// `g·(Φ(x) + x·φ(x))` for every element pair.
    pub fn gelu_backward(x: &[f32], g: &[f32]) -> Vec<f32> {
        map(x, Some(g))
    }

    fn map(x: &[f32], g: Option<&[f32]>) -> Vec<f32> {
        use rayon::prelude::*;
        let mut out = vec![0.0f32; x.len()];
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(i, out)| {
            let start = i * CHUNK;
            let x = &x[start..start + out.len()];
            let g = g.map(|g| &g[start..start + out.len()]);
            run(x, g, out);
        });
        out
    }

    fn run(x: &[f32], g: Option<&[f32]>, out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has the features the function is compiled for.
            unsafe { run_avx2(x, g, out) };
            return;
        }
        run_portable(x, g, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn run_avx2(x: &[f32], g: Option<&[f32]>, out: &mut [f32]) {
        run_portable(x, g, out);
    }

    #[inline(always)]
    fn run_portable(x: &[f32], g: Option<&[f32]>, out: &mut [f32]) {
        let blocks = x.len() / LANES * LANES;
        let (x_main, x_tail) = x.split_at(blocks);
        let (out_main, out_tail) = out.split_at_mut(blocks);
        match g {
            None => {
                for (o, x) in out_main
                    .chunks_exact_mut(LANES)
                    .zip(x_main.chunks_exact(LANES))
                {
                    for l in 0..LANES {
                        o[l] = forward(x[l]);
                    }
                }
                for (o, &x) in out_tail.iter_mut().zip(x_tail) {
                    *o = forward(x);
                }
            }
            Some(g) => {
                let (g_main, g_tail) = g.split_at(blocks);
                let blocks = out_main
                    .chunks_exact_mut(LANES)
                    .zip(x_main.chunks_exact(LANES).zip(g_main.chunks_exact(LANES)));
                for (o, (x, g)) in blocks {
                    for l in 0..LANES {
                        o[l] = g[l] * derivative(x[l]);
                    }
                }
                for (o, (&x, &g)) in out_tail.iter_mut().zip(x_tail.iter().zip(g_tail)) {
                    *o = g * derivative(x);
                }
            }
        }
    }

    /// `(Φ(x), φ(x))`, the Gaussian CDF and density.
    #[inline(always)]
    fn cdf_pdf(x: f32) -> (f32, f32) {
        const P: f32 = 0.327_591_1;
        const A: [f32; 5] = [
            0.254_829_6,
            -0.284_496_74,
            1.421_413_7,
            -1.453_152,
            1.061_405_4,
        ];
        const INV_SQRT_2PI: f32 = 0.398_942_28;
        let z = x.abs() * FRAC_1_SQRT_2;
        let t = 1.0 / (1.0 + P * z);
        let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
        // exp(-z²) = exp(-x²/2)
        let e = exp_nonpositive(-z * z);
        // 1 - erf(|x|/√2) = poly·e; Φ(x) = 1 - ½·poly·e for x ≥ 0, ½·poly·e below.
        let half_tail = 0.5 * poly * e;
        let cdf = if x >= 0.0 { 1.0 - half_tail } else { half_tail };
        (cdf, INV_SQRT_2PI * e)
    }

    #[inline(always)]
    pub(crate) fn forward(x: f32) -> f32 {
        x * cdf_pdf(x).0
    }

    #[inline(always)]
    pub(crate) fn derivative(x: f32) -> f32 {
        let (cdf, pdf) = cdf_pdf(x);
        cdf + x * pdf
    }

    /// `exp(v)` for `v ≤ 0` (relative error below 2e-7): `2^k · exp(r)`, `|r| ≤ ln2/2`.
    #[inline(always)]
    fn exp_nonpositive(v: f32) -> f32 {
        // Below -87 the result is under f32's smallest normal: 0 for these purposes (and 2^k
        // stays a normal number). NaN stays NaN: `max` would drop it, so test first.
        let v = if v < -87.0 { -87.0 } else { v };
        // Round to nearest by the 1.5·2^23 shift (vectorises, unlike `round`); the shifted
        // value's low mantissa bits are then k itself, read without a float-to-int conversion.
        const SHIFT: f32 = 12_582_912.0;
        let shifted = v * LOG2_E + SHIFT;
        let k = shifted - SHIFT;
        let k_int = shifted.to_bits() as i32 - SHIFT.to_bits() as i32;
        // ln 2 split in two so that k·LN2_HI is exact.
        const LN2_HI: f32 = 0.693_145_75;
        let ln2_lo: f32 = LN_2 - LN2_HI;
        let r = (v - k * LN2_HI) - k * ln2_lo;
        // Taylor polynomial of degree 7 on |r| ≤ 0.347: truncation error < 5e-9.
        let p = 1.0
            + r * (1.0
                + r * (0.5
                    + r * (1.0 / 6.0
                        + r * (1.0 / 24.0
                            + r * (1.0 / 120.0 + r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
        let scale = f32::from_bits(((k_int + 127) as u32) << 23);
        p * scale
    }
}

#[cfg(test)]
mod tests {
    use super::kernel;

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

    #[test]
    fn matches_the_exact_gelu_and_its_derivative() {
        let xs: Vec<f32> = (-12_000..=12_000).map(|i| i as f32 * 1e-3).collect();
        let grads: Vec<f32> = xs.iter().map(|x| 1.0 + 0.25 * x.sin()).collect();
        let y = kernel::gelu(&xs);
        let dy = kernel::gelu_backward(&xs, &grads);
        for ((&x, &g), (&y, &dy)) in xs.iter().zip(&grads).zip(y.iter().zip(&dy)) {
            let (ry, rd) = reference(x as f64);
            // |Δerf| ≤ 1.5e-7 gives |Δgelu| ≤ |x|·0.75e-7, plus f32 rounding.
            let tol = 1e-7 * (1.0 + x.abs() as f64) + 2e-7 * ry.abs();
            assert!(
                (y as f64 - ry).abs() <= tol,
                "gelu({x}) = {y}, expected {ry}"
            );
            let rg = g as f64 * rd;
            assert!(
                (dy as f64 - rg).abs() <= 4e-7 * (1.0 + x.abs() as f64),
                "gelu'({x})·{g} = {dy}, expected {rg}"
            );
        }
    }

    #[test]
    fn extremes_and_nan() {
        let xs = [f32::NAN, f32::INFINITY, -200.0, 200.0, 0.0, -0.0];
        let y = kernel::gelu(&xs);
        assert!(y[0].is_nan());
        assert_eq!(y[1], f32::INFINITY);
        assert!(y[2] <= 0.0 && y[2] > -1e-30, "gelu(-200) = {}", y[2]);
        assert_eq!(y[3], 200.0);
        assert_eq!(y[4], 0.0);
        let d = kernel::gelu_backward(&xs, &[1.0; 6]);
        assert!(d[0].is_nan());
        assert!(d[2].abs() < 1e-30 && d[3] == 1.0, "{d:?}");
        assert_eq!(d[4], 0.5);
    }

    /// Through the tensor API on flex with autodiff: the same values and gradients as Burn's
    /// GELU, for a contiguous tensor and for a transposed (strided) one, which takes Burn's path.
    #[test]
    fn tensor_api_matches_burns_gelu_with_gradients() {
        use burn::tensor::{Device, Distribution, Tensor, activation};
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
}
