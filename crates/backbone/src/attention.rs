use burn::config::Config;
use burn::module::Module;
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Bool, Device, Int, Tensor};

use crate::dropout::{Dropout, Mode};
use crate::error::{BackboneError, heads_divide, positive, probability};
use kernels::{attention, linear, matmul, softmax_last};

/// Score given to masked keys before the softmax: large enough that `exp` underflows to 0 in
/// f32, small enough to stay finite in f16/bf16 (Burn's MultiHeadAttention uses the same).
const MASKED_SCORE: f32 = -1.0e4;

/// Configuration of [`Attention`].
#[derive(Config, Debug)]
pub struct AttentionConfig {
    /// Model width D.
    pub d_model: usize,
    /// Number of heads H; D must be a multiple of H (head size d_h = D / H).
    pub n_heads: usize,
    /// Dropout on the attention probabilities.
    #[config(default = 0.0)]
    pub dropout: f64,
}

/// Multi-head self-attention that keeps its per-head structure visible.
///
/// `query`, `key`, `value` map D -> H·d_h and `output` maps H·d_h -> D (names as in Hugging
/// Face). Head h owns columns `h·d_h..(h+1)·d_h` of the Q/K/V weights and, since Burn stores a
/// Linear weight as `[in, out]`, rows `h·d_h..(h+1)·d_h` of `output.weight`.
#[derive(Module, Debug)]
pub struct Attention {
    /// Query projection D -> H·d_h.
    pub query: Linear,
    /// Key projection D -> H·d_h.
    pub key: Linear,
    /// Value projection D -> H·d_h.
    pub value: Linear,
    /// Output projection H·d_h -> D.
    pub output: Linear,
    /// Dropout on the attention probabilities.
    pub dropout: Dropout,
    /// Number of heads H.
    pub n_heads: usize,
}

impl AttentionConfig {
    /// Builds the module, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<Attention, BackboneError> {
        positive("AttentionConfig.d_model", self.d_model)?;
        heads_divide("AttentionConfig.n_heads", self.n_heads, self.d_model)?;
        probability("AttentionConfig.dropout", self.dropout)?;
        let linear = LinearConfig::new(self.d_model, self.d_model);
        Ok(Attention {
            query: linear.init(device),
            key: linear.init(device),
            value: linear.init(device),
            output: linear.init(device),
            dropout: Dropout { prob: self.dropout },
            n_heads: self.n_heads,
        })
    }
}

impl Attention {
    /// Self-attention on `x` `[B, T, D]` -> `[B, T, D]`.
    ///
    /// `head_gate` `[H]` scales each head's context before the output projection (gradients
    /// flow to it); `key_padding` `[B, T]` is true for keys to ignore (see [`padding_mask`]).
    pub fn forward(
        &self,
        x: Tensor<3>,
        head_gate: Option<Tensor<1>>,
        key_padding: Option<Tensor<2, Bool>>,
        mode: Mode,
    ) -> Tensor<3> {
        let q = linear(&self.query, x.clone());
        let k = linear(&self.key, x.clone());
        let v = linear(&self.value, x);
        let context = attend(
            [q, k, v],
            self.n_heads,
            head_gate,
            key_padding,
            &self.dropout,
            mode,
        );
        linear(&self.output, context)
    }
}

/// The attention core on already projected `[q, k, v]`, each `[B, T, H·d_h]`: per head,
/// `softmax(q kᵀ / √d_h) v`, heads concatenated back to `[B, T, H·d_h]`.
///
/// Exposed so that modules with their own projections (adapters, grouped members) share it.
/// `head_gate` `[H]` multiplies head h's context; `key_padding` `[B, T]` (true = ignore that
/// key) gives masked keys a score of -1e4 (-∞ on the fused path: the same weights, as every
/// sequence keeps a key); `dropout` acts on the probabilities.
pub fn attend(
    [q, k, v]: [Tensor<3>; 3],
    n_heads: usize,
    head_gate: Option<Tensor<1>>,
    key_padding: Option<Tensor<2, Bool>>,
    dropout: &Dropout,
    mode: Mode,
) -> Tensor<3> {
    let [batch, tokens, width] = q.dims();
    let heads = [q, k, v].map(|t| split_heads(t, n_heads));
    let context = attend_heads(heads, head_gate, key_padding, dropout, mode);
    context.swap_dims(1, 2).reshape([batch, tokens, width])
}

/// [`attend`] on heads already apart, `[q, k, v]` each `[B, H, T, d_h]` in any strides, giving
/// the context `[B, H, T, d_h]`: for a projection that lays its heads out itself (fused Hydra
/// reads q, k and v as strided views of one output, without copying them apart first).
pub fn attend_heads(
    [q, k, v]: [Tensor<4>; 3],
    head_gate: Option<Tensor<1>>,
    key_padding: Option<Tensor<2, Bool>>,
    dropout: &Dropout,
    mode: Mode,
) -> Tensor<4> {
    let n_heads = q.dims()[1];
    let dropout_on = mode == Mode::Stochastic && dropout.prob > 0.0;
    let mut context = if fused_applies(&q, dropout_on) {
        attention([q, k, v], key_padding)
    } else {
        let probs = dropout.forward(head_probs(q, k, key_padding), mode);
        matmul(probs, v)
    };
    if let Some(gate) = head_gate {
        context = context * gate.reshape([1, n_heads, 1, 1]);
    }
    context
}

/// Whether [`attend`] takes the fused attention kernel ([`kernels::attention`]): on flex
/// (evaluation on the CPU); under autodiff Burn's fused attention decomposes into more ops than
/// the explicit path, and it has no dropout. Other backends keep the explicit path until their
/// kernels are measured here.
fn fused_applies<const D: usize>(q: &Tensor<D>, dropout_on: bool) -> bool {
    !dropout_on && !q.is_autodiff() && q.device() == Device::flex()
}

/// Each head's attention probabilities `[B, H, T_query, T_key]`, `softmax(q kᵀ / √d_h)` on
/// projected `[q, k]` (`[B, T, H·d_h]` each), masked keys as in [`attend`]: what a strategy
/// reads to see where a head looks.
pub fn attention_probs(
    [q, k]: [Tensor<3>; 2],
    n_heads: usize,
    key_padding: Option<Tensor<2, Bool>>,
) -> Tensor<4> {
    head_probs(
        split_heads(q, n_heads),
        split_heads(k, n_heads),
        key_padding,
    )
}

/// [`attention_probs`] on heads apart, `[B, H, T, d_h]` each.
fn head_probs(q: Tensor<4>, k: Tensor<4>, key_padding: Option<Tensor<2, Bool>>) -> Tensor<4> {
    let [batch, _, tokens, head_dim] = q.dims();
    // Scaling q (T·d_h values) is cheaper than scaling the scores (T·T values).
    let q = q.div_scalar((head_dim as f64).sqrt());
    let mut scores = matmul(q, k.transpose());
    if let Some(mask) = key_padding {
        scores = scores.mask_fill(mask.reshape([batch, 1, 1, tokens]), MASKED_SCORE);
    }
    softmax_last(scores)
}

/// `[B, T, H·d_h]` -> `[B, H, T, d_h]`.
fn split_heads(t: Tensor<3>, n_heads: usize) -> Tensor<4> {
    let [batch, tokens, width] = t.dims();
    t.reshape([batch, tokens, n_heads, width / n_heads])
        .swap_dims(1, 2)
}

/// Key-padding mask from a Hugging Face style attention mask `[B, T]` (1 = token, 0 = padding):
/// true where the token is padding.
pub fn padding_mask(attention_mask: Tensor<2, Int>) -> Tensor<2, Bool> {
    attention_mask.equal_elem(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fused kernel serves plain flex evaluation only (the equality of the two paths is
    /// tested in `tests/backbone/attention.rs`).
    #[test]
    fn fused_attention_serves_plain_flex_without_dropout() {
        let q = |device: &Device| Tensor::<3>::zeros([1, 2, 4], device);
        let flex = Device::flex();
        assert!(fused_applies(&q(&flex), false));
        assert!(!fused_applies(&q(&flex), true));
        assert!(!fused_applies(&q(&flex.autodiff()), false));
    }
}
