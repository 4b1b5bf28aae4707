//! How a BERT sequence classifier reads one feature out of the last hidden states: masked mean
//! pooling (sentence-transformers, uqformer's default) or Hugging Face BERT's pooler (the first
//! token, `[CLS]` / `<s>`, through a dense layer and tanh).

use burn::nn::Linear;
use burn::tensor::{Int, Tensor};
use serde::{Deserialize, Serialize};

use kernels::linear;

/// The readout of a [`BertClassifier`](crate::BertClassifier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Masked mean over the tokens; no parameters.
    Mean,
    /// The first token's hidden state through a dense `D -> D` layer and tanh: `BertModel`'s
    /// pooler, and the first layer of RoBERTa's classification head.
    Cls,
}

/// Masked mean over tokens: `hidden` `[B, T, D]`, `attention_mask` `[B, T]` (1 = token) ->
/// `[B, D]` (sentence-transformers pooling; an all-padding row gives 0).
pub fn mean_pool(hidden: Tensor<3>, attention_mask: Tensor<2, Int>) -> Tensor<2> {
    let mask = attention_mask.float().unsqueeze_dim::<3>(2); // [B, T, 1]
    let sum = (hidden * mask.clone()).sum_dim(1).squeeze_dim::<2>(1);
    let count = mask.sum_dim(1).squeeze_dim::<2>(1).clamp_min(1e-9);
    sum / count
}

/// BERT's pooler: `tanh(dense(hidden[:, 0]))`, `[B, T, D]` -> `[B, D]`. The first token is
/// never padding (sequences are padded on the right), so no mask is needed.
pub fn cls_pool(hidden: Tensor<3>, dense: &Linear) -> Tensor<2> {
    let first = hidden.narrow(1, 0, 1).squeeze_dim::<2>(1);
    linear(dense, first).tanh()
}

/// The pooled feature `[B, D]`: [`cls_pool`] through `pooler` when there is one, else
/// [`mean_pool`].
pub(crate) fn pool(
    hidden: Tensor<3>,
    attention_mask: Tensor<2, Int>,
    pooler: Option<&Linear>,
) -> Tensor<2> {
    match pooler {
        Some(dense) => cls_pool(hidden, dense),
        None => mean_pool(hidden, attention_mask),
    }
}
