//! Nearest-neighbour distance: the distance from an L2-normalised feature to its k-th nearest
//! L2-normalised training feature, by brute force as matrix products.

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::linalg::{product, rows};

/// Query rows per product: bounds the `[rows, n_train]` distance block in memory.
const CHUNK: usize = 512;

/// Added to a norm before dividing by it, so that a zero feature stays zero.
pub const NORM_EPS: f64 = 1e-10;

pub(crate) struct Knn {
    /// `[n, D]`, each row of unit length.
    train: Array2<f64>,
    /// Squared norms of the rows of `train` (1 up to rounding).
    train_sq: Vec<f64>,
    k: usize,
}

impl Knn {
    /// `k` is checked by the caller to be in `1..=n`.
    pub(crate) fn fit(x: &[f64], n: usize, d: usize, k: usize) -> Self {
        let train = normalised(rows(x, n, d));
        let train_sq = squared_norms(train.view());
        Self { train, train_sq, k }
    }

    /// The distance of each of the `[n, D]` rows `x` to its k-th nearest training feature.
    pub(crate) fn score(&self, x: ArrayView2<'_, f64>) -> Vec<f64> {
        let query = normalised(x);
        let mut out = Vec::with_capacity(x.nrows());
        for block in query.axis_chunks_iter(Axis(0), CHUNK) {
            // `[rows, n_train]`, row-major: each query's dot products lie contiguous.
            let dots = product(block, self.train.t());
            let query_sq = squared_norms(block);
            let kth = (0..block.nrows()).into_par_iter().map(|i| {
                let mut row: Vec<f64> = (dots.row(i).iter().zip(&self.train_sq))
                    .map(|(dot, t_sq)| query_sq[i] + t_sq - 2.0 * dot)
                    .collect();
                let (_, kth, _) = row.select_nth_unstable_by(self.k - 1, f64::total_cmp);
                kth.max(0.0).sqrt()
            });
            out.par_extend(kth);
        }
        out
    }
}

/// Each row divided by its L2 norm plus [`NORM_EPS`].
fn normalised(x: ArrayView2<'_, f64>) -> Array2<f64> {
    let norms: Vec<f64> = squared_norms(x).into_iter().map(f64::sqrt).collect();
    Array2::from_shape_fn(x.dim(), |(i, j)| x[[i, j]] / (norms[i] + NORM_EPS))
}

fn squared_norms(x: ArrayView2<'_, f64>) -> Vec<f64> {
    (x.rows().into_iter())
        .map(|row| row.iter().map(|v| v * v).sum())
        .collect()
}
