//! The dense linear algebra the detectors need, over row-major f64 arrays: products on gemm
//! (the matrix kernels Burn's CPU backend already builds, on every thread of rayon's pool) and
//! the symmetric eigendecomposition of [`eigen`](super::eigen).

use ndarray::{Array2, ArrayView2};

pub(crate) use super::eigen::symmetric_eigen;

/// A row-major `[n, d]` slice as a matrix view (no copy).
pub(crate) fn rows(data: &[f64], n: usize, d: usize) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((n, d), data).expect("the caller passes n · d values")
}

/// `scale · a · b`, on every thread of the current rayon pool (f64, or f32 for KNN's
/// candidate search).
fn scaled_product<T: 'static + Copy + Default>(
    a: ArrayView2<'_, T>,
    b: ArrayView2<'_, T>,
    scale: T,
) -> Array2<T> {
    let ((m, k), n) = (a.dim(), b.ncols());
    assert_eq!(
        k,
        b.nrows(),
        "product of [{m}, {k}] and [{}, {n}]",
        b.nrows()
    );
    let mut out = Array2::from_elem((m, n), T::default());
    let (sa, sb) = (a.strides(), b.strides());
    // SAFETY: the pointers and strides are those of the views, valid for their shapes; `out`
    // is a fresh row-major [m, n] array that nothing else borrows; `read_dst` is false, so its
    // values (and the first scale, `alpha`) are not read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            sa[1],
            sa[0],
            b.as_ptr(),
            sb[1],
            sb[0],
            T::default(),
            scale,
            false,
            false,
            false,
            gemm::Parallelism::Rayon(0),
        );
    }
    out
}

/// `a · b`, on every thread of the current rayon pool.
pub(crate) fn product(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>) -> Array2<f64> {
    scaled_product(a, b, 1.0)
}

/// `a · b` in f32, on every thread of the current rayon pool.
pub(crate) fn product_f32(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>) -> Array2<f32> {
    scaled_product(a, b, 1.0)
}

/// `xᵀ x / n` of the `[n, d]` rows `x` (the covariance of rows already centred).
pub(crate) fn scatter(x: ArrayView2<'_, f64>) -> Array2<f64> {
    scaled_product(x.t(), x, 1.0 / x.nrows() as f64)
}

/// Each row of the `[n, d]` rows `x` minus the row `centre[k]` of its group `groups[i]`.
pub(crate) fn centred(x: &[f64], d: usize, centres: &[Vec<f64>], groups: &[usize]) -> Array2<f64> {
    Array2::from_shape_fn((groups.len(), d), |(i, j)| {
        x[i * d + j] - centres[groups[i]][j]
    })
}

/// The mean row of each group `0..k` of the `[n, d]` rows `x` (`groups[i]` is row i's); `None`
/// for a group without rows.
pub(crate) fn group_means(
    x: &[f64],
    d: usize,
    groups: &[usize],
    k: usize,
) -> Vec<Option<Vec<f64>>> {
    let mut sums = vec![vec![0.0; d]; k];
    let mut counts = vec![0usize; k];
    for (row, &g) in x.chunks_exact(d).zip(groups) {
        counts[g] += 1;
        sums[g].iter_mut().zip(row).for_each(|(s, v)| *s += v);
    }
    (sums.into_iter().zip(counts))
        .map(|(sum, count)| (count > 0).then(|| sum.iter().map(|s| s / count as f64).collect()))
        .collect()
}
