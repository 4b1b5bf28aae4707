//! Backward passes of the row-wise operations, LayerNorm and softmax over the last dimension,
//! each one pass over the rows where Burn's autodiff runs their decomposition (a LayerNorm's
//! forward is nine ops, each with its own backward step and fresh buffer); softmax's forward
//! pass with a vectorised exponential, for attention's rows and for softmax over a tensor.

use rayon::prelude::*;

/// Rows per rayon task: enough work (about 32 K elements at width 384) to be worth a task.
fn rows_per_task(rows: usize, width: usize) -> usize {
    let threads = rayon::current_num_threads();
    (rows.div_ceil(threads)).clamp(1, (1 << 15) / width.max(1) + 1)
}

/// LayerNorm's gradients from its input `x` and output gradient `dy` (`rows × width`, row
/// major): `dy` is overwritten with the input's gradient, and `(dγ, dβ)` are returned.
///
/// With `x̂ = (x - μ)·r`, `r = 1/√(σ² + ε)` and `g = dy·γ`, the input's gradient is
/// `r·(g - mean(g) - x̂·mean(g·x̂))`; `dγ = Σ_rows dy·x̂`, `dβ = Σ_rows dy`. Statistics in f64
/// per row, as the forward's f32 ones would round differently anyway.
pub fn layer_norm_backward(
    x: &[f32],
    gamma: &[f32],
    dy: &mut [f32],
    epsilon: f64,
) -> (Vec<f32>, Vec<f32>) {
    let width = gamma.len();
    assert!(width > 0 && x.len() == dy.len() && x.len().is_multiple_of(width));
    let rows = x.len() / width;
    let task = rows_per_task(rows, width) * width;
    let zeros = || (vec![0.0f64; width], vec![0.0f64; width]);
    let parts: Vec<_> = (dy.par_chunks_mut(task).zip(x.par_chunks(task)))
        .map(|(dy, x)| {
            let (mut dgamma, mut dbeta) = zeros();
            for (dy, x) in dy.chunks_exact_mut(width).zip(x.chunks_exact(width)) {
                layer_norm_row(x, gamma, dy, epsilon, &mut dgamma, &mut dbeta);
            }
            (dgamma, dbeta)
        })
        .collect();
    // Summed in the tasks' order, not as rayon's reduce pairs them (which depends on which
    // thread stole what): the same sums on every run.
    let (dgamma, dbeta) = parts
        .into_iter()
        .fold(zeros(), |(mut ga, mut ba), (gb, bb)| {
            ga.iter_mut().zip(&gb).for_each(|(a, b)| *a += b);
            ba.iter_mut().zip(&bb).for_each(|(a, b)| *a += b);
            (ga, ba)
        });
    let narrow = |v: Vec<f64>| v.into_iter().map(|v| v as f32).collect();
    (narrow(dgamma), narrow(dbeta))
}

fn layer_norm_row(
    x: &[f32],
    gamma: &[f32],
    dy: &mut [f32],
    epsilon: f64,
    dgamma: &mut [f64],
    dbeta: &mut [f64],
) {
    let n = x.len() as f64;
    let mean = x.iter().map(|&v| v as f64).sum::<f64>() / n;
    let var = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    let r = 1.0 / (var + epsilon).sqrt();
    let (mut g_mean, mut gx_mean) = (0.0f64, 0.0f64);
    for i in 0..x.len() {
        let (xhat, d) = ((x[i] as f64 - mean) * r, dy[i] as f64);
        let g = d * gamma[i] as f64;
        g_mean += g;
        gx_mean += g * xhat;
        dgamma[i] += d * xhat;
        dbeta[i] += d;
    }
    let (g_mean, gx_mean) = (g_mean / n, gx_mean / n);
    for i in 0..x.len() {
        let xhat = (x[i] as f64 - mean) * r;
        let g = dy[i] as f64 * gamma[i] as f64;
        dy[i] = (r * (g - g_mean - xhat * gx_mean)) as f32;
    }
}

/// Softmax's input gradient from its output `y` and output gradient `dy` (rows of `width`),
/// written over `dy`: `y·(dy - Σ dy·y)` per row.
pub fn softmax_backward(y: &[f32], dy: &mut [f32], width: usize) {
    assert!(width > 0 && y.len() == dy.len() && y.len().is_multiple_of(width));
    let task = rows_per_task(y.len() / width, width) * width;
    (dy.par_chunks_mut(task).zip(y.par_chunks(task))).for_each(|(dy, y)| {
        for (dy, y) in dy.chunks_exact_mut(width).zip(y.chunks_exact(width)) {
            let dot: f32 = dy.iter().zip(y).map(|(d, y)| d * y).sum();
            dy.iter_mut().zip(y).for_each(|(d, &y)| *d = y * (*d - dot));
        }
    });
}

/// Softmax over each row of `width` of `x`, in place, rows shared out among rayon's threads:
/// [`softmax_rows`] with every key kept. burn-flex's softmax takes a scalar `exp` per element.
pub fn softmax(x: &mut [f32], width: usize) {
    assert!(width > 0 && x.len().is_multiple_of(width));
    let keep = vec![1.0f32; width];
    let task = rows_per_task(x.len() / width, width) * width;
    x.par_chunks_mut(task)
        .for_each(|rows| softmax_rows(rows, &keep));
}

/// Softmax over each row of `scores` (rows as long as `keep`), in place, for attention: key j
/// weighted by `keep[j]`, 1 to keep it and 0 to ignore it; a row with no key left (every key
/// ignored, or every score -∞) gives zeros, as burn-flex's attention kernel does. The
/// exponential is the vectorised one of GELU's kernel; one pass on the caller's thread
/// (attention shares out whole heads).
pub fn softmax_rows(scores: &mut [f32], keep: &[f32]) {
    assert!(!keep.is_empty() && scores.len().is_multiple_of(keep.len()));
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2() && is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { softmax_rows_avx512(scores, keep) };
    } else if crate::cpu::avx2() {
        // SAFETY: as above.
        return unsafe { softmax_rows_avx2(scores, keep) };
    }
    softmax_rows_lanes::<8, { crate::cpu::PORTABLE_FMA }>(scores, keep)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn softmax_rows_avx512(scores: &mut [f32], keep: &[f32]) {
    softmax_rows_lanes::<16, true>(scores, keep)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn softmax_rows_avx2(scores: &mut [f32], keep: &[f32]) {
    softmax_rows_lanes::<8, true>(scores, keep)
}

/// The rows with `LANES` running maxima and sums, written as blocks of independent lanes so
/// that both reductions and the exponential vectorise (a scalar `exp` per score cost as much
/// as a tenth of MiniLM's evaluation).
#[inline(always)]
fn softmax_rows_lanes<const LANES: usize, const FMA: bool>(scores: &mut [f32], keep: &[f32]) {
    let width = keep.len();
    let split = width / LANES * LANES;
    let (keep_blocks, keep_tail) = keep.split_at(split);
    let kept = |s: f32, k: f32| if k > 0.0 { s } else { f32::NEG_INFINITY };
    for row in scores.chunks_exact_mut(width) {
        let (blocks, tail) = row.split_at_mut(split);
        let mut lanes = [f32::NEG_INFINITY; LANES];
        for (s, k) in blocks
            .chunks_exact(LANES)
            .zip(keep_blocks.chunks_exact(LANES))
        {
            for l in 0..LANES {
                let v = kept(s[l], k[l]);
                lanes[l] = if v > lanes[l] { v } else { lanes[l] };
            }
        }
        let mut max = lanes.into_iter().fold(f32::NEG_INFINITY, f32::max);
        for (&s, &k) in tail.iter().zip(keep_tail) {
            max = max.max(kept(s, k));
        }
        if max == f32::NEG_INFINITY {
            row.fill(0.0);
            continue;
        }
        // An ignored key's score may exceed the maximum: its exponent is capped at 0 (NaN
        // passes), then weighted 0.
        let weight = |s: f32, k: f32| {
            let d = s - max;
            crate::cpu::exp_nonpositive::<FMA>(if d > 0.0 { 0.0 } else { d }) * k
        };
        let mut sums = [0.0f32; LANES];
        for (s, k) in blocks
            .chunks_exact_mut(LANES)
            .zip(keep_blocks.chunks_exact(LANES))
        {
            for l in 0..LANES {
                s[l] = weight(s[l], k[l]);
                sums[l] += s[l];
            }
        }
        let mut sum: f32 = sums.iter().sum();
        for (s, &k) in tail.iter_mut().zip(keep_tail) {
            *s = weight(*s, k);
            sum += *s;
        }
        let inverse = 1.0 / sum;
        row.iter_mut().for_each(|s| *s *= inverse);
    }
}

#[cfg(test)]
mod tests {
    use burn::backend::Flex;
    use burn::backend::flex::FlexTensor;
    use burn::nn::LayerNormConfig;
    use burn::tensor::activation::softmax;
    use burn::tensor::{Device, Distribution, Tensor, TensorData, Tolerance};

    use crate::extension::KernelBackend;
    use crate::ops::{layer_norm_backward_ops, softmax_backward_ops};
    use crate::testing::{grads, pools, spread};

    /// Under autodiff, `layer_norm` gives the values and the gradients (input, scale, bias) of
    /// Burn's LayerNorm, which steps back through its decomposition, for epsilons from 1e-12
    /// to 0.1 and rows split among threads.
    #[test]
    fn layer_norm_matches_burns_with_gradients() {
        let device = Device::flex().autodiff();
        let normal = Distribution::Normal(0.0, 1.0);
        let tol = Tolerance::rel_abs(1e-4, 1e-4);
        for epsilon in [1e-12, 1e-5, 0.1] {
            let mut norm = LayerNormConfig::new(48).with_epsilon(epsilon).init(&device);
            // A scale and shift that are not 1 and 0, so their roles show in the gradients.
            norm.gamma = norm.gamma.map(|g| g.random_like(normal).require_grad());
            norm.beta = norm
                .beta
                .map(|b| b.map(|b| b.random_like(normal).require_grad()));
            let beta = norm.beta.as_ref().unwrap();
            let x = Tensor::<3>::random([3, 70, 48], Distribution::Normal(2.0, 3.0), &device);
            let x = x.require_grad();
            pools(|| {
                let wrt: [&dyn Fn(&_) -> _; 3] = [
                    &|g| x.grad(g).unwrap().into_data(),
                    &|g| norm.gamma.grad(g).unwrap().into_data(),
                    &|g| beta.grad(g).unwrap().into_data(),
                ];
                let ours = grads(crate::layer_norm(&norm, epsilon, x.clone()), &device, &wrt);
                let burn = grads(norm.forward(x.clone()), &device, &wrt);
                for (o, b) in ours.iter().zip(&burn) {
                    o.assert_approx_eq::<f32>(b, tol);
                }
            });
        }
    }

    /// Under autodiff, `softmax_last` gives the values and input gradient of Burn's softmax,
    /// masked scores (-1e4) included.
    #[test]
    fn softmax_matches_burns_with_gradients() {
        let device = Device::flex().autodiff();
        let tol = Tolerance::rel_abs(1e-4, 1e-5);
        let x = Tensor::<4>::random([2, 3, 33, 40], Distribution::Normal(0.0, 2.0), &device);
        let masked = Tensor::<4>::random([2, 1, 1, 40], Distribution::Bernoulli(0.3), &device);
        let x = x.mask_fill(masked.bool().expand([2, 3, 33, 40]), -1.0e4);
        let x = x.require_grad();
        pools(|| {
            let wrt: [&dyn Fn(&_) -> _; 1] = [&|g| x.grad(g).unwrap().into_data()];
            let ours = grads(crate::softmax_last(x.clone()), &device, &wrt);
            let burn = grads(softmax(x.clone(), 3), &device, &wrt);
            for (o, b) in ours.iter().zip(&burn) {
                o.assert_approx_eq::<f32>(b, tol);
            }
        });
    }

    /// Attention's softmax rows against an f64 softmax, for each vector width and the dispatched
    /// one: widths around the lane counts, ignored keys at weight 0 (some scoring above the kept
    /// ones), a row with every key ignored zeros.
    #[test]
    fn softmax_rows_match_an_f64_softmax() {
        type Rows = fn(&mut [f32], &[f32]);
        let kernels: [(&str, Rows); 3] = [
            ("8 lanes", super::softmax_rows_lanes::<8, false>),
            ("16 lanes, fused", super::softmax_rows_lanes::<16, true>),
            ("dispatched", super::softmax_rows),
        ];
        for width in [1, 7, 16, 17, 40] {
            let scores: Vec<f32> = (0..3 * width)
                .map(|i| ((i * 7919) % 1000) as f32 / 40.0 - 12.0)
                .collect();
            let some: Vec<f32> = (0..width).map(|j| f32::from(j % 3 != 1)).collect();
            for keep in [vec![1.0; width], some, vec![0.0; width]] {
                let kept = |j: usize| keep[j] > 0.0;
                let all_ignored = !(0..width).any(kept);
                let mut expected = Vec::new();
                for row in scores.chunks(width) {
                    let max = (0..width).filter(|&j| kept(j)).map(|j| row[j] as f64);
                    let max = max.fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = (0..width)
                        .map(|j| {
                            if kept(j) {
                                (row[j] as f64 - max).exp()
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    let total: f64 = e.iter().sum();
                    expected.extend(e.iter().map(|e| if all_ignored { 0.0 } else { e / total }));
                }
                for (name, kernel) in kernels {
                    let mut ours = scores.clone();
                    kernel(&mut ours, &keep);
                    for (o, e) in ours.iter().zip(&expected) {
                        let close = (*o as f64 - e).abs() <= 1e-6 * e.abs() + 1e-7;
                        assert!(close, "{name}, width {width}: {o} against {e}");
                    }
                }
            }
        }
    }

    /// Flex's row kernels agree with the backward passes in Burn's ops that other backends run.
    #[test]
    fn the_row_kernels_agree_with_the_backward_passes_in_ops() {
        let tol = Tolerance::rel_abs(1e-4, 1e-5);
        let check = |a: FlexTensor, b: FlexTensor| {
            a.into_data().assert_approx_eq::<f32>(&b.into_data(), tol)
        };
        let (x, grad) = (spread([5, 14, 48], 1), spread([5, 14, 48], 2));
        let gamma = FlexTensor::from_data(TensorData::new(
            (0..48).map(|i| 0.5 + i as f32 / 48.0).collect::<Vec<f32>>(),
            [48],
        ));
        let ours = <Flex as KernelBackend>::layer_norm_backward(
            x.clone(),
            gamma.clone(),
            grad.clone(),
            1e-5,
        );
        let ops = layer_norm_backward_ops::<Flex>(x.clone(), gamma, grad.clone(), 1e-5);
        check(ours.0, ops.0);
        check(ours.1, ops.1);
        check(ours.2, ops.2);
        let y = <Flex as KernelBackend>::softmax_last(x);
        let ours = <Flex as KernelBackend>::softmax_last_backward(y.clone(), grad.clone());
        check(ours, softmax_backward_ops::<Flex>(y, grad));
    }
}
