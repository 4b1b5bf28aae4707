//! `uqformer._native`: the Python face of `uq-metrics`. Every function takes float64 / int64
//! numpy arrays of the rank it names (the `uqformer` package coerces and checks the arguments
//! first), computes in Rust with the GIL released where the work is large, and returns plain
//! Python values, dicts or numpy arrays. Errors are `uqformer.UqformerError` (a `ValueError`)
//! naming the argument.

mod arrays;
mod calibration;
mod detectors;
mod metrics;
mod stats;

use pyo3::prelude::*;

pyo3::create_exception!(
    _native,
    UqformerError,
    pyo3::exceptions::PyValueError,
    "Bad input to a uqformer function; the message names the argument."
);

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("UqformerError", m.py().get_type::<UqformerError>())?;
    m.add("DEFAULT_BINS", uq_metrics::DEFAULT_BINS)?;
    m.add("NLL_EPS", uq_metrics::NLL_EPS)?;
    m.add("ALPHA", uq_metrics::ALPHA)?;
    m.add("POWER", uq_metrics::POWER)?;
    metrics::register(m)?;
    detectors::register(m)?;
    calibration::register(m)?;
    stats::register(m)?;
    Ok(())
}
