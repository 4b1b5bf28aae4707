//! The pre-norm transformer block and token embedding shared by BatchEnsemble and
//! Packed-Ensembles, generic over their linear and normalisation layers.

use backbone::{Dropout, GroupedLinear, Mode, attend, residual};
use burn::module::{Module, Param};
use burn::nn::LayerNorm;
use burn::tensor::Tensor;
use kernels::gelu;

use crate::grouped::PackedLayerNorm;

/// A token-wise linear layer of an ensemble, `[N, T, in]` -> `[N, T, out]`.
pub trait Projection {
    fn project(&self, x: Tensor<3>) -> Tensor<3>;
}

/// A token-wise normalisation of an ensemble, `[N, T, W]` -> `[N, T, W]`.
pub trait Norm {
    fn normalize(&self, x: Tensor<3>) -> Tensor<3>;
}

impl Projection for GroupedLinear {
    fn project(&self, x: Tensor<3>) -> Tensor<3> {
        self.forward_packed(x)
    }
}

impl Norm for PackedLayerNorm {
    fn normalize(&self, x: Tensor<3>) -> Tensor<3> {
        self.forward(x)
    }
}

impl Norm for LayerNorm {
    fn normalize(&self, x: Tensor<3>) -> Tensor<3> {
        self.forward(x)
    }
}

/// The ViT's pre-norm block with its six linear layers and two norms swapped for ensemble
/// layers: `x += Attn(LN1(x)); x += fc2(GELU(fc1(LN2(x))))`, dropout as in the backbone.
#[derive(Module, Debug)]
pub struct MemberBlock<P: Module, N: Module> {
    pub query: P,
    pub key: P,
    pub value: P,
    pub output: P,
    pub norm1: N,
    pub fc1: P,
    pub fc2: P,
    pub norm2: N,
    /// Dropout on the attention and MLP outputs.
    pub dropout: Dropout,
    /// Dropout on the attention probabilities.
    pub attention_dropout: Dropout,
    /// Heads across the whole width (Packed: members × heads per member).
    pub n_heads: usize,
}

impl<P: Module + Projection, N: Module + Norm> MemberBlock<P, N> {
    pub fn forward(&self, x: Tensor<3>, mode: Mode) -> Tensor<3> {
        let attention = |h: Tensor<3>| {
            let qkv = [&self.query, &self.key, &self.value].map(|p| p.project(h.clone()));
            let context = attend(qkv, self.n_heads, None, None, &self.attention_dropout, mode);
            self.dropout.forward(self.output.project(context), mode)
        };
        let mlp = |h| {
            self.dropout
                .forward(self.fc2.project(gelu(self.fc1.project(h))), mode)
        };
        residual(
            x,
            true,
            Some((|h| self.norm1.normalize(h), attention)),
            (|h| self.norm2.normalize(h), mlp),
        )
    }
}

/// Patch features `[B, N, W]` -> tokens `[B, N + 1, W]` entering the first block: class token
/// first, plus learned positions, then dropout (as `VisionTransformer::embed`).
pub(crate) fn tokens(
    patches: Tensor<3>,
    cls_token: &Param<Tensor<3>>,
    pos_embed: &Param<Tensor<3>>,
    dropout: &Dropout,
    mode: Mode,
) -> Tensor<3> {
    let [batch, _, width] = patches.dims();
    let cls = cls_token.val().expand([batch, 1, width]);
    dropout.forward(Tensor::cat(vec![cls, patches], 1) + pos_embed.val(), mode)
}
