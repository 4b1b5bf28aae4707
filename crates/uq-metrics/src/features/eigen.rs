//! The symmetric eigendecomposition: Householder reduction to a tridiagonal matrix, then
//! implicit QR steps with Wilkinson's shift (Golub & Van Loan, §8.3). Written here rather than
//! taken from faer, whose 25 crates were 73 of the ~740 CPU seconds of a fresh release build
//! (docs/performance.md, "First build"); the detectors decompose one covariance per fit, of
//! width at most a few hundred, where this takes well under a second.
//!
//! The orthogonal factor is kept transposed (`p = Qᵀ`, eigenvectors as rows while it is
//! built), so that every rotation and reflection updates contiguous rows.

use ndarray::{Array2, ArrayView2};

/// QR steps allowed per eigenvalue before the iteration is declared not to converge.
const MAX_STEPS_PER_VALUE: usize = 60;

/// The eigenvalues of a symmetric matrix, ascending, and its eigenvectors as columns; `None`
/// when the input is not finite or the iteration does not converge.
pub(crate) fn symmetric_eigen(s: ArrayView2<'_, f64>) -> Option<(Vec<f64>, Array2<f64>)> {
    let n = s.nrows();
    assert_eq!(n, s.ncols(), "a square matrix");
    if s.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let (mut diag, mut off, mut p) = tridiagonalise(s);
    diagonalise(&mut diag, &mut off, &mut p)?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| diag[a].total_cmp(&diag[b]));
    let values = order.iter().map(|&i| diag[i]).collect();
    let vectors = Array2::from_shape_fn((n, n), |(i, j)| p[[order[j], i]]);
    Some((values, vectors))
}

/// `s = Q T Qᵀ` with `T` tridiagonal: its diagonal, its off-diagonal (`T[i, i+1]`, length
/// `n - 1`, or 0 for an empty matrix) and `Qᵀ`. The lower triangle of `s` is read.
fn tridiagonalise(s: ArrayView2<'_, f64>) -> (Vec<f64>, Vec<f64>, Array2<f64>) {
    let n = s.nrows();
    let mut a = Array2::from_shape_fn((n, n), |(i, j)| if i >= j { s[[i, j]] } else { s[[j, i]] });
    let mut p = Array2::eye(n);
    for k in 0..n.saturating_sub(2) {
        // The reflection `H = I − 2 v vᵀ` on rows and columns k+1.. sends column k's part
        // below the diagonal to `(alpha, 0, ..., 0)`.
        let mut v: Vec<f64> = (k + 1..n).map(|i| a[[i, k]]).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm == 0.0 {
            continue;
        }
        let alpha = if v[0] > 0.0 { -norm } else { norm };
        v[0] -= alpha;
        let v_norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter_mut().for_each(|x| *x /= v_norm);
        // `H A H = A − 2 (v wᵀ + w vᵀ)` on the trailing block, `w = A v − (vᵀ A v) v`.
        let m = v.len();
        let data = a.as_slice_mut().expect("a is row-major and contiguous");
        let block_row = |i: usize| (k + 1 + i) * n + k + 1..(k + 2 + i) * n;
        let av: Vec<f64> = (0..m)
            .map(|i| data[block_row(i)].iter().zip(&v).map(|(x, y)| x * y).sum())
            .collect();
        let vav: f64 = v.iter().zip(&av).map(|(x, y)| x * y).sum();
        let w: Vec<f64> = av.iter().zip(&v).map(|(y, x)| y - vav * x).collect();
        for i in 0..m {
            let (vi, wi) = (v[i], w[i]);
            let row = &mut data[block_row(i)];
            for ((x, vj), wj) in row.iter_mut().zip(&v).zip(&w) {
                *x -= 2.0 * (vi * wj + wi * vj);
            }
        }
        // Only the diagonal and the subdiagonal are read from here on: row and column k need
        // no zeros written.
        a[[k + 1, k]] = alpha;
        // `Qᵀ ← H Qᵀ`.
        let mut u = vec![0.0; n];
        for (i, vi) in v.iter().enumerate() {
            u.iter_mut()
                .zip(p.row(k + 1 + i))
                .for_each(|(u, q)| *u += vi * q);
        }
        for (i, vi) in v.iter().enumerate() {
            let mut row = p.row_mut(k + 1 + i);
            row.iter_mut().zip(&u).for_each(|(q, u)| *q -= 2.0 * vi * u);
        }
    }
    let diag = (0..n).map(|i| a[[i, i]]).collect();
    let off = (1..n).map(|i| a[[i, i - 1]]).collect();
    (diag, off, p)
}

/// Diagonalises the symmetric tridiagonal matrix (`diag`, `off`) in place, rotating the rows
/// of `p` (`Qᵀ`) along; `None` when it does not converge.
fn diagonalise(diag: &mut [f64], off: &mut [f64], p: &mut Array2<f64>) -> Option<()> {
    let n = diag.len();
    let mut steps = 0;
    let mut hi = n.saturating_sub(1);
    while hi > 0 {
        for i in 0..hi {
            let scale = diag[i].abs() + diag[i + 1].abs();
            if off[i].abs() <= f64::EPSILON * scale || off[i].abs() < f64::MIN_POSITIVE {
                off[i] = 0.0;
            }
        }
        if off[hi - 1] == 0.0 {
            hi -= 1;
            continue;
        }
        steps += 1;
        if steps > MAX_STEPS_PER_VALUE * n {
            return None;
        }
        let lo = (0..hi - 1)
            .rev()
            .find(|&i| off[i] == 0.0)
            .map_or(0, |i| i + 1);
        qr_step(diag, off, p, lo, hi);
    }
    Some(())
}

/// One implicit QR step with Wilkinson's shift on the unreduced block `lo..=hi`: a rotation
/// in the plane (k, k+1) for each k chases the bulge down the band.
fn qr_step(diag: &mut [f64], off: &mut [f64], p: &mut Array2<f64>, lo: usize, hi: usize) {
    let delta = (diag[hi - 1] - diag[hi]) / 2.0;
    let b = off[hi - 1];
    let sign = if delta >= 0.0 { 1.0 } else { -1.0 };
    let shift = diag[hi] - b * b / (delta + sign * delta.hypot(b));
    let (mut x, mut z) = (diag[lo] - shift, off[lo]);
    for k in lo..hi {
        // `J = [[c, s], [−s, c]]` on coordinates (k, k+1) sends (x, z) to (r, 0); T ← J T Jᵀ.
        let r = x.hypot(z);
        let (c, s) = if r == 0.0 { (1.0, 0.0) } else { (x / r, z / r) };
        if k > lo {
            off[k - 1] = r;
        }
        let (a, b, d) = (diag[k], off[k], diag[k + 1]);
        diag[k] = c * c * a + 2.0 * c * s * b + s * s * d;
        diag[k + 1] = s * s * a - 2.0 * c * s * b + c * c * d;
        off[k] = c * s * (d - a) + (c * c - s * s) * b;
        if k + 1 < hi {
            // Row k+1's coupling to k+2 spills onto row k: the bulge the next rotation removes.
            x = off[k];
            z = s * off[k + 1];
            off[k + 1] *= c;
        }
        rotate_rows(p, k, c, s);
    }
}

/// Rows k and k+1 of `p` become `c·row_k + s·row_{k+1}` and `−s·row_k + c·row_{k+1}`.
fn rotate_rows(p: &mut Array2<f64>, k: usize, c: f64, s: f64) {
    let n = p.ncols();
    let data = p.as_slice_mut().expect("p is row-major and contiguous");
    let (upper, lower) = data[k * n..(k + 2) * n].split_at_mut(n);
    for (u, l) in upper.iter_mut().zip(lower.iter_mut()) {
        let (a, b) = (*u, *l);
        *u = c * a + s * b;
        *l = -s * a + c * b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// A random orthogonal matrix: Gram-Schmidt on seeded uniform columns.
    fn orthogonal(n: usize, rng: &mut StdRng) -> Array2<f64> {
        let mut q = Array2::<f64>::zeros((n, n));
        for j in 0..n {
            let mut col: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
            for _ in 0..2 {
                for k in 0..j {
                    let dot: f64 = (0..n).map(|i| q[[i, k]] * col[i]).sum();
                    (0..n).for_each(|i| col[i] -= dot * q[[i, k]]);
                }
            }
            let norm = col.iter().map(|x| x * x).sum::<f64>().sqrt();
            (0..n).for_each(|i| q[[i, j]] = col[i] / norm);
        }
        q
    }

    /// `Q diag(values) Qᵀ` with a random orthogonal `Q`: its spectrum is known exactly.
    fn with_spectrum(values: &[f64], seed: u64) -> Array2<f64> {
        let q = orthogonal(values.len(), &mut StdRng::seed_from_u64(seed));
        let n = values.len();
        Array2::from_shape_fn((n, n), |(i, j)| {
            (0..n).map(|k| q[[i, k]] * values[k] * q[[j, k]]).sum()
        })
    }

    /// Eigenvalues equal to the spectrum the matrix was built from (ascending), orthonormal
    /// eigenvectors, and `S V = V Λ`, each to `tol` relative to the largest eigenvalue.
    fn check(values: &[f64], seed: u64, tol: f64) {
        let s = with_spectrum(values, seed);
        let (got, v) = symmetric_eigen(s.view()).expect("converges");
        let mut want = values.to_vec();
        want.sort_by(f64::total_cmp);
        let scale = want.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= tol * scale, "eigenvalue {g}, expected {w}");
        }
        let n = values.len();
        for a in 0..n {
            for b in 0..n {
                let dot: f64 = (0..n).map(|i| v[[i, a]] * v[[i, b]]).sum();
                let expected = if a == b { 1.0 } else { 0.0 };
                assert!((dot - expected).abs() <= tol, "vᵀv [{a}, {b}] = {dot}");
            }
            for i in 0..n {
                let sv: f64 = (0..n).map(|k| s[[i, k]] * v[[k, a]]).sum();
                let err = (sv - got[a] * v[[i, a]]).abs();
                assert!(
                    err <= tol * scale,
                    "S v - λ v = {err} (vector {a}, row {i})"
                );
            }
        }
    }

    #[test]
    fn recovers_a_known_spectrum() {
        let values: Vec<f64> = (0..40).map(|i| (i as f64 - 13.5) * 0.37).collect();
        check(&values, 1, 1e-12);
    }

    #[test]
    fn recovers_repeated_zero_and_widely_spread_eigenvalues() {
        // A covariance's spectrum: a few large directions, many equal small ones, exact zeros.
        let mut values = vec![0.0; 6];
        values.extend([1e-9; 10]);
        values.extend([2.5; 8]);
        values.extend([1e4, 3e5, 7e6]);
        check(&values, 2, 1e-12);
    }

    #[test]
    fn diagonal_tiny_and_empty_matrices() {
        check(&[3.0, -1.0, 2.0], 3, 1e-13);
        check(&[5.0], 4, 1e-15);
        check(&[4.0, 4.0], 5, 1e-14);
        let diagonal = Array2::from_diag(&ndarray::arr1(&[2.0, -7.0, 0.5]));
        let (values, _) = symmetric_eigen(diagonal.view()).unwrap();
        assert_eq!(values, vec![-7.0, 0.5, 2.0]);
        let (values, vectors) = symmetric_eigen(Array2::<f64>::zeros((0, 0)).view()).unwrap();
        assert!(values.is_empty() && vectors.is_empty());
    }

    #[test]
    fn non_finite_input_is_refused() {
        let mut s = with_spectrum(&[1.0, 2.0, 3.0], 6);
        s[[1, 2]] = f64::NAN;
        assert!(symmetric_eigen(s.view()).is_none());
    }
}
