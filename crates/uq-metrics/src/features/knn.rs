//! Nearest-neighbour distance: the distance from an L2-normalised feature to its k-th nearest
//! L2-normalised training feature, by brute force.
//!
//! The distances are ranked by `|t|² − 2 q·t` (the query's `|q|²` is the same for every `t`).
//! An f32 product screens the candidates: the f32 key differs from the exact one by at most
//! `2E` (plus the f32 key's own rounding), with `E` a bound on the f32 dot product's error. At
//! least k features have a screened key at most the screened k-th smallest `K`, so the exact
//! k-th smallest is at most `K + 2E`, and a feature screened above `K + 4E` is exactly above
//! it: only those within `4E` can be among the k nearest. They are measured again in f64, so
//! the k-th smallest distance is the one an f64 product gives, up to f64 rounding. The f32
//! product runs at about twice the f64 one's speed, and the candidates are about k per query
//! (50.6 for k = 50 on the features bench).

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::linalg::{product_f32, rows};

/// Query rows per product: bounds the `[rows, n_train]` block of screened keys in memory.
const CHUNK: usize = 512;

/// Added to a norm before dividing by it, so that a zero feature stays zero.
pub const NORM_EPS: f64 = 1e-10;

pub(crate) struct Knn {
    /// `[n, D]`, each row of unit length (or zero).
    train: Array2<f64>,
    /// `train` rounded to f32, for the screening product.
    train_f32: Array2<f32>,
    /// Squared norms of the rows of `train` (1 up to rounding, or 0).
    train_sq: Vec<f64>,
    /// `train_sq` rounded to f32, for the screening keys.
    train_sq_f32: Vec<f32>,
    k: usize,
}

impl Knn {
    /// `k` is checked by the caller to be in `1..=n`.
    pub(crate) fn fit(x: &[f64], n: usize, d: usize, k: usize) -> Self {
        let train = normalised(rows(x, n, d));
        let train_sq = squared_norms(train.view());
        let train_f32 = train.mapv(|v| v as f32);
        let train_sq_f32 = train_sq.iter().map(|&v| v as f32).collect();
        Self {
            train,
            train_f32,
            train_sq,
            train_sq_f32,
            k,
        }
    }

    /// The distance of each of the `[n, D]` rows `x` to its k-th nearest training feature.
    pub(crate) fn score(&self, x: ArrayView2<'_, f64>) -> Vec<f64> {
        let query = normalised(x);
        let slack = screening_slack(x.ncols());
        let mut out = Vec::with_capacity(x.nrows());
        for block in query.axis_chunks_iter(Axis(0), CHUNK) {
            // `[rows, n_train]`, row-major: each query's screened dot products lie contiguous.
            let dots = product_f32(block.mapv(|v| v as f32).view(), self.train_f32.t());
            let kth = (0..block.nrows())
                .into_par_iter()
                .map_init(Vec::new, |keys, i| {
                    let q = block.row(i);
                    let q = q.as_slice().expect("rows of a fresh array are contiguous");
                    let screened = dots.row(i);
                    let screened = screened.as_slice().expect("contiguous");
                    self.kth_distance(q, screened, slack, keys)
                });
            out.par_extend(kth);
        }
        out
    }

    /// The k-th smallest distance from the unit query `q`, given its screened dot products with
    /// every training feature; `keys` is scratch space.
    fn kth_distance(&self, q: &[f64], screened: &[f32], slack: f32, keys: &mut Vec<f32>) -> f64 {
        let key = |(&dot, &t_sq): (&f32, &f32)| t_sq - 2.0 * dot;
        keys.clear();
        keys.extend(screened.iter().zip(&self.train_sq_f32).map(key));
        let (_, &mut kth, _) = keys.select_nth_unstable_by(self.k - 1, f32::total_cmp);
        let limit = kth + slack;
        let q_sq: f64 = q.iter().map(|v| v * v).sum();
        // The same key expression as above, so the same bits: every feature screened at or
        // below the k-th is kept.
        let mut exact: Vec<f64> = (screened.iter().zip(&self.train_sq_f32).enumerate())
            .filter(|&(_, pair)| key(pair) <= limit)
            .map(|(j, _)| {
                let dot: f64 = q.iter().zip(self.train.row(j)).map(|(a, b)| a * b).sum();
                q_sq + self.train_sq[j] - 2.0 * dot
            })
            .collect();
        let (_, &mut d2, _) = exact.select_nth_unstable_by(self.k - 1, f64::total_cmp);
        d2.max(0.0).sqrt()
    }
}

/// How far above the screened k-th smallest key a feature may be screened and still be among
/// the k nearest: `4E` for the dot product's error, and the f32 keys' own rounding (`|t|²` to
/// f32 and the subtraction, each within `3u` of keys at most 3 in size; the sum `K + slack`).
fn screening_slack(d: usize) -> f32 {
    let u = f64::from(f32::EPSILON) / 2.0;
    (4.0 * dot_error_bound(d) + 24.0 * u) as f32
}

/// A bound on `|q·t (f32) − q·t (exact)|` for rows of norm at most 1 in `d` dimensions: the
/// rounding of both operands to f32 (`2u`) and any order of the `d` products' f32 summation
/// (`γ_d = d u / (1 − d u)`), with u = 2⁻²⁴; a fifth more for the f64 arithmetic around it.
fn dot_error_bound(d: usize) -> f64 {
    let u = f64::from(f32::EPSILON) / 2.0;
    let gamma = d as f64 * u / (1.0 - d as f64 * u);
    1.2 * (2.0 * u + gamma * (1.0 + 3.0 * u))
}

/// Each row divided by its L2 norm plus [`NORM_EPS`].
fn normalised(x: ArrayView2<'_, f64>) -> Array2<f64> {
    let mut out = x.to_owned();
    for mut row in out.rows_mut() {
        let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
        row.mapv_inplace(|v| v / (norm + NORM_EPS));
    }
    out
}

fn squared_norms(x: ArrayView2<'_, f64>) -> Vec<f64> {
    (x.rows().into_iter())
        .map(|row| row.iter().map(|v| v * v).sum())
        .collect()
}
