//! CLIP's text tower: token and position embeddings, a causal pre-norm encoder, the final
//! LayerNorm, pooled at the end-of-text token ([`TextPooling`]).

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig};
use burn::tensor::{Device, Distribution, Int, Tensor};
use serde::{Deserialize, Serialize};

use crate::attention::padding_mask;
use crate::block::{BlockConfig, Encoder};
use crate::dropout::Mode;
use crate::error::{BackboneError, positive};
use crate::gates::Gates;
use crate::mlp::Activation;
use kernels::layer_norm;

/// The `eos_token_id` of CLIP configs written before transformers fixed it: with it,
/// transformers pools at the largest id instead ([`TextPooling::LargestId`]).
const LEGACY_EOS_TOKEN_ID: usize = 2;

/// Where CLIP's text tower reads each sequence's feature, as transformers'
/// `CLIPTextTransformer` decides from the config's `eos_token_id` ([`TextPooling::of_eos`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextPooling {
    /// At the largest id, the first should it occur twice (`eos_token_id` = 2, old configs:
    /// in CLIP's vocabularies the end token has the largest id).
    LargestId,
    /// At the first position of this id (the end token); position 0 where it is absent, as
    /// transformers' `argmax` over a row without it gives.
    FirstOf(u32),
}

impl TextPooling {
    /// transformers' rule: `eos_token_id` = 2 pools at the largest id, any other at the first
    /// position of that id.
    pub fn of_eos(eos_token_id: usize) -> Self {
        match eos_token_id {
            LEGACY_EOS_TOKEN_ID => Self::LargestId,
            id => Self::FirstOf(id as u32),
        }
    }

    /// Each row's pooling position `[B]` for token ids `[B, L]`.
    pub fn positions(&self, ids: Tensor<2, Int>) -> Tensor<1, Int> {
        let [batch, length] = ids.dims();
        let hit = match *self {
            Self::LargestId => {
                let largest = ids.clone().max_dim(1).expand([batch, length]);
                ids.clone().equal(largest)
            }
            Self::FirstOf(id) => ids.clone().equal_elem(i64::from(id)),
        };
        let index = Tensor::<1, Int>::arange(0..length as i64, &ids.device())
            .reshape([1, length])
            .expand([batch, length]);
        // Positions without a hit count as `length`, so the smallest is the first hit.
        let first = index
            .mask_fill(hit.bool_not(), length as i64)
            .min_dim(1)
            .reshape([batch]);
        first.clone().mask_fill(first.equal_elem(length as i64), 0)
    }
}

/// Configuration of a [`ClipTextTransformer`]; the defaults are transformers' `CLIPTextConfig`'s.
#[derive(Config, Debug)]
pub struct ClipTextConfig {
    /// Vocabulary size V.
    pub vocab_size: usize,
    /// Positions P: the longest sequence (77 in CLIP).
    pub max_positions: usize,
    /// Width D.
    pub d_model: usize,
    /// Blocks L.
    pub n_layers: usize,
    /// Heads per block H.
    pub n_heads: usize,
    /// MLP hidden width F.
    pub d_mlp: usize,
    /// The end-of-text id, which sets the pooling ([`TextPooling::of_eos`]).
    pub eos_token_id: usize,
    /// LayerNorm epsilon.
    #[config(default = 1e-5)]
    pub layer_norm_eps: f64,
    /// The MLPs' activation.
    #[config(default = "Activation::QuickGelu")]
    pub activation: Activation,
}

impl ClipTextConfig {
    /// Every block's configuration: pre-norm, causal.
    pub fn block(&self) -> BlockConfig {
        BlockConfig::new(self.d_model, self.n_heads, self.d_mlp, true)
            .with_layer_norm_eps(self.layer_norm_eps)
            .with_activation(self.activation)
            .with_causal(true)
    }

    /// Checks every field, naming an invalid one (`ClipTextConfig.<field>`).
    pub fn check(&self) -> Result<(), BackboneError> {
        self.block().check("ClipTextConfig")?;
        positive("ClipTextConfig.vocab_size", self.vocab_size)?;
        positive("ClipTextConfig.max_positions", self.max_positions)?;
        positive("ClipTextConfig.n_layers", self.n_layers)
    }

    /// Builds the tower, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<ClipTextTransformer, BackboneError> {
        self.check()?;
        let positions = [self.max_positions, self.d_model];
        Ok(ClipTextTransformer {
            token_embedding: EmbeddingConfig::new(self.vocab_size, self.d_model).init(device),
            position_embedding: Param::from_tensor(Tensor::random(
                positions,
                Distribution::Normal(0.0, 0.01),
                device,
            )),
            encoder: self.block().init_encoder(self.n_layers, device)?,
            final_layer_norm: LayerNormConfig::new(self.d_model)
                .with_epsilon(self.layer_norm_eps)
                .init(device),
            layer_norm_eps: self.layer_norm_eps,
            pooling: TextPooling::of_eos(self.eos_token_id),
        })
    }
}

/// CLIP's text tower (transformers' `CLIPTextTransformer`, `text_model.*`).
#[derive(Module, Debug)]
pub struct ClipTextTransformer {
    /// Token table `[V, D]`.
    pub token_embedding: Embedding,
    /// Position table `[P, D]`.
    pub position_embedding: Param<Tensor<2>>,
    /// The causal pre-norm blocks.
    pub encoder: Encoder,
    /// The LayerNorm after the last block.
    pub final_layer_norm: LayerNorm,
    /// Its epsilon (see [`crate::Block::layer_norm_eps`]).
    pub layer_norm_eps: f64,
    /// Where each sequence is read out.
    #[module(skip)]
    pub pooling: TextPooling,
}

impl ClipTextTransformer {
    /// The pooled feature `[B, D]` of token ids `[B, L]` with their attention mask `[B, L]`
    /// (1 = token, 0 = padding): the final norm on the token [`TextPooling`] picks.
    ///
    /// # Panics
    /// If L exceeds the position table or an id the vocabulary.
    pub fn forward(
        &self,
        ids: Tensor<2, Int>,
        mask: Tensor<2, Int>,
        gates: &Gates,
        mode: Mode,
    ) -> Tensor<2> {
        let [batch, length] = ids.dims();
        let positions = self.position_embedding.val().narrow(0, 0, length);
        let x = self.token_embedding.forward(ids.clone()) + positions.unsqueeze::<3>();
        let x = self
            .encoder
            .forward(x, gates, Some(padding_mask(mask)), mode);
        let [_, _, d] = x.dims();
        let at = self.pooling.positions(ids).reshape([batch, 1, 1]);
        let pooled = x.gather(1, at.expand([batch, 1, d])).reshape([batch, d]);
        // LayerNorm acts per token: normalising the pooled one alone gives the same feature.
        layer_norm(&self.final_layer_norm, self.layer_norm_eps, pooled)
    }
}
