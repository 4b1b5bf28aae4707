//! A Hugging Face BERT or RoBERTa `config.json`, deserialised, checked and turned into a
//! [`BertConfig`].

use std::collections::BTreeMap;
use std::path::Path;

use backbone::BertConfig;
use serde::Deserialize;

use crate::config_json::{check_supported, read_json};
use crate::error::ImportError;

/// The fields of a Hugging Face BERT or RoBERTa `config.json` the import reads; the many others
/// such files carry are ignored. `vocab_size`, `hidden_size`, `num_hidden_layers`,
/// `num_attention_heads` and `intermediate_size` are required; the others default as in Hugging
/// Face.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct HfBertConfig {
    /// "bert" (also when not given) or "roberta".
    pub model_type: Option<String>,
    /// Must be "gelu" (the exact, erf GELU) when given.
    pub hidden_act: Option<String>,
    /// Must be "absolute" when given.
    pub position_embedding_type: Option<String>,
    /// Vocabulary size.
    pub vocab_size: usize,
    /// Width D.
    pub hidden_size: usize,
    /// Blocks L.
    pub num_hidden_layers: usize,
    /// Heads per block H.
    pub num_attention_heads: usize,
    /// MLP hidden width F.
    pub intermediate_size: usize,
    /// Longest sequence the position table covers (default 512).
    #[serde(default = "max_position")]
    pub max_position_embeddings: usize,
    /// Token-type (segment) vocabulary size (default 2).
    #[serde(default = "type_vocab")]
    pub type_vocab_size: usize,
    /// LayerNorm epsilon (default 1e-12).
    #[serde(default = "layer_norm_eps")]
    pub layer_norm_eps: f64,
    /// Dropout on embeddings and on attention/MLP outputs (default 0.1).
    #[serde(default = "dropout")]
    pub hidden_dropout_prob: f64,
    /// Dropout on attention probabilities (default 0.1).
    #[serde(default = "dropout")]
    pub attention_probs_dropout_prob: f64,
    /// The padding token's id; RoBERTa's positions start after it (default 1 for RoBERTa).
    pub pad_token_id: Option<usize>,
    /// The classifier's labels, by index; their number is the classifier's width.
    pub id2label: Option<BTreeMap<String, String>>,
    /// The classifier's width when `id2label` is not given.
    pub num_labels: Option<usize>,
}

fn max_position() -> usize {
    512
}

fn type_vocab() -> usize {
    2
}

fn layer_norm_eps() -> f64 {
    1e-12
}

fn dropout() -> f64 {
    0.1
}

impl HfBertConfig {
    /// Reads a `config.json`; an error names the file and the field (a missing or mistyped
    /// value, or a `model_type`, `hidden_act` or `position_embedding_type` this import does not
    /// support).
    pub fn read(path: &Path) -> Result<Self, ImportError> {
        let config: Self = read_json(path)?;
        let supported: [(&str, &Option<String>, &[&str]); 3] = [
            ("model_type", &config.model_type, &["bert", "roberta"]),
            ("hidden_act", &config.hidden_act, &["gelu"]),
            (
                "position_embedding_type",
                &config.position_embedding_type,
                &["absolute"],
            ),
        ];
        for (field, value, only) in supported {
            check_supported(path, field, value.as_deref(), only)?;
        }
        let offset = config.position_offset();
        if config.max_position_embeddings <= offset {
            return Err(ImportError::file(
                path,
                format!(
                    "max_position_embeddings = {}: expected more than pad_token_id + 1 = \
                     {offset}, where RoBERTa's positions start",
                    config.max_position_embeddings
                ),
            ));
        }
        Ok(config)
    }

    /// Whether `model_type` is "roberta".
    pub fn is_roberta(&self) -> bool {
        self.model_type.as_deref() == Some("roberta")
    }

    /// The padding id RoBERTa counts positions from (`pad_token_id`, default 1); `None` for BERT.
    pub fn roberta_padding(&self) -> Option<usize> {
        self.is_roberta().then(|| self.pad_token_id.unwrap_or(1))
    }

    /// Rows of the checkpoint's position table before the first one used: RoBERTa numbers a
    /// sequence's tokens from `pad_token_id + 1` (`transformers`' position ids count the
    /// non-padding tokens from there), BERT from 0. The import drops those rows, so the model's
    /// positions count from 0 as BERT's: exact when the padding id appears only as padding on
    /// the right (as the pipeline pads), where `transformers` numbers the tokens the same.
    pub fn position_offset(&self) -> usize {
        self.roberta_padding().map_or(0, |padding| padding + 1)
    }
}

impl From<HfBertConfig> for BertConfig {
    fn from(hf: HfBertConfig) -> Self {
        Self {
            vocab_size: hf.vocab_size,
            d_model: hf.hidden_size,
            n_layers: hf.num_hidden_layers,
            n_heads: hf.num_attention_heads,
            d_mlp: hf.intermediate_size,
            max_position: (hf.max_position_embeddings).saturating_sub(hf.position_offset()),
            type_vocab_size: hf.type_vocab_size,
            layer_norm_eps: hf.layer_norm_eps,
            dropout: hf.hidden_dropout_prob,
            attention_dropout: hf.attention_probs_dropout_prob,
        }
    }
}
