//! BERT's embeddings: word, position and token-type tables, then LayerNorm and dropout.

use burn::module::Module;
use burn::nn::{Embedding, LayerNorm};
use burn::tensor::{Int, Tensor};

use crate::dropout::{Dropout, Mode};
use kernels::layer_norm;

/// Word + position + token-type embeddings, then LayerNorm and dropout (HF `embeddings.*`).
#[derive(Module, Debug)]
pub struct BertEmbeddings {
    /// Token table `[vocab, D]`.
    pub word_embeddings: Embedding,
    /// Position table `[max_position, D]`.
    pub position_embeddings: Embedding,
    /// Segment table `[type_vocab, D]`.
    pub token_type_embeddings: Embedding,
    /// HF `embeddings.LayerNorm`.
    pub layer_norm: LayerNorm,
    /// Its epsilon (see [`crate::Block::layer_norm_eps`]).
    pub layer_norm_eps: f64,
    /// Dropout after the LayerNorm.
    pub dropout: Dropout,
}

impl BertEmbeddings {
    /// Ids `[B, T]` -> `[B, T, D]`; token types default to 0.
    ///
    /// # Panics
    /// If an id is outside its table or T exceeds `max_position`.
    pub fn forward(
        &self,
        ids: Tensor<2, Int>,
        token_type_ids: Option<Tensor<2, Int>>,
        mode: Mode,
    ) -> Tensor<3> {
        let [batch, tokens] = ids.dims();
        let device = ids.device();
        let positions = Tensor::<1, Int>::arange(0..tokens as i64, &device).unsqueeze::<2>();
        let types = token_type_ids.unwrap_or_else(|| Tensor::zeros([batch, tokens], &device));
        let x = self.word_embeddings.forward(ids)
            + self.position_embeddings.forward(positions)
            + self.token_type_embeddings.forward(types);
        self.dropout
            .forward(layer_norm(&self.layer_norm, self.layer_norm_eps, x), mode)
    }
}
