//! A plan: which units of one kind each block keeps, applied through the backbone's gates or
//! made physical.

use backbone::{Classifier, Gates};
use burn::tensor::{Device, Tensor};
use serde::Serialize;

use crate::error::PruningError;
use crate::kept::{check_kept, kept_mask};
use crate::physical::{drop_blocks, prune_heads, prune_neurons};
use crate::scores::Scores;
use crate::units::UnitKind;

/// The units of `kind` each block keeps (indices within the block, ascending).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub kind: UnitKind,
    pub kept: Vec<Vec<usize>>,
}

/// A plan applied to a model: a smaller model, or the model with gates where the removal has no
/// physical form here.
#[derive(Debug, Clone)]
pub enum Applied {
    /// The pruned model itself (heads, neurons or blocks removed, each block keeping one).
    Physical(Classifier),
    /// The model with the removed units' gates at 0: branches and GELUs (HetDPT's merge makes
    /// those physical for a ViT), and plans that empty a block of its heads or neurons.
    Gated(Classifier, Box<Gates>),
}

impl Plan {
    /// The plan keeping every unit of `scores`' shape except the `removed` (block, unit) pairs.
    pub(crate) fn removing(kind: UnitKind, scores: &Scores, removed: &[(usize, usize)]) -> Self {
        let mut keep: Vec<Vec<bool>> = scores.0.iter().map(|row| vec![true; row.len()]).collect();
        for &(l, u) in removed {
            keep[l][u] = false;
        }
        let kept = (keep.iter())
            .map(|row| (0..row.len()).filter(|&u| row[u]).collect())
            .collect();
        Self { kind, kept }
    }

    /// Units kept, over all blocks.
    pub fn units_kept(&self) -> usize {
        self.kept.iter().map(Vec::len).sum()
    }

    /// The gate values `[L, U]`: 1 for kept units, 0 for removed ones (blocks of `model` must
    /// all have the same number U of units of the kind).
    pub fn mask(&self, model: &Classifier, device: &Device) -> Result<Tensor<2>, PruningError> {
        let counts = self.kind.per_block(model);
        check_kept(self.kind, &self.kept, &counts, false)?;
        let width = counts.first().copied().unwrap_or(0);
        if counts.iter().any(|&n| n != width) {
            return Err(PruningError::invalid(
                format!("{} units per block", self.kind),
                format!("{counts:?}"),
                "the same number in every block, to gate them",
            ));
        }
        Ok(kept_mask(&self.kept, width, device))
    }

    /// The plan applied to `model`: physical where this crate can make it so, else gated.
    pub fn apply(&self, model: &Classifier, device: &Device) -> Result<Applied, PruningError> {
        let every_block = self.kept.iter().all(|k| !k.is_empty());
        let physical = match self.kind {
            UnitKind::Head if every_block => Some(prune_heads(model, &self.kept)?),
            UnitKind::Neuron if every_block => Some(prune_neurons(model, &self.kept)?),
            UnitKind::Block if !self.kept.iter().all(Vec::is_empty) => {
                Some(drop_blocks(model, &self.kept)?)
            }
            _ => None,
        };
        Ok(match physical {
            Some(pruned) => Applied::Physical(pruned),
            None => {
                let gates = self.kind.gates(self.mask(model, device)?);
                Applied::Gated(model.clone(), Box::new(gates))
            }
        })
    }
}
