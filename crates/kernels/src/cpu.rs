//! The element-wise kernels on f32 slices, split over rayon's threads in chunks.

use std::f32::consts::{FRAC_1_SQRT_2, LN_2, LOG2_E};
use std::mem::MaybeUninit;

use crate::adamw::AdamWStep;

/// Elements per rayon task of a long pass.
const CHUNK: usize = 1 << 15;

/// The fewest elements worth a task of their own (about 2 µs of GELU): a shorter pass shares
/// out among the threads in pieces of at least this many, so fused Hydra's GELU at batch 1
/// (3·17·256 elements) is split in two where a single model's (17·256) stays whole. A piece no
/// other thread has taken when the caller reaches it is run by the caller itself: a split costs
/// a wake-up call, not a wait.
const MIN_PIECE: usize = 1 << 12;

/// `x·Φ(x)` for every element, written over `x` (no buffer to allocate and zero).
pub fn gelu(x: &mut [f32]) {
    par_apply(x, None)
}

/// `x·Φ(x)` for every element of `x`, into a new buffer (`x` stays as it is).
pub fn gelu_into(x: &[f32]) -> Vec<f32> {
    use rayon::prelude::*;
    let kernel = into_kernels()
        .into_iter()
        .flatten()
        .next()
        .expect("the portable loop");
    let mut out: Vec<f32> = Vec::with_capacity(x.len());
    let size = piece_size(x.len());
    (out.spare_capacity_mut().par_chunks_mut(size))
        .zip(x.par_chunks(size))
        .for_each(|(out, x)| kernel(out, x));
    // SAFETY: the kernel wrote every element of the first `x.len()`.
    unsafe { out.set_len(x.len()) };
    out
}

/// `x·Φ(x)` for every element, written over `x`, on the caller's thread (the same bits as
/// [`gelu`]).
pub fn gelu_here(x: &mut [f32]) {
    widest()(x, None)
}

/// `g·(Φ(x) + x·φ(x))` for every element pair, written over `g`.
pub fn gelu_backward(x: &[f32], g: &mut [f32]) {
    assert_eq!(x.len(), g.len(), "gelu_backward: x and g differ in length");
    par_apply(g, Some(x))
}

/// One AdamW step over a parameter `p`, its gradient `g` and moments `m1`, `m2`, each
/// element's f32 operations in the order of Burn's AdamW (see `crate::adamw_step`).
pub fn adamw(p: &mut [f32], g: &[f32], [m1, m2]: [&mut [f32]; 2], s: &AdamWStep) {
    use rayon::prelude::*;
    assert!(g.len() == p.len() && m1.len() == p.len() && m2.len() == p.len());
    let (f1, f2) = (1.0 - s.beta_1, 1.0 - s.beta_2);
    let chunks = p.par_chunks_mut(CHUNK).zip(g.par_chunks(CHUNK));
    let moments = m1.par_chunks_mut(CHUNK).zip(m2.par_chunks_mut(CHUNK));
    chunks.zip(moments).for_each(|((p, g), (m1, m2))| {
        for i in 0..p.len() {
            let g = g[i];
            let a = m1[i] * s.beta_1 + g * f1;
            let b = m2[i] * s.beta_2 + (g * g) * f2;
            let delta = (a / s.correction_1) / ((b / s.correction_2).sqrt() + s.epsilon);
            (m1[i], m2[i]) = (a, b);
            p[i] = p[i] * s.keep - delta * s.lr;
        }
    });
}

/// An inverted-dropout mask of `len` elements: `1 / keep` where a counter-based hash of the
/// element's index and `key` falls below `keep · 2^32`, else 0. Element i's value depends only
/// on (i, key), so the threads' split does not change the mask.
pub fn dropout_mask(len: usize, keep: f64, key: u64) -> Vec<f32> {
    use rayon::prelude::*;
    let threshold = (keep * 4_294_967_296.0).min(u32::MAX as f64) as u32;
    let scale = (1.0 / keep) as f32;
    let mut out = vec![0.0f32; len];
    (out.par_chunks_mut(CHUNK).enumerate()).for_each(|(i, out)| {
        let start = i * CHUNK;
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { mask_avx2(start, out, threshold, scale, key) };
        }
        mask(start, out, threshold, scale, key)
    });
    out
}

/// One GELU pass (forward when `x` is `None`) over `buf`, chunk by chunk on rayon's threads.
fn par_apply(buf: &mut [f32], x: Option<&[f32]>) {
    use rayon::prelude::*;
    let kernel = widest();
    let size = piece_size(buf.len());
    (buf.par_chunks_mut(size).enumerate())
        .for_each(|(i, chunk)| kernel(chunk, x.map(|x| &x[i * size..i * size + chunk.len()])))
}

/// Elements per piece of a pass over `len`: at least `MIN_PIECE`, at most `CHUNK`, a multiple
/// of 16, and as many pieces as threads when that leaves them long enough.
fn piece_size(len: usize) -> usize {
    let pieces = (len / MIN_PIECE).clamp(1, rayon::current_num_threads());
    len.div_ceil(pieces).next_multiple_of(16).clamp(16, CHUNK)
}

/// A GELU pass over a chunk: forward on `buf`, or backward with `buf` holding the gradient.
pub(crate) type Kernel = fn(&mut [f32], Option<&[f32]>);

/// The GELU loops, the widest first, those this CPU lacks `None`: 16 lanes with AVX-512, 8
/// with AVX2 and FMA (both chosen at run time), and the portable one.
pub(crate) fn kernels() -> [Option<Kernel>; 3] {
    #[cfg(target_arch = "x86_64")]
    let simd: [Option<Kernel>; 2] = [
        (avx2() && is_x86_feature_detected!("avx512f")).then_some(|b, x| {
            // SAFETY: listed only where the CPU has the features it is compiled for.
            unsafe { apply_avx512(b, x) }
        }),
        avx2().then_some(|b, x| {
            // SAFETY: as above.
            unsafe { apply_avx2(b, x) }
        }),
    ];
    #[cfg(not(target_arch = "x86_64"))]
    let simd: [Option<Kernel>; 2] = [None, None];
    [simd[0], simd[1], Some(apply::<8, PORTABLE_FMA>)]
}

/// The widest GELU loop this CPU runs (the portable one is always there).
pub(crate) fn widest() -> Kernel {
    kernels()
        .into_iter()
        .flatten()
        .next()
        .expect("the portable loop")
}

/// The forward pass from a chunk of `x` into a chunk of fresh buffer.
pub(crate) type IntoKernel = fn(&mut [MaybeUninit<f32>], &[f32]);

/// The loops of [`gelu_into`], as [`kernels`] lists them.
pub(crate) fn into_kernels() -> [Option<IntoKernel>; 3] {
    #[cfg(target_arch = "x86_64")]
    let simd: [Option<IntoKernel>; 2] = [
        (avx2() && is_x86_feature_detected!("avx512f")).then_some(|o, x| {
            // SAFETY: listed only where the CPU has the features it is compiled for.
            unsafe { into_avx512(o, x) }
        }),
        avx2().then_some(|o, x| {
            // SAFETY: as above.
            unsafe { into_avx2(o, x) }
        }),
    ];
    #[cfg(not(target_arch = "x86_64"))]
    let simd: [Option<IntoKernel>; 2] = [None, None];
    [simd[0], simd[1], Some(into::<8, PORTABLE_FMA>)]
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn into_avx512(out: &mut [MaybeUninit<f32>], x: &[f32]) {
    into::<16, true>(out, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn into_avx2(out: &mut [MaybeUninit<f32>], x: &[f32]) {
    into::<8, true>(out, x)
}

/// Blocks of `LANES` independent elements, as in [`apply`].
#[inline(always)]
fn into<const LANES: usize, const FMA: bool>(out: &mut [MaybeUninit<f32>], x: &[f32]) {
    assert_eq!(out.len(), x.len(), "gelu_into: out and x differ in length");
    let blocks = x.len() / LANES * LANES;
    let (main, tail) = out.split_at_mut(blocks);
    let (x_main, x_tail) = x.split_at(blocks);
    for (o, x) in main.chunks_exact_mut(LANES).zip(x_main.chunks_exact(LANES)) {
        for l in 0..LANES {
            o[l].write(forward::<FMA>(x[l]));
        }
    }
    for (o, &x) in tail.iter_mut().zip(x_tail) {
        o.write(forward::<FMA>(x));
    }
}

/// Whether the CPU has AVX2 and FMA, which every vectorised kernel here needs.
#[cfg(target_arch = "x86_64")]
pub(super) fn avx2() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
fn apply_avx512(buf: &mut [f32], x: Option<&[f32]>) {
    apply::<16, true>(buf, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn apply_avx2(buf: &mut [f32], x: Option<&[f32]>) {
    apply::<8, true>(buf, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn mask_avx2(start: usize, out: &mut [f32], threshold: u32, scale: f32, key: u64) {
    mask(start, out, threshold, scale, key)
}

#[inline(always)]
fn mask(start: usize, out: &mut [f32], threshold: u32, scale: f32, key: u64) {
    let (k0, k1) = (key as u32, (key >> 32) as u32);
    for (j, o) in out.iter_mut().enumerate() {
        let i = (start + j) as u64;
        let h = fmix32(fmix32(i as u32 ^ k0).wrapping_add(k1 ^ (i >> 32) as u32));
        *o = if h < threshold { scale } else { 0.0 };
    }
}

/// MurmurHash3's 32-bit finaliser: every input bit affects every output bit.
#[inline(always)]
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Blocks of `LANES` independent elements, so the compiler vectorises the whole formula.
#[inline(always)]
fn apply<const LANES: usize, const FMA: bool>(buf: &mut [f32], x: Option<&[f32]>) {
    let blocks = buf.len() / LANES * LANES;
    let (main, tail) = buf.split_at_mut(blocks);
    match x {
        None => {
            for o in main.chunks_exact_mut(LANES) {
                for v in o.iter_mut() {
                    *v = forward::<FMA>(*v);
                }
            }
            for v in tail {
                *v = forward::<FMA>(*v);
            }
        }
        Some(x) => {
            let (x_main, x_tail) = x.split_at(blocks);
            for (g, x) in main.chunks_exact_mut(LANES).zip(x_main.chunks_exact(LANES)) {
                for l in 0..LANES {
                    g[l] *= derivative::<FMA>(x[l]);
                }
            }
            for (g, &x) in tail.iter_mut().zip(x_tail) {
                *g *= derivative::<FMA>(x);
            }
        }
    }
}

/// `(Φ(x), φ(x))`, the Gaussian CDF and density.
#[inline(always)]
fn cdf_pdf<const FMA: bool>(x: f32) -> (f32, f32) {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_7,
        -1.453_152,
        1.061_405_4,
    ];
    const INV_SQRT_2PI: f32 = 0.398_942_3;
    let z = x.abs() * FRAC_1_SQRT_2;
    let t = 1.0 / madd::<FMA>(P, z, 1.0);
    let poly = t * horner::<FMA>(t, &[A[4], A[3], A[2], A[1], A[0]]);
    // exp(-z²) = exp(-x²/2)
    let e = exp_nonpositive::<FMA>(-z * z);
    // 1 - erf(|x|/√2) = poly·e; Φ(x) = 1 - ½·poly·e for x ≥ 0, ½·poly·e below.
    let half_tail = 0.5 * poly * e;
    let cdf = if x >= 0.0 { 1.0 - half_tail } else { half_tail };
    (cdf, INV_SQRT_2PI * e)
}

#[inline(always)]
pub(crate) fn forward<const FMA: bool>(x: f32) -> f32 {
    x * cdf_pdf::<FMA>(x).0
}

#[inline(always)]
pub(crate) fn derivative<const FMA: bool>(x: f32) -> f32 {
    let (cdf, pdf) = cdf_pdf::<FMA>(x);
    madd::<FMA>(x, pdf, cdf)
}

/// `exp(v)` for `v ≤ 0` (relative error below 2e-7): `2^k · exp(r)`, `|r| ≤ ln2/2`.
#[inline(always)]
pub(super) fn exp_nonpositive<const FMA: bool>(v: f32) -> f32 {
    // Below -87 the result is under f32's smallest normal: 0 for these purposes (and 2^k
    // stays a normal number). NaN stays NaN: `max` would drop it, so test first.
    let v = if v < -87.0 { -87.0 } else { v };
    // Round to nearest by the 1.5·2^23 shift (vectorises, unlike `round`); the shifted
    // value's low mantissa bits are then k itself, read without a float-to-int conversion.
    const SHIFT: f32 = 12_582_912.0;
    let shifted = madd::<FMA>(v, LOG2_E, SHIFT);
    let k = shifted - SHIFT;
    let k_int = shifted.to_bits() as i32 - SHIFT.to_bits() as i32;
    // ln 2 split in two so that k·LN2_HI is exact.
    const LN2_HI: f32 = 0.693_145_75;
    let ln2_lo: f32 = LN_2 - LN2_HI;
    let r = madd::<FMA>(-k, ln2_lo, madd::<FMA>(-k, LN2_HI, v));
    // Taylor polynomial of degree 7 on |r| ≤ 0.347: truncation error < 5e-9.
    const TAYLOR: [f32; 8] = [
        1.0 / 5040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
        1.0,
    ];
    let p = horner::<FMA>(r, &TAYLOR);
    let scale = f32::from_bits(((k_int + 127) as u32) << 23);
    p * scale
}

/// Whether the portable loops fuse their multiply-adds: only where the whole build has FMA (as
/// on aarch64); on an x86 CPU without it a fused multiply-add is a library call per operation.
pub(super) const PORTABLE_FMA: bool = cfg!(target_feature = "fma");

/// `a·b + c`: one fused operation (one rounding) in the loops compiled with FMA, half the
/// instructions of a product and a sum on the exponential's and erf's polynomials.
#[inline(always)]
pub(super) fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// The polynomial with coefficients `c` (highest power first) at `x`, by Horner's rule.
#[inline(always)]
fn horner<const FMA: bool>(x: f32, c: &[f32]) -> f32 {
    c[1..].iter().fold(c[0], |p, &c| madd::<FMA>(p, x, c))
}
