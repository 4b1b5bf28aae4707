//! Post-hoc temperature scaling and split conformal prediction sets.

use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
};
use pyo3::prelude::*;
use uq_metrics::{ConformalScore, Raps};

use crate::arrays::{labels, member_logits, metric_error, named, probs, to_python};

/// The T minimising the NLL of the members' mean `softmax(z_m / T)` on `logits` `[M, N, C]`
/// against `labels` (M = 1: a single model's temperature).
#[pyfunction]
fn fit_temperature(
    py: Python<'_>,
    logits: PyReadonlyArray3<'_, f64>,
    labels: PyReadonlyArray1<'_, i64>,
) -> PyResult<f64> {
    let z = member_logits("logits", &logits)?;
    let y = crate::arrays::labels("labels", &labels)?;
    py.detach(|| uq_metrics::fit_ensemble_temperature(&z, &y))
        .map_err(|e| metric_error("labels", e))
}

/// The members' `softmax(z_m / T)`, `[M, N, C]`, of `logits` `[M, N, C]`.
#[pyfunction]
fn scaled_members<'py>(
    py: Python<'py>,
    logits: PyReadonlyArray3<'py, f64>,
    temperature: f64,
) -> PyResult<Bound<'py, numpy::PyArray3<f64>>> {
    let z = member_logits("logits", &logits)?;
    let members =
        uq_metrics::scaled_members(&z, temperature).map_err(|e| metric_error("temperature", e))?;
    Ok(members.view().to_owned().into_pyarray(py))
}

/// A conformal score from its name, RAPS's parameters only for `raps`.
fn conformal_score(
    name: &str,
    penalty: Option<f64>,
    k_reg: Option<usize>,
) -> PyResult<ConformalScore> {
    let score: ConformalScore = name.parse().map_err(|e| metric_error("score", e))?;
    match score {
        ConformalScore::Raps(defaults) => Raps::new(
            penalty.unwrap_or(defaults.penalty),
            k_reg.unwrap_or(defaults.k_reg),
        )
        .map(ConformalScore::Raps)
        .map_err(|e| metric_error("penalty", e)),
        _ if penalty.is_some() || k_reg.is_some() => Err(named(
            "penalty",
            format!("penalty and k_reg are RAPS's; score '{name}' takes neither"),
        )),
        other => Ok(other),
    }
}

/// The non-conformity score `s(x_i, y_i)` of every sample.
#[pyfunction]
#[pyo3(signature = (probs, labels, score, penalty=None, k_reg=None))]
fn conformal_scores<'py>(
    py: Python<'py>,
    probs: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, i64>,
    score: &str,
    penalty: Option<f64>,
    k_reg: Option<usize>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let score = conformal_score(score, penalty, k_reg)?;
    let (p, y) = crate::arrays::probs_and_labels(&probs, &labels)?;
    let s = uq_metrics::conformal_scores(&p, &y, score).map_err(|e| metric_error("labels", e))?;
    Ok(s.into_pyarray(py))
}

/// The split-conformal threshold at level `alpha` from calibration predictions (+inf when there
/// are too few for `alpha`).
#[pyfunction]
#[pyo3(signature = (probs, labels, score, alpha, penalty=None, k_reg=None))]
fn conformal_threshold(
    probs: PyReadonlyArray2<'_, f64>,
    labels: PyReadonlyArray1<'_, i64>,
    score: &str,
    alpha: f64,
    penalty: Option<f64>,
    k_reg: Option<usize>,
) -> PyResult<f64> {
    let score = conformal_score(score, penalty, k_reg)?;
    let (p, y) = crate::arrays::probs_and_labels(&probs, &labels)?;
    uq_metrics::conformal_threshold(&p, &y, score, alpha).map_err(|e| metric_error("labels", e))
}

/// The prediction sets at threshold `threshold` as a boolean mask `[N, C]`.
#[pyfunction]
#[pyo3(signature = (probs, threshold, score, penalty=None, k_reg=None))]
fn prediction_sets<'py>(
    py: Python<'py>,
    probs: PyReadonlyArray2<'py, f64>,
    threshold: f64,
    score: &str,
    penalty: Option<f64>,
    k_reg: Option<usize>,
) -> PyResult<Bound<'py, PyArray2<bool>>> {
    let score = conformal_score(score, penalty, k_reg)?;
    let p = crate::arrays::probs("probs", &probs)?;
    let mut mask = ndarray::Array2::from_elem((p.n(), p.c()), false);
    for (i, set) in uq_metrics::prediction_sets(&p, threshold, score)
        .into_iter()
        .enumerate()
    {
        set.into_iter().for_each(|c| mask[[i, c]] = true);
    }
    Ok(mask.into_pyarray(py))
}

/// Calibrates on (`cal_probs`, `cal_labels`) and measures coverage and mean set size on
/// (`test_probs`, `test_labels`), as a dict.
#[pyfunction]
#[pyo3(signature = (cal_probs, cal_labels, test_probs, test_labels, score, alpha, penalty=None, k_reg=None))]
#[allow(clippy::too_many_arguments)]
fn conformal<'py>(
    py: Python<'py>,
    cal_probs: PyReadonlyArray2<'py, f64>,
    cal_labels: PyReadonlyArray1<'py, i64>,
    test_probs: PyReadonlyArray2<'py, f64>,
    test_labels: PyReadonlyArray1<'py, i64>,
    score: &str,
    alpha: f64,
    penalty: Option<f64>,
    k_reg: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let score = conformal_score(score, penalty, k_reg)?;
    let cal = probs("cal_probs", &cal_probs)?;
    let test = probs("test_probs", &test_probs)?;
    let (cal_y, test_y) = (
        labels("cal_labels", &cal_labels)?,
        labels("test_labels", &test_labels)?,
    );
    // Each side's labels checked on their own first, so the error names the argument at fault.
    uq_metrics::accuracy(&cal, &cal_y).map_err(|e| metric_error("cal_labels", e))?;
    uq_metrics::accuracy(&test, &test_y).map_err(|e| metric_error("test_labels", e))?;
    let report = uq_metrics::conformal(&cal, &cal_y, &test, &test_y, score, alpha)
        .map_err(|e| metric_error("test_probs", e))?;
    to_python(py, &report)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fit_temperature, m)?)?;
    m.add_function(wrap_pyfunction!(scaled_members, m)?)?;
    m.add_function(wrap_pyfunction!(conformal_scores, m)?)?;
    m.add_function(wrap_pyfunction!(conformal_threshold, m)?)?;
    m.add_function(wrap_pyfunction!(prediction_sets, m)?)?;
    m.add_function(wrap_pyfunction!(conformal, m)?)?;
    Ok(())
}
