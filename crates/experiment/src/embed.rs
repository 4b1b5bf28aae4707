//! Token ids and sentence embeddings from a Hugging Face BERT checkpoint (safetensors or ONNX),
//! to check an import against one's own reference (e.g. sentence-transformers): `uqformer
//! embed`.

use std::path::Path;

use data::WordPiece;
use importers::load_hf_bert;
use runtime::Backend;

use crate::error::{ExperimentError, Result};

/// One text's tokens and its mean-pooled, L2-normalised embedding.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedded {
    pub ids: Vec<u32>,
    /// The ids' tokens in the checkpoint's vocabulary.
    pub tokens: Vec<String>,
    pub embedding: Vec<f32>,
}

/// Every text of `texts` through the BERT checkpoint folder `dir` (vocab.txt and config.json +
/// model.safetensors or one *.onnx graph), cut to `max_len` tokens ([CLS] and [SEP] included).
pub fn embed(
    dir: &Path,
    texts: &[String],
    max_len: usize,
    backend: Backend,
) -> Result<Vec<Embedded>> {
    if !dir.is_dir() {
        return Err(ExperimentError::invalid(format!(
            "{}: not a directory; expected a BERT checkpoint folder with vocab.txt and \
             config.json + model.safetensors or one *.onnx graph (run `datasets/fetch \
             all-minilm-l6-v2` for datasets/all-minilm-l6-v2)",
            dir.display()
        )));
    }
    let tokenizer = WordPiece::from_vocab_file(&dir.join("vocab.txt"))?;
    let device = backend.device()?;
    let (config, model) = load_hf_bert(dir, &device)?;
    if tokenizer.vocab_size() != config.vocab_size {
        return Err(ExperimentError::invalid(format!(
            "{}: {} tokens, but the checkpoint's vocab_size is {}",
            dir.join("vocab.txt").display(),
            tokenizer.vocab_size(),
            config.vocab_size
        )));
    }
    if max_len > config.max_position {
        return Err(ExperimentError::invalid(format!(
            "--max-len {max_len}: expected at most max_position_embeddings = {}",
            config.max_position
        )));
    }
    let ids = (texts.iter())
        .map(|text| tokenizer.encode(text, max_len).map(|e| e.ids))
        .collect::<Result<Vec<_>, _>>()?;
    let embeddings = model.sentence_embeddings(&ids)?;
    Ok((ids.into_iter().zip(embeddings))
        .map(|(ids, embedding)| Embedded {
            tokens: (ids.iter())
                .map(|&id| tokenizer.token(id).unwrap_or("?").to_string())
                .collect(),
            ids,
            embedding,
        })
        .collect())
}
