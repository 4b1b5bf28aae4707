//! The calibration data a criterion of the pruning seam scores on: a seeded stratified subset
//! of the training images, in batches.

use burn::tensor::Device;
use data::{SubsetSize, stratified_subset};
use pruning::Calibration;
use train::ImageData;

use crate::error::HetDptError;

/// Images per calibration batch.
const CALIBRATION_BATCH: usize = 64;

/// `n` training images (at most all of them), stratified and drawn from `seed`; `what` names
/// the subset in errors.
pub(crate) fn calibration(
    data: ImageData<'_>,
    n: usize,
    seed: u64,
    device: &Device,
    what: &str,
) -> Result<Calibration, HetDptError> {
    let n = n.min(data.set.len());
    let picked = stratified_subset(&data.set.labels, SubsetSize::Total(n), seed)
        .map_err(|e| HetDptError::data(what, e))?;
    let batches = picked
        .chunks(CALIBRATION_BATCH)
        .map(|idx| {
            let images = data.batch(idx, None, device)?;
            Ok((images.into(), data.labels(idx, device)))
        })
        .collect::<Result<Vec<_>, HetDptError>>()?;
    Ok(Calibration {
        batches,
        ood: Vec::new(),
    })
}
