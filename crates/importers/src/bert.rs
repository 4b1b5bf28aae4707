//! Hugging Face BERT checkpoints (`config.json` + `model.safetensors`, e.g. all-MiniLM-L6-v2)
//! into a [`BertModel`].

use std::collections::BTreeSet;
use std::path::Path;

use backbone::{BertConfig, BertModel};
use burn::module::Param;
use burn::nn::{Embedding, LayerNorm, Linear};
use burn::tensor::{Device, Tensor, TensorData};
use serde_json::{Map, Value};

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
    let config = hf_bert_config(&dir.join("config.json"))?;
    let model = load_bert_safetensors(&dir.join("model.safetensors"), &config, device)?;
    Ok((config, model))
}

/// Reads a Hugging Face BERT `config.json`. `vocab_size`, `hidden_size`,
/// `num_hidden_layers`, `num_attention_heads` and `intermediate_size` are required; the
/// others default as in Hugging Face (`max_position_embeddings` 512, `type_vocab_size` 2,
/// `layer_norm_eps` 1e-12, dropouts 0.1). `model_type` must be "bert", `hidden_act` "gelu"
/// (erf) and `position_embedding_type` "absolute" when given.
pub fn hf_bert_config(path: &Path) -> Result<BertConfig, ImportError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ImportError::file(path, format!("cannot read the file: {e}")))?;
    let json: Map<String, Value> = serde_json::from_str(&text)
        .map_err(|e| ImportError::file(path, format!("expected a JSON object: {e}")))?;
    let fields = HfFields { path, json: &json };
    fields.text_is("model_type", "bert")?;
    fields.text_is("hidden_act", "gelu")?;
    fields.text_is("position_embedding_type", "absolute")?;
    Ok(BertConfig {
        vocab_size: fields.count("vocab_size", None)?,
        d_model: fields.count("hidden_size", None)?,
        n_layers: fields.count("num_hidden_layers", None)?,
        n_heads: fields.count("num_attention_heads", None)?,
        d_mlp: fields.count("intermediate_size", None)?,
        max_position: fields.count("max_position_embeddings", Some(512))?,
        type_vocab_size: fields.count("type_vocab_size", Some(2))?,
        layer_norm_eps: fields.real("layer_norm_eps", 1e-12)?,
        dropout: fields.real("hidden_dropout_prob", 0.1)?,
        attention_dropout: fields.real("attention_probs_dropout_prob", 0.1)?,
    })
}

/// Typed access to the fields of a config.json, with errors naming the file and field.
struct HfFields<'a> {
    path: &'a Path,
    json: &'a Map<String, Value>,
}

impl HfFields<'_> {
    fn fail(&self, field: &str, message: String) -> ImportError {
        ImportError::file(self.path, format!("{field}: {message}"))
    }

    fn count(&self, field: &str, default: Option<usize>) -> Result<usize, ImportError> {
        match (self.json.get(field), default) {
            (None, Some(default)) => Ok(default),
            (None, None) => Err(self.fail(field, "missing; expected a positive integer".into())),
            (Some(value), _) => value
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| self.fail(field, format!("= {value}: expected an integer >= 0"))),
        }
    }

    fn real(&self, field: &str, default: f64) -> Result<f64, ImportError> {
        match self.json.get(field) {
            None => Ok(default),
            Some(value) => value
                .as_f64()
                .ok_or_else(|| self.fail(field, format!("= {value}: expected a number"))),
        }
    }

    /// A text field that, when present, must equal the one value this import supports.
    fn text_is(&self, field: &str, supported: &str) -> Result<(), ImportError> {
        match self.json.get(field) {
            Some(value) if value.as_str() != Some(supported) => {
                Err(self.fail(field, format!("= {value}: only {supported:?} is supported")))
            }
            _ => Ok(()),
        }
    }
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
