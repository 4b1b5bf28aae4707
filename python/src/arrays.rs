//! Numpy arguments into `uq-metrics`' validated inputs, each error naming its argument.

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::prelude::*;
use serde::Serialize;
use uq_metrics::{Features, Logits, MemberProbs, MetricsError, Probs};

use crate::UqformerError;

/// `arg: <what went wrong>` as a `UqformerError`.
pub fn named(arg: &str, error: impl std::fmt::Display) -> PyErr {
    UqformerError::new_err(format!("{arg}: {error}"))
}

/// A metric's error as a `UqformerError` naming `arg`, or the option itself when the error is
/// about an option (`alpha`, `bins`, `margin`, `temperature`).
pub fn metric_error(arg: &str, error: MetricsError) -> PyErr {
    match &error {
        MetricsError::InvalidOption { name, .. } => named(name, error.to_string()),
        _ => named(arg, error),
    }
}

/// Probabilities `[N, C]`: finite, in [0, 1], rows summing to 1.
pub fn probs(arg: &str, a: &PyReadonlyArray2<'_, f64>) -> PyResult<Probs> {
    Probs::from_array(a.as_array()).map_err(|e| named(arg, e))
}

/// The `probs` and `labels` arguments of a metric.
pub fn probs_and_labels(
    p: &PyReadonlyArray2<'_, f64>,
    y: &PyReadonlyArray1<'_, i64>,
) -> PyResult<(Probs, Vec<usize>)> {
    Ok((probs("probs", p)?, labels("labels", y)?))
}

/// Member probabilities `[M, N, C]`, each row as [`probs`].
pub fn members(arg: &str, a: &PyReadonlyArray3<'_, f64>) -> PyResult<MemberProbs> {
    MemberProbs::from_array(a.as_array()).map_err(|e| named(arg, e))
}

/// Logits `[N, C]`, finite.
pub fn logits(arg: &str, a: &PyReadonlyArray2<'_, f64>) -> PyResult<Logits> {
    Logits::from_array(a.as_array()).map_err(|e| named(arg, e))
}

/// Each member's logits from `[M, N, C]`.
pub fn member_logits(arg: &str, a: &PyReadonlyArray3<'_, f64>) -> PyResult<Vec<Logits>> {
    let view = a.as_array();
    (view.outer_iter())
        .map(|member| Logits::from_array(member).map_err(|e| named(arg, e)))
        .collect()
}

/// Each member's features from `[M, N, D]`, finite.
pub fn member_features(arg: &str, a: &PyReadonlyArray3<'_, f64>) -> PyResult<Vec<Features>> {
    let view = a.as_array();
    (view.outer_iter())
        .map(|member| Features::from_array(member).map_err(|e| named(arg, e)))
        .collect()
}

/// Class labels `[N]`: non-negative (the metrics check them against C).
pub fn labels(arg: &str, a: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<usize>> {
    let view = a.as_array();
    (view.iter().enumerate())
        .map(|(i, &y)| {
            usize::try_from(y)
                .map_err(|_| named(arg, format!("[{i}] = {y}; expected a class index >= 0")))
        })
        .collect()
}

/// A vector of floats, every value finite (NaN or inf named by position).
pub fn finite(arg: &str, a: &PyReadonlyArray1<'_, f64>) -> PyResult<Vec<f64>> {
    let values = a.as_array().to_vec();
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(named(
            arg,
            format!("[{i}] = {}; expected a finite number", values[i]),
        )),
        None => Ok(values),
    }
}

/// The `id_scores` and `ood_scores` arguments of an OOD metric, each finite.
pub fn sides(
    id_scores: &PyReadonlyArray1<'_, f64>,
    ood_scores: &PyReadonlyArray1<'_, f64>,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    Ok((
        finite("id_scores", id_scores)?,
        finite("ood_scores", ood_scores)?,
    ))
}

/// A serialisable result as Python dicts, lists and floats (NaN stays NaN).
pub fn to_python<'py>(py: Python<'py>, value: &impl Serialize) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| UqformerError::new_err(e.to_string()))
}
