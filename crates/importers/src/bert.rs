//! Hugging Face BERT and RoBERTa checkpoints into a [`BertModel`]: a folder with `config.json`
//! and `model.safetensors` (e.g. all-MiniLM-L6-v2), or one with a single ONNX graph exported from
//! a `BertModel` ([`graph`], e.g. paraphrase-MiniLM-L3-v2); the config read into
//! [`HfBertConfig`] or from the graph, the tensors mapped by name. A whole checkpoint, pooler and
//! classifier included, is [`load_bert`]'s ([`checkpoint`]).

mod checkpoint;
mod config;
mod encoder;
mod graph;

pub use checkpoint::{BertCheckpoint, load_bert};
pub use config::HfBertConfig;

use std::path::{Path, PathBuf};

use backbone::{BertConfig, BertModel};
use burn::tensor::Device;

use crate::error::ImportError;
use crate::mapping::{Loader, Source};
use crate::onnx::OnnxGraph;
use crate::onnx_structure::onnx_files;
use crate::safetensors::SafeTensors;
use encoder::{map_encoder, prefix};
use graph::GraphTensors;

/// Checkpoint tensors the encoder has no use for: the pooler and a buffer of position ids.
const IGNORED: [&str; 3] = [
    "pooler.dense.weight",
    "pooler.dense.bias",
    "embeddings.position_ids",
];

/// Reads a BERT or RoBERTa checkpoint folder (see [`BertWeights::find`]) into its encoder's
/// configuration and model (the pooler and any classifier ignored; [`load_bert`] reads them).
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
    load_encoder(&graph.path, config, 0, device, || {
        Ok(GraphTensors::new(graph))
    })
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
            ImportError::caused(dir, format!("cannot read the folder; {expected}"), e)
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
                let offset = HfBertConfig::read(&dir.join("config.json"))?.position_offset();
                let path = &dir.join("model.safetensors");
                load_encoder(path, config, offset, device, || SafeTensors::read(path))
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
    load_encoder(path, config, 0, device, || SafeTensors::read(path))
}

/// The mapping onto a model of `config` (checkpoint `path`), which is validated before `read`
/// reads the tensors; the first `offset` rows of the position table are dropped
/// ([`HfBertConfig::position_offset`]).
fn load_encoder<S: Source>(
    path: &Path,
    config: &BertConfig,
    offset: usize,
    device: &Device,
    read: impl FnOnce() -> Result<S, ImportError>,
) -> Result<BertModel, ImportError> {
    let mut model = config.init(device).map_err(|error| ImportError::Config {
        path: path.to_path_buf(),
        error,
    })?;
    let file = &read()?;
    let mut load = Loader::new(file, prefix(file));
    map_encoder(&mut load, &mut model, offset);
    load.finish(&IGNORED)?;
    Ok(model)
}
