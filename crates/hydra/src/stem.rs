//! The modality-specific ends of the fused model: embedding the input into M residual streams,
//! and reading each member's feature out of them.

use backbone::{BertEmbeddings, Input, VisionTransformer, mean_pool};
use burn::module::{Module, Param};
use burn::tensor::{Int, Tensor};

use crate::error::HydraError;
use crate::grouped::{GroupedLayerNorm, GroupedLinear};

/// How the members' input becomes tokens and their last tokens become features.
#[derive(Module, Debug)]
pub enum Stem {
    /// Vision Transformer members.
    Patches(PatchStem),
    /// BERT members.
    Tokens(TokenStem),
}

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
    /// The final LayerNorms.
    pub norm: GroupedLayerNorm,
    pub patch_size: usize,
}

/// BERT members: the embedding tables and LayerNorm stored once (G = 1) when every member has
/// the same ones (members whose embeddings stayed frozen), else each member's own (G = M;
/// members fine-tuned apart differ there), stacked and read by one gather; readout = masked
/// mean pooling.
#[derive(Module, Debug)]
pub struct TokenStem {
    /// Token tables `[G, V, D]`.
    pub word: Param<Tensor<3>>,
    /// Position tables `[G, P, D]`.
    pub position: Param<Tensor<3>>,
    /// Segment tables `[G, S, D]`; every token is segment 0, as in `Classifier::embed`.
    pub token_type: Param<Tensor<3>>,
    /// The embedding LayerNorms (G groups).
    pub norm: GroupedLayerNorm,
}

impl Stem {
    /// Tokens `[M, B·T, D]` entering the first block of `members` streams (member-major rows,
    /// sample-major within); a shared embedding is computed once and broadcast.
    ///
    /// # Panics
    /// If the input is of the other modality or of another shape than the members'.
    pub fn embed(&self, input: &Input, members: usize) -> Tensor<3> {
        let x = match (self, input) {
            (Self::Patches(s), Input::Images(images)) => s.embed(images.clone()),
            (Self::Tokens(s), Input::Tokens { ids, .. }) => s.embed(ids.clone()),
            _ => panic!("{}", self.mismatch()),
        };
        let [_, rows, d] = x.dims();
        x.expand([members, rows, d])
    }

    /// Whether the input embedding is stored once for all members (G = 1).
    pub(crate) fn shared(&self) -> bool {
        match self {
            Self::Patches(s) => s.cls_token.dims()[0] == 1,
            Self::Tokens(s) => s.word.dims()[0] == 1,
        }
    }

    /// Each member's feature `[M, B, D]` from the last block's tokens `[M, B·T, D]`.
    ///
    /// # Panics
    /// If the input is of the other modality.
    pub fn features(&self, x: Tensor<3>, input: &Input) -> Tensor<3> {
        let [members, rows, d] = x.dims();
        let batch = input.batch_size();
        let tokens = rows / batch;
        match (self, input) {
            (Self::Patches(s), Input::Images(_)) => {
                // LayerNorm acts per token: normalising the class token alone is the same.
                let cls = x.reshape([members, batch, tokens, d]).narrow(2, 0, 1);
                s.norm.forward(cls.reshape([members, batch, d]))
            }
            (Self::Tokens(_), Input::Tokens { mask, .. }) => {
                // [M, B·T, D] is [M·B, T, D]; the mask repeated member-major matches its rows.
                let x = x.reshape([members * batch, tokens, d]);
                mean_pool(x, mask.clone().repeat_dim(0, members)).reshape([members, batch, d])
            }
            _ => panic!("{}", self.mismatch()),
        }
    }

    fn mismatch(&self) -> &'static str {
        match self {
            Self::Patches(_) => "fused Vision Transformers take images, not token sequences",
            Self::Tokens(_) => "fused BERT classifiers take token sequences, not images",
        }
    }
}

impl PatchStem {
    /// The ViT members' patch embeddings, class tokens, positions and final norms.
    pub(crate) fn of(
        members: &[&VisionTransformer],
        patch_size: usize,
    ) -> Result<Self, HydraError> {
        let norms: Vec<_> = members.iter().map(|v| &v.norm).collect();
        let shared = all_equal(members, |v| {
            let bias = v.patch_embed.bias.as_ref().map(|b| b.val().into_data());
            let tensors = [v.cls_token.val(), v.pos_embed.val()].map(Tensor::into_data);
            (v.patch_embed.weight.val().into_data(), bias, tensors)
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
            norm: GroupedLayerNorm::of(&norms, "norm")?,
            patch_size,
        })
    }

    /// Images `[B, C, H, W]` -> `[G, B·T, D]`.
    fn embed(&self, images: Tensor<4>) -> Tensor<3> {
        let [batch, channels, height, width] = images.dims();
        let p = self.patch_size;
        let (rows, cols) = (height / p, width / p);
        let patches = rows * cols;
        // [B, C, h, p, w, p] -> [B, h, w, C, p, p]: each patch flattened as Conv2d's weight is.
        let pixels = images
            .reshape([batch, channels, rows, p, cols, p])
            .permute([0, 2, 4, 1, 3, 5])
            .reshape([1, batch * patches, channels * p * p]);
        let x = self.patch.forward(pixels);
        let [groups, _, d] = x.dims();
        let cls = self.cls_token.val().expand([groups, batch, 1, d]);
        let tokens = Tensor::cat(vec![cls, x.reshape([groups, batch, patches, d])], 2)
            + self.pos_embed.val();
        tokens.reshape([groups, batch * (patches + 1), d])
    }
}

impl TokenStem {
    /// The BERT members' embedding tables and LayerNorms.
    pub(crate) fn of(members: &[&BertEmbeddings]) -> Result<Self, HydraError> {
        let shared = all_equal(members, |e| {
            let norm = &e.layer_norm;
            let tables = [
                &e.word_embeddings,
                &e.position_embeddings,
                &e.token_type_embeddings,
            ]
            .map(|t| t.weight.val().into_data());
            let beta = norm.beta.as_ref().map(|b| b.val().into_data());
            // The Display shows the epsilon, which Burn keeps private.
            (tables, norm.gamma.val().into_data(), beta, norm.to_string())
        });
        let members = if shared { &members[..1] } else { members };
        let stack = |f: fn(&BertEmbeddings) -> Tensor<2>| {
            Param::from_tensor(Tensor::stack(members.iter().map(|e| f(e)).collect(), 0))
        };
        let norms: Vec<_> = members.iter().map(|e| &e.layer_norm).collect();
        Ok(Self {
            word: stack(|e| e.word_embeddings.weight.val()),
            position: stack(|e| e.position_embeddings.weight.val()),
            token_type: stack(|e| e.token_type_embeddings.weight.val()),
            norm: GroupedLayerNorm::of(&norms, "embeddings layer_norm")?,
        })
    }

    /// Ids `[B, T]` -> `[G, B·T, D]`: word + position + segment-0 embedding, then LayerNorm.
    fn embed(&self, ids: Tensor<2, Int>) -> Tensor<3> {
        let [groups, vocab, d] = self.word.dims();
        let [batch, tokens] = ids.dims();
        let rows = batch * tokens;
        // Group g's token i is row g·V + i of the tables flattened to [G·V, D].
        let offsets = Tensor::<1, Int>::arange(0..groups as i64, &ids.device())
            .mul_scalar(vocab as i64)
            .reshape([groups, 1])
            .expand([groups, rows]);
        let index = ids.reshape([1, rows]).expand([groups, rows]) + offsets;
        let words = (self.word.val().reshape([groups * vocab, d]))
            .select(0, index.reshape([groups * rows]))
            .reshape([groups, batch, tokens, d]);
        let positions = self
            .position
            .val()
            .narrow(1, 0, tokens)
            .unsqueeze_dim::<4>(1);
        let segment = self.token_type.val().narrow(1, 0, 1).unsqueeze_dim::<4>(1);
        let x = words + positions + segment;
        self.norm.forward(x.reshape([groups, rows, d]))
    }
}

/// Whether `key` (tensors read back as data, so compared bit for bit) is the same for every
/// member.
fn all_equal<T, K: PartialEq>(members: &[&T], key: impl Fn(&T) -> K) -> bool {
    let Some((first, rest)) = members.split_first() else {
        return true;
    };
    let first = key(first);
    rest.iter().all(|m| key(m) == first)
}
