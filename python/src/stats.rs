//! Statistics over seeds: intervals, the paired tests, verdicts, Holm's adjustment and power.

use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use uq_metrics::{ClaimKind, Verdict, decide};

use crate::arrays::{metric_error, named, to_python};

/// Values over seeds; NaN is allowed (it makes the statistics NaN), infinities are not.
fn seeds(arg: &str, a: &PyReadonlyArray1<'_, f64>) -> PyResult<Vec<f64>> {
    let values = a.as_array().to_vec();
    match values.iter().position(|v| v.is_infinite()) {
        Some(i) => Err(named(
            arg,
            format!("[{i}] = {}; expected a finite number or NaN", values[i]),
        )),
        None => Ok(values),
    }
}

/// Mean, sample standard deviation and 95% Student-t interval of values over seeds.
#[pyfunction]
fn mean_ci<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyAny>> {
    to_python(py, &uq_metrics::mean_ci(&seeds("values", &values)?))
}

/// The interval of the per-seed differences `a[i] - b[i]`.
#[pyfunction]
fn paired<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'py, f64>,
    b: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let i =
        uq_metrics::paired(&seeds("a", &a)?, &seeds("b", &b)?).map_err(|e| metric_error("b", e))?;
    to_python(py, &i)
}

/// The paired t-test, TOST at `margin`, the detectable difference and the seeds needed, of
/// per-seed differences.
#[pyfunction]
fn paired_test<'py>(
    py: Python<'py>,
    diffs: PyReadonlyArray1<'py, f64>,
    margin: f64,
) -> PyResult<Bound<'py, PyAny>> {
    let t = uq_metrics::paired_test(&seeds("diffs", &diffs)?, margin)
        .map_err(|e| metric_error("margin", e))?;
    to_python(py, &t)
}

/// A declared claim's test on per-seed gains (method − reference, positive = better): its
/// p-value (one-sided for `non-inferior` and `superior`, TOST for `equivalent`), the 90%
/// interval of the mean gain and the seeds 80% power needs at the observed mean and spread.
#[pyfunction]
fn claim_test<'py>(
    py: Python<'py>,
    gains: PyReadonlyArray1<'py, f64>,
    kind: &str,
    margin: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let Some(kind) = ClaimKind::ALL.into_iter().find(|k| k.as_str() == kind) else {
        let known = ClaimKind::NAMES.join(", ");
        return Err(named("kind", format!("{kind:?}; expected one of {known}")));
    };
    let t = uq_metrics::claim_test(&seeds("gains", &gains)?, kind, margin)
        .map_err(|e| metric_error("margin", e))?;
    let out = PyDict::new(py);
    out.set_item("p", t.p)?;
    out.set_item("ci90_low", t.ci90_low)?;
    out.set_item("ci90_high", t.ci90_high)?;
    out.set_item("seeds_needed", t.seeds_needed)?;
    Ok(out)
}

/// `mean(x) / mean(y)` over paired values (the share of a reference's gain `y` that a method's
/// gain `x` keeps) and its 95% Fieller set: `kind` is `bounded` ([low, high]), `outside`
/// (every ratio but those strictly between low and high), `unbounded` or `undefined`.
#[pyfunction]
fn retained_share<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'py, f64>,
    y: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let r = uq_metrics::fieller(&seeds("x", &x)?, &seeds("y", &y)?)
        .map_err(|e| metric_error("y", e))?;
    let out = PyDict::new(py);
    out.set_item("estimate", r.estimate)?;
    out.set_item("set", to_python(py, &r.set)?)?;
    Ok(out)
}

/// The verdict (`better`, `worse`, `equivalent`, `inconclusive`, `n/a`) from the p-values.
#[pyfunction]
#[pyo3(name = "decide")]
fn verdict(
    mean_diff: f64,
    p_difference: f64,
    p_equivalence: f64,
    higher_is_better: bool,
) -> &'static str {
    decide(mean_diff, p_difference, p_equivalence, higher_is_better).as_str()
}

/// Holm's step-down adjustment of a family of p-values (NaN entries left out and kept NaN).
#[pyfunction]
fn holm(p_values: PyReadonlyArray1<'_, f64>) -> PyResult<Vec<f64>> {
    let p = seeds("p_values", &p_values)?;
    match p
        .iter()
        .position(|v| !v.is_nan() && !(0.0..=1.0).contains(v))
    {
        Some(i) => Err(named(
            "p_values",
            format!("[{i}] = {}; expected a p-value in [0, 1]", p[i]),
        )),
        None => Ok(uq_metrics::holm(&p)),
    }
}

/// The smallest true difference a paired t-test at ALPHA detects with probability POWER from
/// `n` seeds whose differences have standard deviation `std`.
#[pyfunction]
fn detectable_difference(std: f64, n: usize) -> f64 {
    uq_metrics::detectable_difference(std, n)
}

/// The fewest seeds (2 to MAX_SEEDS) whose detectable difference at `std` is at most `margin`.
#[pyfunction]
fn seeds_needed(std: f64, margin: f64) -> Option<usize> {
    uq_metrics::seeds_needed(std, margin)
}

/// The verdicts' names, in the order reports list them.
#[pyfunction]
fn verdicts() -> Vec<&'static str> {
    Verdict::ALL.iter().map(|v| v.as_str()).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(mean_ci, m)?)?;
    m.add_function(wrap_pyfunction!(paired, m)?)?;
    m.add_function(wrap_pyfunction!(paired_test, m)?)?;
    m.add_function(wrap_pyfunction!(claim_test, m)?)?;
    m.add_function(wrap_pyfunction!(retained_share, m)?)?;
    m.add_function(wrap_pyfunction!(verdict, m)?)?;
    m.add_function(wrap_pyfunction!(holm, m)?)?;
    m.add_function(wrap_pyfunction!(detectable_difference, m)?)?;
    m.add_function(wrap_pyfunction!(seeds_needed, m)?)?;
    m.add_function(wrap_pyfunction!(verdicts, m)?)?;
    m.add("MAX_SEEDS", uq_metrics::MAX_SEEDS)?;
    Ok(())
}
