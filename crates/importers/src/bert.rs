//! Hugging Face BERT checkpoints into a [`BertModel`]: a folder with `config.json` and
//! `model.safetensors` (e.g. all-MiniLM-L6-v2), or one with a single ONNX graph exported from a
//! `BertModel` ([`graph`], e.g. paraphrase-MiniLM-L3-v2); the config read into
//! [`HfBertConfig`] or from the graph, the tensors mapped by name.

mod config;
mod graph;

pub use config::HfBertConfig;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use backbone::{BertConfig, BertModel};
use burn::module::Param;
use burn::nn::{Embedding, LayerNorm, Linear};
use burn::tensor::{Device, Tensor, TensorData};

use crate::error::ImportError;
use crate::onnx::OnnxGraph;
use crate::onnx_structure::onnx_files;
use crate::safetensors::SafeTensors;
use graph::GraphTensors;

/// Checkpoint tensors the encoder has no use for: the next-sentence pooler and a buffer of
/// position ids.
const IGNORED: [&str; 3] = [
    "pooler.dense.weight",
    "pooler.dense.bias",
    "embeddings.position_ids",
];

/// Reads a BERT checkpoint folder (see [`BertWeights::find`]) into its configuration and model.
pub fn load_hf_bert(dir: &Path, device: &Device) -> Result<(BertConfig, BertModel), ImportError> {
    let weights = BertWeights::find(dir)?;
    let config = weights.config()?;
    let model = weights.load(&config, device)?;
    Ok((config, model))
}

/// A BERT graph already read ([`graph`]): the configuration it computes (dropouts at their
/// defaults) and the model holding its weights. Every missing, unexpected or mis-shaped tensor
/// is listed in one [`ImportError::Tensors`], by the names the checkpoint had.
pub fn bert_from_onnx(
    graph: &OnnxGraph,
    device: &Device,
) -> Result<(BertConfig, BertModel), ImportError> {
    let config = graph::config(graph)?;
    let model = load_bert_onnx(graph, &config, device)?;
    Ok((config, model))
}

/// The weights of a BERT graph (its projections named by their biases) in a model of `config`.
fn load_bert_onnx(
    graph: &OnnxGraph,
    config: &BertConfig,
    device: &Device,
) -> Result<BertModel, ImportError> {
    load_bert(&graph.path, config, device, || Ok(GraphTensors::new(graph)))
}

/// The weights of a BERT checkpoint folder, in one of the two layouts it may have.
#[derive(Debug, Clone)]
pub(crate) enum BertWeights {
    /// `config.json` and `model.safetensors` (the folder).
    Safetensors(PathBuf),
    /// One `*.onnx` graph exported from a `BertModel`, which also gives the configuration.
    Onnx(Box<OnnxGraph>),
}

impl BertWeights {
    /// `DIR/model.safetensors` (with `DIR/config.json`) when there is one, else the folder's one
    /// `*.onnx` file, read; an error names the folder and both layouts when it has neither.
    pub(crate) fn find(dir: &Path) -> Result<Self, ImportError> {
        if dir.join("model.safetensors").is_file() {
            return Ok(Self::Safetensors(dir.to_path_buf()));
        }
        let expected = "expected config.json with model.safetensors, or one *.onnx graph";
        let mut graphs = onnx_files(dir).map_err(|e| {
            ImportError::file(dir, format!("cannot read the folder ({e}); {expected}"))
        })?;
        match graphs.len() {
            1 => Ok(Self::Onnx(Box::new(OnnxGraph::read(&graphs.remove(0))?))),
            n => Err(ImportError::file(
                dir,
                format!("{expected}; found no model.safetensors and {n} *.onnx files"),
            )),
        }
    }

    /// The checkpoint's configuration (`config.json`, or read from the graph).
    pub(crate) fn config(&self) -> Result<BertConfig, ImportError> {
        match self {
            Self::Safetensors(dir) => Ok(HfBertConfig::read(&dir.join("config.json"))?.into()),
            Self::Onnx(graph) => graph::config(graph),
        }
    }

    /// A model of `config` (validated first; its dropouts are free) holding the weights.
    pub(crate) fn load(
        &self,
        config: &BertConfig,
        device: &Device,
    ) -> Result<BertModel, ImportError> {
        match self {
            Self::Safetensors(dir) => {
                load_bert_safetensors(&dir.join("model.safetensors"), config, device)
            }
            Self::Onnx(graph) => load_bert_onnx(graph, config, device),
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
    load_bert(path, config, device, || SafeTensors::read(path))
}

/// Where the mapping reads a checkpoint's tensors, by the names the checkpoint gave them.
trait Source {
    /// The file, for messages.
    fn path(&self) -> &Path;
    /// Every tensor's name.
    fn names(&self) -> Vec<&str>;
    /// One tensor's stored shape.
    fn shape(&self, name: &str) -> Option<&[usize]>;
    /// A tensor's values as f32, or its dtype when it is not a float tensor.
    fn values(&self, name: &str) -> Result<Vec<f32>, String>;
    /// Whether linear weights are stored `[out, in]` (PyTorch's `nn.Linear`), not `[in, out]`
    /// (ONNX's `MatMul(x, W)`, Burn's layout).
    fn out_in(&self) -> bool;
}

impl Source for SafeTensors {
    fn path(&self) -> &Path {
        self.path()
    }

    fn names(&self) -> Vec<&str> {
        self.tensors().map(|(name, _)| name).collect()
    }

    fn shape(&self, name: &str) -> Option<&[usize]> {
        self.info(name).map(|info| info.shape.as_slice())
    }

    fn values(&self, name: &str) -> Result<Vec<f32>, String> {
        self.to_f32(name).map_err(|_| {
            self.info(name)
                .map_or_else(String::new, |i| i.dtype.clone())
        })
    }

    fn out_in(&self) -> bool {
        true
    }
}

/// The mapping onto a model of `config` (checkpoint `path`), which is validated before `read`
/// reads the tensors.
fn load_bert<S: Source>(
    path: &Path,
    config: &BertConfig,
    device: &Device,
    read: impl FnOnce() -> Result<S, ImportError>,
) -> Result<BertModel, ImportError> {
    let mut model = config.init(device).map_err(|error| ImportError::Config {
        path: path.to_path_buf(),
        error,
    })?;
    let file = &read()?;
    let names = file.names();
    let prefix = (names.iter())
        .find_map(|name| name.strip_suffix("embeddings.word_embeddings.weight"))
        .unwrap_or("");
    let mut load = Loader {
        file,
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
    file: &'a dyn Source,
    prefix: &'a str,
    used: BTreeSet<String>,
    missing: Vec<String>,
    mismatched: Vec<String>,
}

impl Loader<'_> {
    fn linear(&mut self, name: &str, linear: &mut Linear) {
        let out_in = self.file.out_in();
        self.param(&format!("{name}.weight"), &mut linear.weight, out_in);
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
        let Some(found) = self.file.shape(&key) else {
            self.missing.push(key);
            return;
        };
        self.used.insert(key.clone());
        if found != stored {
            self.mismatched
                .push(format!("{key}: expected shape {stored:?}, found {found:?}"));
            return;
        }
        let mut values = match self.file.values(&key) {
            Ok(values) => values,
            Err(dtype) => {
                let found = format!("{key}: dtype {dtype}, expected a float type");
                return self.mismatched.push(found);
            }
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
        let unexpected: Vec<String> = (self.file.names().into_iter())
            .filter(|name| !self.used.contains(*name) && !ignored.iter().any(|i| i == name))
            .map(String::from)
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
