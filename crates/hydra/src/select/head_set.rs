//! What a member keeps: its heads per block, and the budget they are chosen under.

use burn::tensor::{Device, Tensor, TensorData};
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
        let mut values = vec![0.0f32; self.0.len() * heads];
        for (l, kept) in self.0.iter().enumerate() {
            for &h in kept {
                values[l * heads + h] = 1.0;
            }
        }
        Ok(Tensor::from_data(
            TensorData::new(values, [self.0.len(), heads]),
            device,
        ))
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
