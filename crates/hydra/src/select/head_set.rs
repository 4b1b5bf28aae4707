//! What a member keeps: its heads per block, and the budget they are chosen under.

use burn::tensor::{Device, Tensor};
use serde::{Deserialize, Serialize};

use crate::error::HydraError;
use pruning::UnitKind;

/// Which heads each block keeps (indices, sorted ascending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeadSet(pub Vec<Vec<usize>>);

impl HeadSet {
    /// The `[L, H]` mask: 1 for kept heads, 0 for dropped ones (for `Gates.heads`).
    pub fn mask(&self, heads: usize, device: &Device) -> Result<Tensor<2>, HydraError> {
        self.check(&vec![heads; self.0.len()], false)?;
        Ok(pruning::kept_mask(&self.0, heads, device))
    }

    /// Checks one row per block, indices strictly increasing and below the block's head count,
    /// and (when `non_empty`) at least one head per block.
    pub(crate) fn check(&self, heads: &[usize], non_empty: bool) -> Result<(), HydraError> {
        Ok(pruning::check_kept(
            UnitKind::Head,
            &self.0,
            heads,
            non_empty,
        )?)
    }
}

/// How many heads a member keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Keep {
    /// This many heads in every block.
    PerBlock(usize),
    /// This many heads in all, at least one per block.
    Global(usize),
}
