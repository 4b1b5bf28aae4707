//! Predictions saved as `.npy` by any framework, loaded and checked: probabilities (or member
//! probabilities), logits, each error naming the file.

use std::path::Path;

use ndarray::{ArrayD, Axis, Dimension, Ix2, Ix3};
use uq_metrics::{Logits, MemberProbs, Probs};

use crate::error::CliError;
use crate::npy::read_floats;

/// Predictions of one side (ID or OOD): mean probabilities, members if any, logits if given.
pub struct Side {
    pub probs: Probs,
    pub members: Option<MemberProbs>,
    pub logits: Option<Logits>,
}

pub fn load_side(probs: &Path, logits: Option<&Path>) -> crate::error::Result<Side> {
    let array = read_floats(probs)?;
    let named = |e| CliError::at(probs.display(), e);
    let (probs_mean, members) = match array.ndim() {
        2 => (
            Probs::from_array(as_dim::<Ix2>(&array)).map_err(named)?,
            None,
        ),
        3 => {
            let members = MemberProbs::from_array(as_dim::<Ix3>(&array)).map_err(named)?;
            (members.mean(), Some(members))
        }
        _ => {
            return Err(format!(
                "{}: shape {:?}, expected [N, C] or [M, N, C]",
                probs.display(),
                array.shape()
            )
            .into());
        }
    };
    let logits = logits
        .map(|p| load_logits(p, probs_mean.n(), probs_mean.c()))
        .transpose()?;
    Ok(Side {
        probs: probs_mean,
        members,
        logits,
    })
}

/// A view of `array` with the number of axes `D` (the caller checked `ndim`).
pub fn as_dim<D: Dimension>(array: &ArrayD<f64>) -> ndarray::ArrayView<'_, f64, D> {
    (array.view().into_dimensionality::<D>())
        .unwrap_or_else(|_| unreachable!("the number of axes was checked"))
}

/// Logits [N, C], or [M, N, C] averaged over members, checked against the probabilities' shape.
fn load_logits(path: &Path, n: usize, c: usize) -> crate::error::Result<Logits> {
    let array = read_floats(path)?;
    let mean = match array.shape() {
        &[rows, cols] if (rows, cols) == (n, c) => as_dim::<Ix2>(&array).to_owned(),
        &[m, rows, cols] if (rows, cols) == (n, c) && m > 0 => (as_dim::<Ix3>(&array))
            .mean_axis(Axis(0))
            .unwrap_or_else(|| unreachable!("M > 0")),
        shape => {
            return Err(format!(
                "{}: shape {shape:?}, expected [{n}, {c}] or [M, {n}, {c}]",
                path.display()
            )
            .into());
        }
    };
    Logits::from_array(mean.view()).map_err(|e| CliError::at(path.display(), e))
}

/// Logits [N, C] (one member) or [M, N, C], as one matrix per member.
pub fn load_members(path: &Path) -> crate::error::Result<Vec<Logits>> {
    (per_member(path, &read_floats(path)?, "logits")?.iter())
        .map(|l| Logits::from_array(l.view()).map_err(|e| CliError::at(path.display(), e)))
        .collect()
}

/// The `[N, ·]` matrices of a 2-D array (one member) or of each member of a 3-D one.
pub fn per_member(
    path: &Path,
    array: &ArrayD<f64>,
    what: &str,
) -> crate::error::Result<Vec<ndarray::Array2<f64>>> {
    match array.ndim() {
        2 => Ok(vec![
            array
                .view()
                .into_dimensionality::<Ix2>()
                .map_err(|e| CliError::at(path.display(), e))?
                .to_owned(),
        ]),
        3 if array.shape()[0] > 0 => Ok((array.axis_iter(Axis(0)))
            .map(|m| m.into_dimensionality::<Ix2>().map(|m| m.to_owned()))
            .collect::<Result<_, _>>()
            .map_err(|e| CliError::at(path.display(), e))?),
        _ => Err(format!(
            "{}: shape {:?}, expected {what} [N, ·] or [M, N, ·]",
            path.display(),
            array.shape()
        )
        .into()),
    }
}
