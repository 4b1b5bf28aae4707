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
    /// Causal: query i attends to keys 0..=i only (CLIP's text tower).
    #[config(default = false)]
    pub causal: bool,
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
    /// Causal: query i attends to keys 0..=i only, besides the key padding (see
    /// [`causal_mask`]).
    pub causal: bool,
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
            causal: self.causal,
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
        let masks = Masks {
            key_padding,
            causal: self.causal,
        };
        let (heads, dropout) = (self.n_heads, &self.dropout);
        let context = attend_masked([q, k, v], heads, head_gate, masks, dropout, mode);
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
    qkv: [Tensor<3>; 3],
    n_heads: usize,
    head_gate: Option<Tensor<1>>,
    key_padding: Option<Tensor<2, Bool>>,
    dropout: &Dropout,
    mode: Mode,
) -> Tensor<3> {
    let masks = Masks {
        key_padding,
        causal: false,
    };
    attend_masked(qkv, n_heads, head_gate, masks, dropout, mode)
}

/// What a query may not attend to: padded keys and, when causal, the keys after it.
struct Masks {
    key_padding: Option<Tensor<2, Bool>>,
    causal: bool,
}

/// [`attend`], causal or not: a causal query i sees keys `0..=i` that are not padding (as
/// `transformers`' CLIP text tower), always on the explicit path (the fused kernel takes a key
/// mask only).
fn attend_masked(
    [q, k, v]: [Tensor<3>; 3],
    n_heads: usize,
    head_gate: Option<Tensor<1>>,
    masks: Masks,
    dropout: &Dropout,
    mode: Mode,
) -> Tensor<3> {
    let [batch, tokens, width] = q.dims();
    let [q, k, v] = [q, k, v].map(|t| split_heads(t, n_heads));
    let context = if masks.causal {
        let mask = causal_mask(batch, tokens, masks.key_padding, &q.device());
        let probs = dropout.forward(head_probs(q, k, Some(mask)), mode);
        gate_heads(matmul(probs, v), head_gate)
    } else {
        attend_heads([q, k, v], head_gate, masks.key_padding, dropout, mode)
    };
    context.swap_dims(1, 2).reshape([batch, tokens, width])
}

/// The keys each query must ignore, `[B, 1, T, T]` (true = ignore): the later keys (j > i) and,
/// when given, the padding `[B, T]`.
pub fn causal_mask(
    batch: usize,
    tokens: usize,
    key_padding: Option<Tensor<2, Bool>>,
    device: &Device,
) -> Tensor<4, Bool> {
    let shape = [batch, 1, tokens, tokens];
    // tril_mask is true above the diagonal: the keys after the query.
    let later = Tensor::<2, Bool>::tril_mask([tokens, tokens], 0, device)
        .reshape([1, 1, tokens, tokens])
        .expand(shape);
    match key_padding {
        Some(padding) => later.bool_or(padding.reshape([batch, 1, 1, tokens]).expand(shape)),
        None => later,
    }
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
    let dropout_on = mode == Mode::Stochastic && dropout.prob > 0.0;
    let context = if fused_applies(&q, dropout_on) {
        attention([q, k, v], key_padding)
    } else {
        let probs = dropout.forward(head_probs(q, k, key_mask(key_padding)), mode);
        matmul(probs, v)
    };
    gate_heads(context, head_gate)
}

/// Head h's context `[B, H, T, d_h]` times `head_gate[h]`, when there is a gate.
fn gate_heads(context: Tensor<4>, head_gate: Option<Tensor<1>>) -> Tensor<4> {
    match head_gate {
        Some(gate) => {
            let n_heads = context.dims()[1];
            context * gate.reshape([1, n_heads, 1, 1])
        }
        None => context,
    }
}

/// A key-padding mask `[B, T]` as the `[B, 1, 1, T]` that scores `[B, H, T, T]` broadcast to.
fn key_mask(key_padding: Option<Tensor<2, Bool>>) -> Option<Tensor<4, Bool>> {
    key_padding.map(|mask| {
        let [batch, tokens] = mask.dims();
        mask.reshape([batch, 1, 1, tokens])
    })
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
        key_mask(key_padding),
    )
}

/// [`attention_probs`] on heads apart, `[B, H, T, d_h]` each; `mask` (true = ignore) broadcasts
/// to the scores `[B, H, T, T]`.
fn head_probs(q: Tensor<4>, k: Tensor<4>, mask: Option<Tensor<4, Bool>>) -> Tensor<4> {
    let head_dim = q.dims()[3];
    // Scaling q (T·d_h values) is cheaper than scaling the scores (T·T values).
    let q = q.div_scalar((head_dim as f64).sqrt());
    let mut scores = matmul(q, k.transpose());
    if let Some(mask) = mask {
        scores = scores.mask_fill(mask, MASKED_SCORE);
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
