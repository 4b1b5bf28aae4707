//! Lists of kept units, one row per block: the check every list passes, and its gate values.

use burn::tensor::{Device, Tensor, TensorData};

use crate::error::PruningError;
use crate::units::UnitKind;

/// Checks one row per block, indices strictly increasing and below the block's count of
/// `kind` units, and (when `non_empty`) at least one unit per block.
pub fn check_kept(
    kind: UnitKind,
    kept: &[Vec<usize>],
    counts: &[usize],
    non_empty: bool,
) -> Result<(), PruningError> {
    if kept.len() != counts.len() {
        return Err(PruningError::invalid(
            format!("kept {kind} units"),
            format!("{} blocks", kept.len()),
            format!("{} blocks, as in the model", counts.len()),
        ));
    }
    for (l, (row, &n)) in kept.iter().zip(counts).enumerate() {
        let sorted = row.windows(2).all(|w| w[0] < w[1]);
        if !sorted || row.iter().any(|&i| i >= n) || (non_empty && row.is_empty()) {
            let least = if non_empty { "at least one, " } else { "" };
            return Err(PruningError::invalid(
                format!("kept {kind} units of block {l}"),
                format!("{row:?}"),
                format!("{least}distinct sorted indices below {n}"),
            ));
        }
    }
    Ok(())
}

/// The gate values `[L, width]` of `kept` (checked, each block with `width` units): 1 for a
/// kept unit, 0 for a removed one.
pub fn kept_mask(kept: &[Vec<usize>], width: usize, device: &Device) -> Tensor<2> {
    let mut values = vec![0.0f32; kept.len() * width];
    for (l, row) in kept.iter().enumerate() {
        for &u in row {
            values[l * width + u] = 1.0;
        }
    }
    Tensor::from_data(TensorData::new(values, [kept.len(), width]), device)
}
