//! What members must share to be fused.

use backbone::{Classifier, StemLayout};

use crate::error::HydraError;

/// The shapes of a member that every other member must match (head counts may differ).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    /// The input embedding's shapes, by name (the backbone's [`backbone::Backbone::stem_layout`]).
    pub stem: StemLayout,
    pub d_model: usize,
    pub head_dim: usize,
    /// Per block, the MLP's hidden width (a neuron-pruned model's blocks differ; its members
    /// agree).
    pub d_mlp: Vec<usize>,
    pub classes: usize,
    pub layers: usize,
    /// Per block: pre-norm (ViT) or post-norm (BERT).
    pub norm_first: Vec<bool>,
}

impl Layout {
    /// The layout of member `m`, or why it cannot be fused.
    pub fn of(member: &Classifier, m: usize) -> Result<Self, HydraError> {
        let bad = |what: &str, value: String, expected: &str| {
            HydraError::invalid(format!("member {m} {what}"), value, expected)
        };
        // The blocks' width: the head may read another (CLIP zero-shot's projection).
        let [head_in, classes] = member.head().weight.dims();
        let layer = &member.encoder().layer;
        let d_model = layer.first().map_or(head_in, |b| b.norm1.gamma.dims()[0]);
        let stem = (member.backbone().stem_layout())
            .map_err(|e| HydraError::from(e.within(&format!("member {m} "))))?;
        let mut d_mlp = Vec::with_capacity(layer.len());
        let mut head_dim = None;
        for (l, block) in layer.iter().enumerate() {
            let mlp = [block.mlp.fc1.weight.dims(), block.mlp.fc2.weight.dims()];
            let hidden = mlp[0][1];
            if mlp != [[d_model, hidden], [hidden, d_model]] {
                return Err(bad(
                    &format!("block {l} mlp"),
                    format!("fc1 {:?}, fc2 {:?}", mlp[0], mlp[1]),
                    &format!("fc1 [{d_model}, F] and fc2 [F, {d_model}]"),
                ));
            }
            d_mlp.push(hidden);
            let a = &block.attention;
            let [_, width] = a.query.weight.dims();
            let dh = width / a.n_heads.max(1);
            if a.n_heads == 0 || dh * a.n_heads != width || head_dim.is_some_and(|h| h != dh) {
                return Err(bad(
                    &format!("block {l} attention"),
                    format!("{} heads over width {width}", a.n_heads),
                    "at least one head, all heads of the model of one size",
                ));
            }
            head_dim = Some(dh);
        }
        let head_dim =
            head_dim.ok_or_else(|| bad("encoder", "no blocks".into(), "at least one block"))?;
        if !d_model.is_multiple_of(head_dim) {
            return Err(bad(
                "head size",
                head_dim.to_string(),
                &format!("a divisor of the width {d_model}"),
            ));
        }
        Ok(Self {
            stem,
            d_model,
            head_dim,
            d_mlp,
            classes,
            layers: layer.len(),
            norm_first: layer.iter().map(|b| b.norm_first).collect(),
        })
    }
}
