//! Fused Vision Transformer members' input end: one grouped patch embedding (with CLIP's
//! LayerNorm before the blocks), and each member's final LayerNorm on its class token (with CLIP
//! zero-shot's projection).

use burn::module::{Module, Param};
use burn::nn::{LayerNorm, Linear};
use burn::tensor::Tensor;

use crate::error::BackboneError;
use crate::grouped::{GroupedLayerNorm, GroupedLinear, all_equal};
use crate::input::Input;
use crate::traits::GroupedStem;
use crate::unit::normalize;
use crate::vit::VisionTransformer;

/// ViT members: grouped patch embedding, class tokens and positions, stored once (G = 1) when
/// every member has the same ones, else per member (G = M); readout = each member's final
/// LayerNorm on its class token.
#[derive(Module, Debug)]
pub struct PatchStem {
    /// Patch embedding as a grouped FC on flattened patches: `[G, C·p·p, D]`.
    pub patch: GroupedLinear,
    /// `[G, 1, 1, D]`.
    pub cls_token: Param<Tensor<4>>,
    /// `[G, 1, T, D]`.
    pub pos_embed: Param<Tensor<4>>,
    /// CLIP's LayerNorm before the blocks, G groups as the embedding.
    pub pre_norm: Option<GroupedLayerNorm>,
    /// The final LayerNorms.
    pub norm: GroupedLayerNorm,
    /// CLIP zero-shot: each member's projection `[M, D, E]` after its final norm, the result
    /// normalised.
    pub projection: Option<GroupedLinear>,
    pub patch_size: usize,
}

impl PatchStem {
    /// The members' patch embeddings, class tokens, positions and final norms (members of one
    /// stem layout).
    pub(crate) fn of(members: &[&VisionTransformer]) -> Result<Self, BackboneError> {
        let norms: Vec<_> = members.iter().map(|v| &v.norm).collect();
        let shared = all_equal(members, |v| {
            let bias = v.patch_embed.bias.as_ref().map(|b| b.val().into_data());
            let tensors = [v.cls_token.val(), v.pos_embed.val()].map(Tensor::into_data);
            let pre_norm = (v.pre_norm.as_ref()).map(|n| {
                let beta = n.beta.as_ref().map(|b| b.val().into_data());
                (n.gamma.val().into_data(), beta)
            });
            (
                v.patch_embed.weight.val().into_data(),
                bias,
                tensors,
                pre_norm,
            )
        });
        let embeddings = if shared { &members[..1] } else { members };
        let (patch_w, patch_b) = embeddings
            .iter()
            .map(|v| {
                let w = v.patch_embed.weight.val(); // [D, C, p, p]
                let [d, ..] = w.dims();
                let bias = (v.patch_embed.bias.as_ref())
                    .map_or_else(|| Tensor::zeros([d], &w.device()), |b| b.val());
                (w.reshape([d as i32, -1]).transpose(), bias)
            })
            .unzip();
        let stack = |f: fn(&VisionTransformer) -> Tensor<3>| {
            Param::from_tensor(Tensor::stack(embeddings.iter().map(|v| f(v)).collect(), 0))
        };
        Ok(Self {
            patch: GroupedLinear::stack(patch_w, patch_b),
            cls_token: stack(|v| v.cls_token.val()),
            pos_embed: stack(|v| v.pos_embed.val()),
            pre_norm: pre_norms(embeddings)?,
            norm: GroupedLayerNorm::of(&norms, "norm")?,
            projection: None,
            patch_size: members[0].patch_embed.weight.dims()[2],
        })
    }

    /// The same stems reading each member's feature through its projection, normalised (CLIP
    /// zero-shot; one projection per member).
    pub(crate) fn with_projection(self, projections: &[&Linear]) -> Self {
        Self {
            projection: Some(GroupedLinear::of(projections)),
            ..self
        }
    }
}

/// The members' LayerNorms before the blocks, when they have them (their stem layouts agree).
fn pre_norms(members: &[&VisionTransformer]) -> Result<Option<GroupedLayerNorm>, BackboneError> {
    let norms: Option<Vec<&LayerNorm>> = members.iter().map(|v| v.pre_norm.as_ref()).collect();
    norms
        .map(|n| GroupedLayerNorm::of(&n, "pre_norm"))
        .transpose()
}

/// Images `[B, C, H, W]` -> flattened patches `[B, N, C·p·p]`, patches in row-major order and
/// each flattened as (channel, row, column), as the patch convolution's weight is: the patch
/// embedding as a matrix product.
pub fn patchify(images: Tensor<4>, p: usize) -> Tensor<3> {
    let [b, c, h, w] = images.dims();
    let (rows, cols) = (h / p, w / p);
    // [B, C, h, p, w, p] -> [B, h, w, C, p, p].
    images
        .reshape([b, c, rows, p, cols, p])
        .permute([0, 2, 4, 1, 3, 5])
        .reshape([b, rows * cols, c * p * p])
}

impl GroupedStem for PatchStem {
    /// Images `[B, C, H, W]` -> `[G, B·T, D]`.
    fn embed(&self, input: &Input) -> Tensor<3> {
        let pixels = patchify(input.clone().images(), self.patch_size);
        let [batch, patches, flat] = pixels.dims();
        let x = self
            .patch
            .forward(pixels.reshape([1, batch * patches, flat]));
        let [groups, _, d] = x.dims();
        let cls = self.cls_token.val().expand([groups, batch, 1, d]);
        let tokens = Tensor::cat(vec![cls, x.reshape([groups, batch, patches, d])], 2)
            + self.pos_embed.val();
        let tokens = tokens.reshape([groups, batch * (patches + 1), d]);
        match &self.pre_norm {
            Some(norm) => norm.forward(tokens),
            None => tokens,
        }
    }

    fn features(&self, x: Tensor<3>, input: &Input) -> Tensor<3> {
        let [members, rows, d] = x.dims();
        let batch = input.batch_size();
        // LayerNorm acts per token: normalising the class token alone is the same.
        let cls = x.reshape([members, batch, rows / batch, d]).narrow(2, 0, 1);
        let features = self.norm.forward(cls.reshape([members, batch, d]));
        let Some(projection) = &self.projection else {
            return features;
        };
        let embeds = projection.forward(features);
        let [_, _, e] = embeds.dims();
        let rows = normalize(embeds.reshape([members * batch, e]));
        rows.reshape([members, batch, e])
    }

    fn shared(&self) -> bool {
        self.cls_token.dims()[0] == 1
    }
}
