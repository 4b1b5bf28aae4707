//! Classification, calibration, selective-classification and OOD metrics, the output scores and
//! ensemble diversity.

use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3,
};
use pyo3::prelude::*;
use uq_metrics::{MetricsError, Options, Score, ScoreInput};

use crate::arrays::{finite, metric_error, to_python};

/// One metric of probabilities `[N, C]` against labels `[N]` by name: `accuracy`, `nll`,
/// `brier`, or with `bins` `ece`, `adaptive_ece`, `classwise_ece`.
#[pyfunction]
fn metric(
    name: &str,
    probs: PyReadonlyArray2<'_, f64>,
    labels: PyReadonlyArray1<'_, i64>,
    bins: usize,
) -> PyResult<f64> {
    let (p, y) = crate::arrays::probs_and_labels(&probs, &labels)?;
    let value = match name {
        "accuracy" => uq_metrics::accuracy(&p, &y),
        "nll" => uq_metrics::nll(&p, &y),
        "brier" => uq_metrics::brier(&p, &y),
        "ece" => uq_metrics::ece(&p, &y, bins),
        "adaptive_ece" => uq_metrics::adaptive_ece(&p, &y, bins),
        "classwise_ece" => uq_metrics::classwise_ece(&p, &y, bins),
        _ => {
            return Err(crate::arrays::named(
                "name",
                format!("unknown metric '{name}'"),
            ));
        }
    };
    value.map_err(|e| metric_error("labels", e))
}

/// Every classification metric at once, as a dict.
#[pyfunction]
fn evaluate<'py>(
    py: Python<'py>,
    probs: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, i64>,
    bins: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (p, y) = crate::arrays::probs_and_labels(&probs, &labels)?;
    let options = Options {
        bins,
        adaptive_bins: bins,
    };
    let report = py
        .detach(|| uq_metrics::evaluate(&p, &y, &options))
        .map_err(|e| metric_error("labels", e))?;
    to_python(py, &report)
}

/// The equal-width bins of a reliability diagram, as dicts.
#[pyfunction]
fn reliability_diagram<'py>(
    py: Python<'py>,
    probs: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray1<'py, i64>,
    bins: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let (p, y) = crate::arrays::probs_and_labels(&probs, &labels)?;
    let bins =
        uq_metrics::reliability_diagram(&p, &y, bins).map_err(|e| metric_error("labels", e))?;
    to_python(py, &bins)
}

/// Selective classification from an uncertainty per sample and whether it was right.
fn selective(
    uncertainty: &PyReadonlyArray1<'_, f64>,
    correct: &PyReadonlyArray1<'_, bool>,
    metric: fn(&[f64], &[bool]) -> uq_metrics::Result<f64>,
) -> PyResult<f64> {
    let u = finite("uncertainty", uncertainty)?;
    metric(&u, &correct.as_array().to_vec()).map_err(|e| match e {
        MetricsError::ShapeMismatch { .. } => metric_error("correct", e),
        _ => metric_error("uncertainty", e),
    })
}

/// Area under the risk-coverage curve (ties by expectation).
#[pyfunction]
fn aurc(
    uncertainty: PyReadonlyArray1<'_, f64>,
    correct: PyReadonlyArray1<'_, bool>,
) -> PyResult<f64> {
    selective(&uncertainty, &correct, uq_metrics::aurc)
}

/// Area under the generalized risk-coverage curve (ties by expectation).
#[pyfunction]
fn augrc(
    uncertainty: PyReadonlyArray1<'_, f64>,
    correct: PyReadonlyArray1<'_, bool>,
) -> PyResult<f64> {
    selective(&uncertainty, &correct, uq_metrics::augrc)
}

/// An OOD metric's error, naming the side it is about.
fn ood_error(e: MetricsError) -> PyErr {
    match &e {
        MetricsError::MissingClass { missing: "ID" } => metric_error("id_scores", e),
        _ => metric_error("ood_scores", e),
    }
}

/// AUROC, AUPR-In, AUPR-Out and FPR95 from one sort, OOD positive, higher score = more OOD.
#[pyfunction]
fn ood_report<'py>(
    py: Python<'py>,
    id_scores: PyReadonlyArray1<'py, f64>,
    ood_scores: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let (id, ood) = crate::arrays::sides(&id_scores, &ood_scores)?;
    let report = py
        .detach(|| uq_metrics::ood_report(&id, &ood))
        .map_err(ood_error)?;
    to_python(py, &report)
}

/// The ROC curve as `[K, 2]` rows of (false-positive rate, true-positive rate).
#[pyfunction]
fn roc_curve<'py>(
    py: Python<'py>,
    id_scores: PyReadonlyArray1<'py, f64>,
    ood_scores: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (id, ood) = crate::arrays::sides(&id_scores, &ood_scores)?;
    let points = uq_metrics::roc_curve(&id, &ood).map_err(ood_error)?;
    let flat: Vec<f64> = points.iter().flat_map(|&(x, y)| [x, y]).collect();
    let array = ndarray::Array2::from_shape_vec((points.len(), 2), flat)
        .unwrap_or_else(|_| unreachable!("two values a point"));
    Ok(array.into_pyarray(py))
}

/// The AUROC's spread over `resamples` bootstrap resamples of both sets, seeded.
#[pyfunction]
fn auroc_bootstrap<'py>(
    py: Python<'py>,
    id_scores: PyReadonlyArray1<'py, f64>,
    ood_scores: PyReadonlyArray1<'py, f64>,
    resamples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let (id, ood) = crate::arrays::sides(&id_scores, &ood_scores)?;
    let r = py
        .detach(|| uq_metrics::auroc_bootstrap(&id, &ood, resamples, seed))
        .map_err(ood_error)?;
    to_python(py, &r)
}

/// The members' mean probabilities `[N, C]` of `[M, N, C]`, every row checked; errors name
/// the argument `name`.
#[pyfunction]
#[pyo3(signature = (members, name="members"))]
fn member_mean<'py>(
    py: Python<'py>,
    members: PyReadonlyArray3<'py, f64>,
    name: &str,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let m = crate::arrays::members(name, &members)?;
    Ok(m.mean().view().to_owned().into_pyarray(py))
}

/// Disagreement, mutual information, pairwise KL and, with labels, the ensemble's gain.
#[pyfunction]
#[pyo3(signature = (members, labels=None))]
fn diversity<'py>(
    py: Python<'py>,
    members: PyReadonlyArray3<'py, f64>,
    labels: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<Bound<'py, PyAny>> {
    let m = crate::arrays::members("members", &members)?;
    let y = labels
        .map(|l| crate::arrays::labels("labels", &l))
        .transpose()?;
    let d = uq_metrics::diversity(&m, y.as_deref()).map_err(|e| match e {
        MetricsError::LabelOutOfRange { .. } | MetricsError::ShapeMismatch { .. } => {
            metric_error("labels", e)
        }
        _ => metric_error("members", e),
    })?;
    to_python(py, &d)
}

/// An output-space OOD score per sample (higher = more OOD) from what it needs.
#[pyfunction]
#[pyo3(signature = (name, probs=None, members=None, logits=None))]
fn score<'py>(
    py: Python<'py>,
    name: &str,
    probs: Option<PyReadonlyArray2<'py, f64>>,
    members: Option<PyReadonlyArray3<'py, f64>>,
    logits: Option<PyReadonlyArray2<'py, f64>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let kind: Score = name.parse().map_err(|e| metric_error("name", e))?;
    let p = probs
        .map(|a| crate::arrays::probs("probs", &a))
        .transpose()?;
    let m = members
        .map(|a| crate::arrays::members("members", &a))
        .transpose()?;
    let z = logits
        .map(|a| crate::arrays::logits("logits", &a))
        .transpose()?;
    let input = ScoreInput {
        probs: p.as_ref(),
        members: m.as_ref(),
        logits: z.as_ref(),
    };
    let s = uq_metrics::score(kind, &input).map_err(|e| match &e {
        MetricsError::MissingInput { needs, .. } if needs.contains("logits") => {
            metric_error("logits", e)
        }
        MetricsError::MissingInput { needs, .. } if needs.starts_with("member") => {
            metric_error("members", e)
        }
        MetricsError::MissingInput { .. } => metric_error("probs", e),
        _ => metric_error("name", e),
    })?;
    Ok(s.into_pyarray(py))
}

/// The output scores' names and one-line descriptions.
#[pyfunction]
fn scores() -> Vec<(&'static str, &'static str)> {
    Score::ALL
        .iter()
        .map(|s| (s.name(), s.about()))
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(metric, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(reliability_diagram, m)?)?;
    m.add_function(wrap_pyfunction!(aurc, m)?)?;
    m.add_function(wrap_pyfunction!(augrc, m)?)?;
    m.add_function(wrap_pyfunction!(ood_report, m)?)?;
    m.add_function(wrap_pyfunction!(roc_curve, m)?)?;
    m.add_function(wrap_pyfunction!(auroc_bootstrap, m)?)?;
    m.add_function(wrap_pyfunction!(member_mean, m)?)?;
    m.add_function(wrap_pyfunction!(diversity, m)?)?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(scores, m)?)?;
    Ok(())
}
