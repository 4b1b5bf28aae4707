//! Hugging Face BERT checkpoints (`config.json` + `model.safetensors`, e.g. all-MiniLM-L6-v2)
//! into a [`BertModel`]: the config read into [`HfBertConfig`], the tensors mapped by name.

mod config;

pub use config::HfBertConfig;

use std::collections::BTreeSet;
use std::path::Path;

use backbone::{BertConfig, BertModel};
use burn::module::Param;
use burn::nn::{Embedding, LayerNorm, Linear};
use burn::tensor::{Device, Tensor, TensorData};

use crate::error::ImportError;
use crate::safetensors::SafeTensors;

/// Checkpoint tensors the encoder has no use for: the next-sentence pooler and a buffer of
/// position ids.
const IGNORED: [&str; 3] = [
    "pooler.dense.weight",
    "pooler.dense.bias",
    "embeddings.position_ids",
];

/// Reads `DIR/config.json` and `DIR/model.safetensors` (a Hugging Face BERT checkpoint).
pub fn load_hf_bert(dir: &Path, device: &Device) -> Result<(BertConfig, BertModel), ImportError> {
    let config = BertConfig::from(HfBertConfig::read(&dir.join("config.json"))?);
    let model = load_bert_safetensors(&dir.join("model.safetensors"), &config, device)?;
    Ok((config, model))
}

/// Loads a Hugging Face BERT checkpoint into a model built from `config` (validated first).
/// Names as in the checkpoint (`embeddings.*`, `encoder.layer.N.*`, with any common prefix such
/// as `bert.`); `pooler.*` and `embeddings.position_ids` are ignored. Linear weights are
/// transposed from PyTorch's `[out, in]`; F16/BF16/F64 are converted to f32. A missing key, an
/// unexpected key or a wrong shape gives one [`ImportError::Tensors`] listing all of them.
pub fn load_bert_safetensors(
    path: &Path,
    config: &BertConfig,
    device: &Device,
) -> Result<BertModel, ImportError> {
    let mut model = config.init(device).map_err(|error| ImportError::Config {
        path: path.to_path_buf(),
        error,
    })?;
    let file = SafeTensors::read(path)?;
    let prefix = file
        .tensors()
        .find_map(|(name, _)| name.strip_suffix("embeddings.word_embeddings.weight"))
        .unwrap_or("");
    let mut load = Loader {
        file: &file,
        prefix,
        used: BTreeSet::new(),
        missing: Vec::new(),
        mismatched: Vec::new(),
    };
    let e = &mut model.embeddings;
    load.embedding("embeddings.word_embeddings", &mut e.word_embeddings);
    load.embedding("embeddings.position_embeddings", &mut e.position_embeddings);
    load.embedding(
        "embeddings.token_type_embeddings",
        &mut e.token_type_embeddings,
    );
    load.layer_norm("embeddings.LayerNorm", &mut e.layer_norm);
    for (i, block) in model.encoder.layer.iter_mut().enumerate() {
        let name = |suffix: &str| format!("encoder.layer.{i}.{suffix}");
        let attention = &mut block.attention;
        load.linear(&name("attention.self.query"), &mut attention.query);
        load.linear(&name("attention.self.key"), &mut attention.key);
        load.linear(&name("attention.self.value"), &mut attention.value);
        load.linear(&name("attention.output.dense"), &mut attention.output);
        load.layer_norm(&name("attention.output.LayerNorm"), &mut block.norm1);
        load.linear(&name("intermediate.dense"), &mut block.mlp.fc1);
        load.linear(&name("output.dense"), &mut block.mlp.fc2);
        load.layer_norm(&name("output.LayerNorm"), &mut block.norm2);
    }
    load.finish()?;
    Ok(model)
}

/// Moves checkpoint tensors into a model's parameters, collecting every missing or
/// mismatched name instead of stopping at the first.
struct Loader<'a> {
    file: &'a SafeTensors,
    prefix: &'a str,
    used: BTreeSet<String>,
    missing: Vec<String>,
    mismatched: Vec<String>,
}

impl Loader<'_> {
    fn linear(&mut self, name: &str, linear: &mut Linear) {
        self.param(&format!("{name}.weight"), &mut linear.weight, true);
        if let Some(bias) = &mut linear.bias {
            self.param(&format!("{name}.bias"), bias, false);
        }
    }

    fn layer_norm(&mut self, name: &str, norm: &mut LayerNorm) {
        self.param(&format!("{name}.weight"), &mut norm.gamma, false);
        if let Some(beta) = &mut norm.beta {
            self.param(&format!("{name}.bias"), beta, false);
        }
    }

    fn embedding(&mut self, name: &str, embedding: &mut Embedding) {
        self.param(&format!("{name}.weight"), &mut embedding.weight, false);
    }

    /// Loads `prefix + name` into `param`; `transpose` for a 2-D PyTorch `[out, in]` weight
    /// going into Burn's `[in, out]`.
    fn param<const D: usize>(&mut self, name: &str, param: &mut Param<Tensor<D>>, transpose: bool) {
        let key = format!("{}{name}", self.prefix);
        let shape = param.lazy_shape().to_vec();
        let mut stored = shape.clone();
        if transpose {
            stored.reverse();
        }
        let Some(info) = self.file.info(&key) else {
            self.missing.push(key);
            return;
        };
        self.used.insert(key.clone());
        if info.shape != stored {
            self.mismatched.push(format!(
                "{key}: expected shape {stored:?}, found {:?}",
                info.shape
            ));
            return;
        }
        let Ok(mut values) = self.file.to_f32(&key) else {
            self.mismatched.push(format!(
                "{key}: dtype {}, expected a float type",
                info.dtype
            ));
            return;
        };
        if transpose {
            values = transposed(&values, stored[0], stored[1]);
        }
        let tensor = Tensor::from_data(TensorData::new(values, shape), &param.lazy_device());
        *param = param.clone().transform_for_load(tensor, param.id);
    }

    /// One error listing every problem, or `Ok` when every tensor found its place.
    fn finish(self) -> Result<(), ImportError> {
        let ignored: Vec<String> = IGNORED
            .iter()
            .map(|n| format!("{}{n}", self.prefix))
            .collect();
        let unexpected: Vec<String> = self
            .file
            .tensors()
            .map(|(name, _)| name.to_string())
            .filter(|name| !self.used.contains(name) && !ignored.contains(name))
            .collect();
        if self.missing.is_empty() && unexpected.is_empty() && self.mismatched.is_empty() {
            return Ok(());
        }
        Err(ImportError::Tensors {
            path: self.file.path().to_path_buf(),
            missing: self.missing,
            unexpected,
            mismatched: self.mismatched,
        })
    }
}

/// Row-major `[rows, cols]` -> `[cols, rows]`.
fn transposed(values: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    (0..cols)
        .flat_map(|c| (0..rows).map(move |r| values[r * cols + c]))
        .collect()
}
