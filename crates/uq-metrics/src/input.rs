//! Validated row-major inputs: probabilities `[N, C]`, member probabilities `[M, N, C]`, logits.

use std::marker::PhantomData;

use ndarray::{ArrayView2, ArrayView3};

use crate::error::{MetricsError, Result};

/// Default tolerance on `|sum of a probability row - 1|`; loose enough for softmax saved as f32.
pub const DEFAULT_SUM_TOL: f64 = 1e-4;

/// Class probabilities `[N, C]`, row-major, every row a distribution (checked on construction).
pub type Probs = Matrix<Distributions>;

/// Logits `[N, C]`, row-major, all finite. For an ensemble pass the member-mean logits.
pub type Logits = Matrix<LogitValues>;

/// Feature vectors `[N, D]`, row-major, all finite: what a classifier's head reads, for the
/// feature-space OOD detectors.
pub type Features = Matrix<FeatureValues>;

/// Values `[N, C]`, row-major, all finite, and whatever else `K` checks: what [`Probs`],
/// [`Logits`] and [`Features`] share, written once.
#[derive(Debug, Clone, PartialEq)]
pub struct Matrix<K> {
    data: Vec<f64>,
    n: usize,
    c: usize,
    kind: PhantomData<K>,
}

/// What sets one kind of [`Matrix`] apart: its name in error messages and what it checks beyond
/// shape and finiteness.
pub trait Kind {
    /// The input's name in error messages.
    const WHAT: &'static str;

    /// Checks `data`, rows of `c`, already of the right shape and finite.
    fn check(_data: &[f64], _c: usize) -> Result<()> {
        Ok(())
    }
}

/// The [`Kind`] of [`Probs`]: every value in [0, 1], every row summing to 1 within
/// [`DEFAULT_SUM_TOL`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distributions;

/// The [`Kind`] of [`Logits`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogitValues;

/// The [`Kind`] of [`Features`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeatureValues;

impl Kind for Distributions {
    const WHAT: &'static str = "probs";

    fn check(data: &[f64], c: usize) -> Result<()> {
        check_distributions(Self::WHAT, data, c, DEFAULT_SUM_TOL)
    }
}

impl Kind for LogitValues {
    const WHAT: &'static str = "logits";
}

impl Kind for FeatureValues {
    const WHAT: &'static str = "features";
}

impl<K: Kind> Matrix<K> {
    /// Checks shape and finiteness, and what the kind checks ([`Probs`]: range [0, 1] and row
    /// sums within [`DEFAULT_SUM_TOL`]).
    pub fn new(data: Vec<f64>, n: usize, c: usize) -> Result<Self> {
        check_matrix(K::WHAT, &data, &[n, c])?;
        K::check(&data, c)?;
        Ok(Self::trusted(data, n, c))
    }

    /// As [`Matrix::new`] from f32 data (widened exactly to f64).
    pub fn from_f32(data: &[f32], n: usize, c: usize) -> Result<Self> {
        Self::new(widen(data), n, c)
    }

    /// As [`Matrix::new`] from an `[N, C]` array (f32 or f64, any memory layout: read in
    /// logical order).
    pub fn from_array<A: Copy + Into<f64>>(values: ArrayView2<'_, A>) -> Result<Self> {
        let (n, c) = values.dim();
        Self::new(values.iter().map(|&x| x.into()).collect(), n, c)
    }

    /// The values as an `[N, C]` array view (no copy).
    pub fn view(&self) -> ArrayView2<'_, f64> {
        ArrayView2::from_shape((self.n, self.c), &self.data)
            .unwrap_or_else(|_| unreachable!("the shape was checked on construction"))
    }

    /// Number of samples N.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Iterates over the N rows.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, f64> {
        self.data.chunks_exact(self.c)
    }

    /// For values the caller has built to pass the checks (a softmax, a mean of
    /// distributions): no re-check needed.
    pub(crate) fn trusted(data: Vec<f64>, n: usize, c: usize) -> Self {
        debug_assert_eq!(data.len(), n * c);
        Self {
            data,
            n,
            c,
            kind: PhantomData,
        }
    }
}

impl Probs {
    /// As [`Probs::new`] with an explicit row-sum tolerance.
    pub fn with_tolerance(data: Vec<f64>, n: usize, c: usize, tol: f64) -> Result<Self> {
        check_matrix(Distributions::WHAT, &data, &[n, c])?;
        check_distributions(Distributions::WHAT, &data, c, tol)?;
        Ok(Self::trusted(data, n, c))
    }

    /// Number of classes C.
    pub fn c(&self) -> usize {
        self.c
    }

    /// The distribution of sample `i` (panics if `i >= n`, like slice indexing).
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.c..(i + 1) * self.c]
    }
}

impl Logits {
    /// Number of classes C.
    pub fn c(&self) -> usize {
        self.c
    }
}

impl Features {
    /// Feature width D.
    pub fn d(&self) -> usize {
        self.c
    }

    /// The row-major values.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }
}

/// Member class probabilities `[M, N, C]` (member-major), every row a distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberProbs {
    data: Vec<f64>,
    m: usize,
    n: usize,
    c: usize,
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
        Probs::trusted(data, self.n, self.c)
    }
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
