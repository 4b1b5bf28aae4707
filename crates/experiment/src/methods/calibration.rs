//! The calibration data a pruning criterion scores on: the first validation samples in
//! batches, plus (images) their corrupted copies as OOD calibration data, so pruning never sees
//! a test set.

use data::{Corruption, Dataset, corrupt};
use pruning::Calibration;

use super::context::Context;
use crate::error::{ExperimentError, Result};

/// The first `samples` validation samples in batches, and their copies corrupted by `ood` at
/// severity 5 (images; text has no corruption, so no OOD calibration data).
pub(super) fn calibration(
    ctx: &Context<'_>,
    samples: usize,
    ood: Corruption,
) -> Result<Calibration> {
    let val = ctx.val;
    if val.is_empty() {
        return Err(ExperimentError::invalid(format!(
            "{} scores units on the validation split: set data.val_fraction > 0",
            ctx.kind
        )));
    }
    let n = samples.min(val.len());
    let indices: Vec<usize> = (0..n).collect();
    let shifted = match val {
        train::Data::Images(images) => {
            let set = corrupt(
                &images.set.subset(&indices),
                ood,
                5,
                ctx.seed_for("ood-calibration"),
            )?;
            Some(Dataset::Images(set))
        }
        train::Data::Disk(d) => {
            return Err(ExperimentError::invalid(format!(
                "{} corrupts its calibration images in memory, but {} is on disk",
                ctx.kind, d.set.name
            )));
        }
        train::Data::Text(_) => None,
    };
    let batch = ctx.eval_batch.min(128);
    let mut calibration = Calibration {
        batches: Vec::new(),
        ood: Vec::new(),
    };
    for chunk in indices.chunks(batch) {
        let input = val.batch(chunk, None, ctx.device)?;
        calibration
            .batches
            .push((input, val.labels(chunk, ctx.device)));
        if let Some(shifted) = &shifted {
            let ood = (ctx.prep.data(shifted)).batch(chunk, None, ctx.device)?;
            calibration.ood.push(ood);
        }
    }
    Ok(calibration)
}
