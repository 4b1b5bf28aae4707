use burn::config::Config;
use burn::module::Module;
use burn::nn::{LayerNorm, LayerNormConfig};
use burn::tensor::{Bool, Device, Tensor};

use crate::attention::{Attention, AttentionConfig};
use crate::dropout::{Dropout, Mode};
use crate::error::{BackboneError, epsilon, heads_divide, positive, probability};
use crate::gates::{BlockGates, Gates};
use crate::mlp::{Activation, Mlp, MlpConfig};
use kernels::layer_norm;

/// Configuration of one transformer [`Block`] and of an [`Encoder`] of `n_layers` of them.
#[derive(Config, Debug)]
pub struct BlockConfig {
    /// Model width D.
    pub d_model: usize,
    /// Heads per block H.
    pub n_heads: usize,
    /// MLP hidden width F.
    pub d_mlp: usize,
    /// Pre-norm (ViT) when true, post-norm (BERT) when false.
    pub norm_first: bool,
    /// Dropout on the attention and MLP outputs (before the residual add).
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Dropout on the attention probabilities.
    #[config(default = 0.0)]
    pub attention_dropout: f64,
    /// LayerNorm epsilon.
    #[config(default = 1e-6)]
    pub layer_norm_eps: f64,
    /// The MLP's activation (exact GELU unless said; CLIP: quick-GELU).
    #[config(default = "Activation::Gelu")]
    pub activation: Activation,
    /// Causal self-attention (CLIP's text tower; see [`crate::causal_mask`]).
    #[config(default = false)]
    pub causal: bool,
}

/// One transformer block, pre-norm or post-norm:
/// - pre-norm: `x = x + g_a·Attn(LN1(x)); x = x + MLP(LN2(x))`;
/// - post-norm: `x = LN1(x + g_a·Attn(x)); x = LN2(x + MLP(x))`.
///
/// Hugging Face BERT names: `attention.{query,key,value}` = `attention.self.*`,
/// `attention.output` = `attention.output.dense`, `norm1` = `attention.output.LayerNorm`,
/// `mlp.fc1` = `intermediate.dense`, `mlp.fc2` = `output.dense`, `norm2` = `output.LayerNorm`.
#[derive(Module, Debug)]
pub struct Block {
    /// Multi-head self-attention.
    pub attention: Attention,
    /// LN1: before attention (pre-norm) or after its residual add (post-norm).
    pub norm1: LayerNorm,
    /// The MLP.
    pub mlp: Mlp,
    /// LN2: before the MLP (pre-norm) or after its residual add (post-norm).
    pub norm2: LayerNorm,
    /// Dropout on the attention and MLP outputs.
    pub dropout: Dropout,
    /// Pre-norm when true.
    pub norm_first: bool,
    /// Both norms' epsilon: Burn 0.22.1 keeps a LayerNorm's own private, and the training
    /// kernel of [`kernels::layer_norm`] needs it.
    pub layer_norm_eps: f64,
}

impl BlockConfig {
    /// Checks every field, naming an invalid one `{owner}.{field}` (the model configs share
    /// these field names).
    pub fn check(&self, owner: &str) -> Result<(), BackboneError> {
        let field = |name: &str| format!("{owner}.{name}");
        positive(field("d_model"), self.d_model)?;
        heads_divide(field("n_heads"), self.n_heads, self.d_model)?;
        positive(field("d_mlp"), self.d_mlp)?;
        probability(field("dropout"), self.dropout)?;
        probability(field("attention_dropout"), self.attention_dropout)?;
        epsilon(field("layer_norm_eps"), self.layer_norm_eps)
    }

    /// Builds one block, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<Block, BackboneError> {
        self.check("BlockConfig")?;
        let norm = LayerNormConfig::new(self.d_model).with_epsilon(self.layer_norm_eps);
        Ok(Block {
            attention: AttentionConfig::new(self.d_model, self.n_heads)
                .with_dropout(self.attention_dropout)
                .with_causal(self.causal)
                .init(device)?,
            norm1: norm.init(device),
            mlp: MlpConfig::new(self.d_model, self.d_mlp)
                .with_activation(self.activation)
                .init(device)?,
            norm2: norm.init(device),
            dropout: Dropout { prob: self.dropout },
            norm_first: self.norm_first,
            layer_norm_eps: self.layer_norm_eps,
        })
    }

    /// Builds an encoder of `n_layers` blocks.
    pub fn init_encoder(&self, n_layers: usize, device: &Device) -> Result<Encoder, BackboneError> {
        let layer = (0..n_layers)
            .map(|_| self.init(device))
            .collect::<Result<_, _>>()?;
        Ok(Encoder { layer })
    }
}

impl Block {
    /// `[B, T, D] -> [B, T, D]` with this block's gates and an optional key-padding mask
    /// `[B, T]` (true = padding).
    pub fn forward(
        &self,
        x: Tensor<3>,
        gates: BlockGates,
        key_padding: Option<Tensor<2, Bool>>,
        mode: Mode,
    ) -> Tensor<3> {
        let attn = |h: Tensor<3>| {
            let a = self.attention.forward(h, gates.heads, key_padding, mode);
            let a = self.dropout.forward(a, mode);
            match gates.attn {
                Some(g) => a * g.unsqueeze::<3>(),
                None => a,
            }
        };
        let mlp = |h: Tensor<3>| {
            let m = self.mlp.forward_gated(h, gates.act, gates.neurons);
            let m = self.dropout.forward(m, mode);
            match gates.mlp {
                Some(g) => m * g.unsqueeze::<3>(),
                None => m,
            }
        };
        residual(
            x,
            self.norm_first,
            Some((|h| self.norm1_forward(h), attn)),
            (|h| self.norm2_forward(h), mlp),
        )
    }

    /// LN1 on `x`, through the kernels' LayerNorm (one fused op under autodiff).
    pub fn norm1_forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        layer_norm(&self.norm1, self.layer_norm_eps, x)
    }

    /// LN2 on `x`, as [`Block::norm1_forward`].
    pub fn norm2_forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        layer_norm(&self.norm2, self.layer_norm_eps, x)
    }
}

/// The residual wiring of every transformer block in the workspace (this plain block, the fused
/// Hydra block, LoRA's adapted block, the BatchEnsemble/Packed member block and HetDPT's pruned
/// block), each with its own norms and branches; a sublayer is `(norm, branch)`:
/// - pre-norm: `x = x + attention(norm1(x)); x = x + mlp(norm2(x))`;
/// - post-norm: `x = norm1(x + attention(x)); x = norm2(x + mlp(x))`.
///
/// An attention sublayer that is `None` (removed by depth pruning) adds nothing.
pub fn residual<const D: usize, N1, A, N2, M>(
    x: Tensor<D>,
    norm_first: bool,
    attention: Option<(N1, A)>,
    (norm2, mlp): (N2, M),
) -> Tensor<D>
where
    N1: FnOnce(Tensor<D>) -> Tensor<D>,
    A: FnOnce(Tensor<D>) -> Tensor<D>,
    N2: FnOnce(Tensor<D>) -> Tensor<D>,
    M: FnOnce(Tensor<D>) -> Tensor<D>,
{
    let x = match attention {
        Some((norm1, attn)) if norm_first => x.clone() + attn(norm1(x)),
        Some((norm1, attn)) => norm1(x.clone() + attn(x)),
        None => x,
    };
    if norm_first {
        x.clone() + mlp(norm2(x))
    } else {
        norm2(x.clone() + mlp(x))
    }
}

/// A stack of blocks (`layer`, as in Hugging Face's `encoder.layer.N`).
#[derive(Module, Debug)]
pub struct Encoder {
    /// The blocks, input first.
    pub layer: Vec<Block>,
}

impl Encoder {
    /// Runs every block on `[B, T, D]`; `gates` must match `[L, H]` (see [`Gates::check`]).
    pub fn forward(
        &self,
        mut x: Tensor<3>,
        gates: &Gates,
        key_padding: Option<Tensor<2, Bool>>,
        mode: Mode,
    ) -> Tensor<3> {
        for (l, block) in self.layer.iter().enumerate() {
            x = block.forward(x, gates.block(l), key_padding.clone(), mode);
        }
        x
    }
}
