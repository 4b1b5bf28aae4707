//! Validated row-major inputs: probabilities `[N, C]`, member probabilities `[M, N, C]`, logits.

use ndarray::{ArrayView2, ArrayView3};

use crate::error::{MetricsError, Result};

/// Default tolerance on `|sum of a probability row - 1|`; loose enough for softmax saved as f32.
pub const DEFAULT_SUM_TOL: f64 = 1e-4;

/// Class probabilities `[N, C]`, row-major, every row a distribution (checked on construction).
#[derive(Debug, Clone, PartialEq)]
pub struct Probs {
    data: Vec<f64>,
    n: usize,
    c: usize,
}

/// Member class probabilities `[M, N, C]` (member-major), every row a distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberProbs {
    data: Vec<f64>,
    m: usize,
    n: usize,
    c: usize,
}

/// Logits `[N, C]`, row-major, all finite. For an ensemble pass the member-mean logits.
#[derive(Debug, Clone, PartialEq)]
pub struct Logits {
    data: Vec<f64>,
    n: usize,
    c: usize,
}

/// Feature vectors `[N, D]`, row-major, all finite: what a classifier's head reads, for the
/// feature-space OOD detectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    data: Vec<f64>,
    n: usize,
    d: usize,
}

impl Probs {
    /// Checks shape, finiteness, range [0, 1] and row sums within [`DEFAULT_SUM_TOL`].
    pub fn new(data: Vec<f64>, n: usize, c: usize) -> Result<Self> {
        Self::with_tolerance(data, n, c, DEFAULT_SUM_TOL)
    }

    /// As [`Probs::new`] with an explicit row-sum tolerance.
    pub fn with_tolerance(data: Vec<f64>, n: usize, c: usize, tol: f64) -> Result<Self> {
        check_matrix("probs", &data, &[n, c])?;
        check_distributions("probs", &data, c, tol)?;
        Ok(Self { data, n, c })
    }

    /// As [`Probs::new`] from f32 data (widened exactly to f64).
    pub fn from_f32(data: &[f32], n: usize, c: usize) -> Result<Self> {
        Self::new(widen(data), n, c)
    }

    /// As [`Probs::new`] from an `[N, C]` array (f32 or f64, any memory layout: read in
    /// logical order).
    pub fn from_array<A: Copy + Into<f64>>(probs: ArrayView2<'_, A>) -> Result<Self> {
        let (n, c) = probs.dim();
        Self::new(probs.iter().map(|&p| p.into()).collect(), n, c)
    }

    /// The probabilities as an `[N, C]` array view (no copy).
    pub fn view(&self) -> ArrayView2<'_, f64> {
        view2(&self.data, self.n, self.c)
    }

    /// Number of samples N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of classes C.
    pub fn c(&self) -> usize {
        self.c
    }

    /// The distribution of sample `i` (panics if `i >= n`, like slice indexing).
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.c..(i + 1) * self.c]
    }

    /// Iterates over the N rows.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f64> {
        self.data.chunks_exact(self.c)
    }

    /// For rows the caller has built as distributions (a softmax): no re-check needed.
    pub(crate) fn trusted(data: Vec<f64>, n: usize, c: usize) -> Self {
        debug_assert_eq!(data.len(), n * c);
        Self { data, n, c }
    }
}

impl MemberProbs {
    /// Checks shape, finiteness, range [0, 1] and row sums within [`DEFAULT_SUM_TOL`].
    pub fn new(data: Vec<f64>, m: usize, n: usize, c: usize) -> Result<Self> {
        Self::with_tolerance(data, m, n, c, DEFAULT_SUM_TOL)
    }

    /// As [`MemberProbs::new`] with an explicit row-sum tolerance.
    pub fn with_tolerance(data: Vec<f64>, m: usize, n: usize, c: usize, tol: f64) -> Result<Self> {
        check_matrix("member probs", &data, &[m, n, c])?;
        check_distributions("member probs", &data, c, tol)?;
        Ok(Self { data, m, n, c })
    }

    /// As [`MemberProbs::new`] from f32 data (widened exactly to f64).
    pub fn from_f32(data: &[f32], m: usize, n: usize, c: usize) -> Result<Self> {
        Self::new(widen(data), m, n, c)
    }

    /// As [`MemberProbs::new`] from an `[M, N, C]` array (f32 or f64, any memory layout).
    pub fn from_array<A: Copy + Into<f64>>(probs: ArrayView3<'_, A>) -> Result<Self> {
        let (m, n, c) = probs.dim();
        Self::new(probs.iter().map(|&p| p.into()).collect(), m, n, c)
    }

    /// The member probabilities as an `[M, N, C]` array view (no copy).
    pub fn view(&self) -> ArrayView3<'_, f64> {
        ArrayView3::from_shape((self.m, self.n, self.c), &self.data)
            .unwrap_or_else(|_| unreachable!("the shape was checked on construction"))
    }

    /// Number of members M.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Number of samples N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of classes C.
    pub fn c(&self) -> usize {
        self.c
    }

    /// The distribution member `k` gives sample `i` (panics if out of range).
    pub fn row(&self, k: usize, i: usize) -> &[f64] {
        let start = (k * self.n + i) * self.c;
        &self.data[start..start + self.c]
    }

    /// The ensemble prediction: the mean over members, `[N, C]`.
    pub fn mean(&self) -> Probs {
        let mut data = vec![0.0; self.n * self.c];
        for member in self.data.chunks_exact(self.n * self.c) {
            for (acc, p) in data.iter_mut().zip(member) {
                *acc += p;
            }
        }
        let inv = 1.0 / self.m as f64;
        data.iter_mut().for_each(|p| *p *= inv);
        // A mean of distributions within tolerance is one too: no re-check needed.
        Probs {
            data,
            n: self.n,
            c: self.c,
        }
    }
}

impl Logits {
    /// Checks shape and finiteness.
    pub fn new(data: Vec<f64>, n: usize, c: usize) -> Result<Self> {
        check_matrix("logits", &data, &[n, c])?;
        Ok(Self { data, n, c })
    }

    /// As [`Logits::new`] from f32 data (widened exactly to f64).
    pub fn from_f32(data: &[f32], n: usize, c: usize) -> Result<Self> {
        Self::new(widen(data), n, c)
    }

    /// As [`Logits::new`] from an `[N, C]` array (f32 or f64, any memory layout).
    pub fn from_array<A: Copy + Into<f64>>(logits: ArrayView2<'_, A>) -> Result<Self> {
        let (n, c) = logits.dim();
        Self::new(logits.iter().map(|&x| x.into()).collect(), n, c)
    }

    /// The logits as an `[N, C]` array view (no copy).
    pub fn view(&self) -> ArrayView2<'_, f64> {
        view2(&self.data, self.n, self.c)
    }

    /// Number of samples N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of classes C.
    pub fn c(&self) -> usize {
        self.c
    }

    /// Iterates over the N rows of C logits.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f64> {
        self.data.chunks_exact(self.c)
    }
}

impl Features {
    /// Checks shape and finiteness.
    pub fn new(data: Vec<f64>, n: usize, d: usize) -> Result<Self> {
        check_matrix("features", &data, &[n, d])?;
        Ok(Self { data, n, d })
    }

    /// As [`Features::new`] from f32 data (widened exactly to f64).
    pub fn from_f32(data: &[f32], n: usize, d: usize) -> Result<Self> {
        Self::new(widen(data), n, d)
    }

    /// As [`Features::new`] from an `[N, D]` array (f32 or f64, any memory layout).
    pub fn from_array<A: Copy + Into<f64>>(features: ArrayView2<'_, A>) -> Result<Self> {
        let (n, d) = features.dim();
        Self::new(features.iter().map(|&x| x.into()).collect(), n, d)
    }

    /// The features as an `[N, D]` array view (no copy).
    pub fn view(&self) -> ArrayView2<'_, f64> {
        view2(&self.data, self.n, self.d)
    }

    /// Number of samples N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Feature width D.
    pub fn d(&self) -> usize {
        self.d
    }

    /// The row-major values.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }
}

/// `data` (checked on construction to hold `n * c` values) as a row-major `[n, c]` view.
fn view2(data: &[f64], n: usize, c: usize) -> ArrayView2<'_, f64> {
    ArrayView2::from_shape((n, c), data)
        .unwrap_or_else(|_| unreachable!("the shape was checked on construction"))
}

fn widen(data: &[f32]) -> Vec<f64> {
    data.iter().map(|&x| f64::from(x)).collect()
}

/// Non-empty dims, `data.len()` equal to their product, every value finite.
fn check_matrix(what: &'static str, data: &[f64], dims: &[usize]) -> Result<()> {
    if dims.contains(&0) {
        return Err(MetricsError::Empty { what });
    }
    let expected = dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or(MetricsError::ShapeMismatch {
            what,
            expected: usize::MAX,
            found: data.len(),
        })?;
    if data.len() != expected {
        return Err(MetricsError::ShapeMismatch {
            what,
            expected,
            found: data.len(),
        });
    }
    check_finite(what, data)
}

/// Every value finite.
pub(crate) fn check_finite(what: &'static str, data: &[f64]) -> Result<()> {
    match data.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(MetricsError::NonFinite {
            what,
            index,
            value: data[index],
        }),
        None => Ok(()),
    }
}

/// Every value in [0, 1], every row of `c` summing to 1 within `tol`.
fn check_distributions(what: &'static str, data: &[f64], c: usize, tol: f64) -> Result<()> {
    if !(tol.is_finite() && tol >= 0.0) {
        return Err(MetricsError::InvalidOption {
            name: "tol",
            value: tol.to_string(),
            expected: "a finite number >= 0",
        });
    }
    if let Some(index) = data.iter().position(|p| !(0.0..=1.0).contains(p)) {
        return Err(MetricsError::NotProbability {
            what,
            index,
            value: data[index],
        });
    }
    for (row, chunk) in data.chunks_exact(c).enumerate() {
        let sum: f64 = chunk.iter().sum();
        if (sum - 1.0).abs() > tol {
            return Err(MetricsError::NotNormalised {
                what,
                row,
                sum,
                tol,
            });
        }
    }
    Ok(())
}
