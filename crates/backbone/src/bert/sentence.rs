//! Sentence embeddings as sentence-transformers computes them (what checks a BERT import).

use burn::tensor::{Int, Tensor, TensorData};

use super::model::BertModel;
use super::pooling::mean_pool;
use crate::dropout::Mode;
use crate::error::BackboneError;
use crate::gates::Gates;

impl BertModel {
    /// Sentence embeddings as sentence-transformers computes them for all-MiniLM-L6-v2: the
    /// last hidden state mean-pooled over the tokens, then L2-normalised. One row per id list
    /// (`[CLS] ... [SEP]`, unpadded; they are padded together here), deterministic, no gates.
    pub fn sentence_embeddings(&self, ids: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, BackboneError> {
        let [vocab, width] = self.embeddings.word_embeddings.weight.dims();
        let [max_position, _] = self.embeddings.position_embeddings.weight.dims();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let tokens = ids.iter().map(Vec::len).max().unwrap_or(0);
        let mut flat = Vec::with_capacity(ids.len() * tokens);
        let mut mask = Vec::with_capacity(ids.len() * tokens);
        for (row, sentence) in ids.iter().enumerate() {
            if sentence.is_empty() || sentence.len() > max_position {
                return Err(BackboneError::invalid(
                    format!("ids[{row}].len()"),
                    sentence.len(),
                    format!("1..={max_position} tokens (the position table)"),
                ));
            }
            if let Some(&bad) = sentence.iter().find(|&&id| id as usize >= vocab) {
                return Err(BackboneError::invalid(
                    format!("ids[{row}]"),
                    bad,
                    format!("a token id below the vocabulary size {vocab}"),
                ));
            }
            let pad = tokens - sentence.len();
            flat.extend(sentence.iter().map(|&id| i64::from(id)));
            flat.extend(std::iter::repeat_n(0, pad));
            mask.extend(std::iter::repeat_n(1i64, sentence.len()));
            mask.extend(std::iter::repeat_n(0, pad));
        }
        let device = self.embeddings.word_embeddings.weight.device();
        let shape = [ids.len(), tokens];
        let ids = Tensor::<2, Int>::from_data(TensorData::new(flat, shape), &device);
        let mask = Tensor::<2, Int>::from_data(TensorData::new(mask, shape), &device);
        let hidden = self.forward(ids, mask.clone(), &Gates::none(), Mode::Deterministic);
        let pooled = mean_pool(hidden, mask);
        // torch.nn.functional.normalize: x / max(‖x‖, 1e-12).
        let norm = pooled.clone().square().sum_dim(1).sqrt().clamp_min(1e-12);
        let values = (pooled / norm)
            .into_data()
            .convert::<f32>()
            .try_into_vec::<f32>()
            .expect("converted to f32");
        Ok(values.chunks(width).map(<[f32]>::to_vec).collect())
    }
}
