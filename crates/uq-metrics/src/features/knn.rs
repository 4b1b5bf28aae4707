//! Nearest-neighbour distance: the distance from an L2-normalised feature to its k-th nearest
//! L2-normalised training feature, by brute force as matrix products.

use faer::{Mat, MatRef};

use super::linalg::{product, rows};

/// Query rows per product: bounds the `[rows, n_train]` distance block in memory.
const CHUNK: usize = 256;

/// Added to a norm before dividing by it, so that a zero feature stays zero.
pub const NORM_EPS: f64 = 1e-10;

pub(crate) struct Knn {
    /// `[n, D]`, each row of unit length.
    train: Mat<f64>,
    /// Squared norms of the rows of `train` (1 up to rounding).
    train_sq: Vec<f64>,
    k: usize,
}

impl Knn {
    /// `k` is checked by the caller to be in `1..=n`.
    pub(crate) fn fit(x: &[f64], n: usize, d: usize, k: usize) -> Self {
        let train = normalised(rows(x, n, d));
        let train_sq = squared_norms(train.as_ref());
        Self { train, train_sq, k }
    }

    /// The distance of each of the `[n, D]` rows `x` to its k-th nearest training feature.
    pub(crate) fn score(&self, x: MatRef<'_, f64>) -> Vec<f64> {
        let query = normalised(x);
        let mut out = Vec::with_capacity(x.nrows());
        let mut row = vec![0.0; self.train.nrows()];
        for start in (0..query.nrows()).step_by(CHUNK) {
            let block = query
                .as_ref()
                .subrows(start, CHUNK.min(query.nrows() - start));
            let dots = product(block, self.train.as_ref().transpose());
            for (i, q_sq) in squared_norms(block).into_iter().enumerate() {
                for (j, r) in row.iter_mut().enumerate() {
                    *r = q_sq + self.train_sq[j] - 2.0 * dots[(i, j)];
                }
                let (_, kth, _) = row.select_nth_unstable_by(self.k - 1, f64::total_cmp);
                out.push(kth.max(0.0).sqrt());
            }
        }
        out
    }
}

/// Each row divided by its L2 norm plus [`NORM_EPS`].
fn normalised(x: MatRef<'_, f64>) -> Mat<f64> {
    let norms: Vec<f64> = squared_norms(x).into_iter().map(f64::sqrt).collect();
    Mat::from_fn(x.nrows(), x.ncols(), |i, j| {
        x[(i, j)] / (norms[i] + NORM_EPS)
    })
}

fn squared_norms(x: MatRef<'_, f64>) -> Vec<f64> {
    (0..x.nrows())
        .map(|i| (0..x.ncols()).map(|j| x[(i, j)].powi(2)).sum())
        .collect()
}
