//! The dense linear algebra the detectors need, on faer (multithreaded products and the
//! symmetric eigendecomposition, both as fast as LAPACK's here), over row-major slices.

use faer::{Accum, Mat, MatRef, Par, Side};

/// A row-major `[n, d]` slice as a matrix view (no copy).
pub(crate) fn rows(data: &[f64], n: usize, d: usize) -> MatRef<'_, f64> {
    MatRef::from_row_major_slice(data, n, d)
}

/// `a · b`, on every thread of the current rayon pool.
pub(crate) fn product(a: MatRef<'_, f64>, b: MatRef<'_, f64>) -> Mat<f64> {
    let mut out = Mat::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(out.as_mut(), Accum::Replace, a, b, 1.0, Par::rayon(0));
    out
}

/// `xᵀ x / n` of the `[n, d]` rows `x` (the covariance of rows already centred).
pub(crate) fn scatter(x: MatRef<'_, f64>) -> Mat<f64> {
    let mut s = Mat::zeros(x.ncols(), x.ncols());
    let scale = 1.0 / x.nrows() as f64;
    faer::linalg::matmul::matmul(
        s.as_mut(),
        Accum::Replace,
        x.transpose(),
        x,
        scale,
        Par::rayon(0),
    );
    s
}

/// The eigenvalues of a symmetric matrix, ascending, and its eigenvectors as columns; `None`
/// when the iteration does not converge (non-finite input).
pub(crate) fn symmetric_eigen(s: MatRef<'_, f64>) -> Option<(Vec<f64>, Mat<f64>)> {
    let evd = s.self_adjoint_eigen(Side::Lower).ok()?;
    let values: Vec<f64> = (0..s.nrows()).map(|i| evd.S()[i]).collect();
    Some((values, evd.U().to_owned()))
}

/// Each row of the `[n, d]` rows `x` minus the row `centre[k]` of its group `groups[i]`.
pub(crate) fn centred(x: &[f64], d: usize, centres: &[Vec<f64>], groups: &[usize]) -> Mat<f64> {
    Mat::from_fn(groups.len(), d, |i, j| x[i * d + j] - centres[groups[i]][j])
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
