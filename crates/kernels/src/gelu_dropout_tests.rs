//! GELU and dropout: the vectorised kernels of [`crate::cpu`] against an independent f64 reference
//! and Burn's own ops, and the tensor API on top of them.

use crate::cpu as kernel;

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
    let y = crate::gelu(x.clone());
    x.to_data().assert_eq(&before, true);
    let tol = burn::tensor::Tolerance::absolute(2e-6);
    (y.into_data()).assert_approx_eq::<f32>(&activation::gelu(x.clone()).into_data(), tol);
    // Owned and consumed: the same values computed in place.
    let y_owned = crate::gelu(x.clone() * 1.0);
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
        let (y, dx) = grads_of(&|t| crate::gelu(t), transpose);
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
    use burn::tensor::{Device, Distribution, Tensor};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let device = Device::flex().autodiff();
    let x = Tensor::<2>::random([64, 48], Distribution::Uniform(1.0, 2.0), &device);
    let draw = |seed: u64| {
        device.seed(seed);
        let x = x.clone().require_grad();
        let y = x.clone() * crate::dropout_mask(&x, 0.75);
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
