//! Feature-space OOD detectors as fit / score objects, one detector per ensemble member.

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray3};
use pyo3::prelude::*;
use uq_metrics::{Detector, DetectorOptions, FittedMembers, Shrinkage};

use crate::arrays::{member_features, member_logits, metric_error, named};

/// A detector fitted on training features `[M, N, D]` (M = 1 for one model): each member's
/// features are scored by that member's detector, and a sample's score is the members' mean.
#[pyclass(module = "uqformer._native", name = "FittedDetector", frozen)]
pub struct FittedDetector {
    inner: FittedMembers,
}

#[pymethods]
impl FittedDetector {
    /// The detector's name.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.detector().name()
    }

    /// The number of members fitted.
    #[getter]
    fn members(&self) -> usize {
        self.inner.m()
    }

    /// The OOD score (higher = more OOD) of every row of `features` `[M, N, D]`; `logits`
    /// `[M, N, C]` for ViM.
    #[pyo3(signature = (features, logits=None))]
    fn score<'py>(
        &self,
        py: Python<'py>,
        features: PyReadonlyArray3<'py, f64>,
        logits: Option<PyReadonlyArray3<'py, f64>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let x = member_features("features", &features)?;
        let z = logits.map(|l| member_logits("logits", &l)).transpose()?;
        let s = py
            .detach(|| self.inner.score(&x, z.as_deref()))
            .map_err(|e| metric_error("features", e))?;
        Ok(s.into_pyarray(py))
    }
}

/// `auto`, `none`, `ledoit_wolf`, or a fixed weight in [0, 1].
fn shrinkage(value: &Bound<'_, PyAny>) -> PyResult<Shrinkage> {
    if let Ok(weight) = value.extract::<f64>() {
        return match (0.0..=1.0).contains(&weight) {
            true => Ok(Shrinkage::Fixed(weight)),
            false => Err(named(
                "shrinkage",
                format!("{weight}; expected a weight in [0, 1]"),
            )),
        };
    }
    match value.extract::<String>().as_deref() {
        Ok("auto") => Ok(Shrinkage::Auto),
        Ok("none") => Ok(Shrinkage::None),
        Ok("ledoit_wolf") => Ok(Shrinkage::LedoitWolf),
        _ => Err(named(
            "shrinkage",
            format!("{value}; expected 'auto', 'none', 'ledoit_wolf' or a weight in [0, 1]"),
        )),
    }
}

/// Fits `name` on training `features` `[M, N, D]` with their `labels` `[N]` (and training
/// `logits` `[M, N, C]` for ViM).
#[pyfunction]
#[pyo3(signature = (name, features, labels, logits=None, k=50, vim_dim=None, shrinkage=None))]
#[allow(clippy::too_many_arguments)]
fn fit_detector(
    py: Python<'_>,
    name: &str,
    features: PyReadonlyArray3<'_, f64>,
    labels: PyReadonlyArray1<'_, i64>,
    logits: Option<PyReadonlyArray3<'_, f64>>,
    k: usize,
    vim_dim: Option<usize>,
    shrinkage: Option<Bound<'_, PyAny>>,
) -> PyResult<FittedDetector> {
    let detector: Detector = name.parse().map_err(|e| metric_error("name", e))?;
    let options = DetectorOptions {
        knn_k: k,
        vim_dim,
        shrinkage: shrinkage
            .map(|s| self::shrinkage(&s))
            .transpose()?
            .unwrap_or_default(),
    };
    let x = member_features("features", &features)?;
    let y = crate::arrays::labels("labels", &labels)?;
    let z = logits.map(|l| member_logits("logits", &l)).transpose()?;
    let inner = py
        .detach(|| uq_metrics::fit_members(detector, &x, &y, z.as_deref(), &options))
        .map_err(|e| metric_error("features", e))?;
    Ok(FittedDetector { inner })
}

/// The detectors' names and one-line descriptions.
#[pyfunction]
fn detectors() -> Vec<(&'static str, &'static str)> {
    Detector::ALL
        .iter()
        .map(|d| (d.name(), d.about()))
        .collect()
}

/// ViM's default principal subspace dimension for features of width `d`.
#[pyfunction]
fn default_vim_dim(d: usize) -> usize {
    uq_metrics::default_vim_dim(d)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FittedDetector>()?;
    m.add_function(wrap_pyfunction!(fit_detector, m)?)?;
    m.add_function(wrap_pyfunction!(detectors, m)?)?;
    m.add_function(wrap_pyfunction!(default_vim_dim, m)?)?;
    Ok(())
}
