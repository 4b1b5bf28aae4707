//! A BERT exported to ONNX from Hugging Face's `BertModel` by `torch.onnx` (e.g. the
//! sentence-transformers paraphrase-MiniLM-L3-v2 graph, its names under `model.0.auto_model.`):
//! the configuration read from the graph, and its tensors under the names the checkpoint had,
//! for the mapping of [`super`].
//!
//! - Named initialisers (embeddings, biases, LayerNorms) keep their names; the projection
//!   weights are anonymous (`onnx::MatMul_470`) and are named by the bias added to their
//!   product ([`matmul_weights`]), stored `[in, out]`.
//! - The shape comes from the tensors' shapes; the heads from the attention's scale
//!   `Softmax(Div(QKᵀ, √(D/H)) + mask)`; exact GELU and one LayerNorm epsilon are checked
//!   against the graph.

use std::collections::BTreeMap;
use std::path::Path;

use backbone::BertConfig;

use crate::error::ImportError;
use crate::mapping::Source;
use crate::onnx::{OnnxGraph, OnnxTensor};
use crate::onnx_structure::{check_exact_gelu, layer_norm_eps, matmul_weights, scalar};

/// A graph's tensors under the checkpoint's names.
pub(super) struct GraphTensors<'a> {
    path: &'a Path,
    tensors: BTreeMap<String, &'a OnnxTensor>,
}

impl<'a> GraphTensors<'a> {
    /// Every initialiser by name, the projection weights renamed by role (the ones no bias
    /// names keep their anonymous names, and so are reported as unexpected).
    pub(super) fn new(graph: &'a OnnxGraph) -> Self {
        let weights = matmul_weights(graph);
        let renamed: Vec<&str> = weights.values().map(|t| t.name.as_str()).collect();
        let named = (graph.initializers.iter())
            .filter(|t| !renamed.contains(&t.name.as_str()))
            .map(|t| (t.name.clone(), t));
        Self {
            path: &graph.path,
            tensors: named.chain(weights).collect(),
        }
    }
}

impl Source for GraphTensors<'_> {
    fn path(&self) -> &Path {
        self.path
    }

    fn names(&self) -> Vec<&str> {
        self.tensors.keys().map(String::as_str).collect()
    }

    fn shape(&self, name: &str) -> Option<&[usize]> {
        self.tensors.get(name).map(|t| t.dims.as_slice())
    }

    fn values(&self, name: &str) -> Result<Vec<f32>, String> {
        let tensor = self.tensors.get(name).ok_or_else(String::new)?;
        (tensor.floats.clone()).ok_or_else(|| format!("ONNX data type {}", tensor.data_type))
    }

    fn out_in(&self) -> bool {
        false
    }
}

/// The configuration the graph computes (dropouts at their defaults).
pub(super) fn config(graph: &OnnxGraph) -> Result<BertConfig, ImportError> {
    let fail = |message: String| ImportError::file(&graph.path, message);
    let prefix = (graph.initializers.iter())
        .find_map(|t| t.name.strip_suffix("embeddings.word_embeddings.weight"))
        .ok_or_else(|| {
            fail("no initialiser named *embeddings.word_embeddings.weight; expected a BERT".into())
        })?;
    let shape = |suffix: &str| {
        let name = format!("{prefix}{suffix}");
        let dims = graph.initializer(&name).map(|t| t.dims.clone());
        (name, dims)
    };
    let table = |suffix: &str| match shape(suffix) {
        (_, Some(dims)) if dims.len() == 2 && dims[0] > 0 => Ok((dims[0], dims[1])),
        (name, dims) => Err(fail(format!("{name} has shape {dims:?}; expected [N, D]"))),
    };
    let (vocab_size, d_model) = table("embeddings.word_embeddings.weight")?;
    let (max_position, _) = table("embeddings.position_embeddings.weight")?;
    let (type_vocab_size, _) = table("embeddings.token_type_embeddings.weight")?;
    let n_layers = (0..)
        .take_while(|i| {
            shape(&format!("encoder.layer.{i}.output.LayerNorm.weight"))
                .1
                .is_some()
        })
        .count();
    let d_mlp = match shape("encoder.layer.0.intermediate.dense.bias") {
        (_, Some(dims)) if dims.len() == 1 && n_layers > 0 => dims[0],
        (name, dims) => {
            return Err(fail(format!(
                "{name} has shape {dims:?} and {n_layers} blocks were found; expected [F] and \
                 at least one block"
            )));
        }
    };
    check_exact_gelu(graph, n_layers)?;
    Ok(BertConfig::new()
        .with_vocab_size(vocab_size)
        .with_d_model(d_model)
        .with_n_layers(n_layers)
        .with_n_heads(heads(graph, d_model, n_layers)?)
        .with_d_mlp(d_mlp)
        .with_max_position(max_position)
        .with_type_vocab_size(type_vocab_size)
        .with_layer_norm_eps(layer_norm_eps(graph, prefix, 2 * n_layers + 1)?))
}

/// The heads `D / w`, from the one scale `√w` every block's attention divides its scores by
/// before adding the mask: `Softmax(Add(Div(QKᵀ, √w), mask))`.
fn heads(graph: &OnnxGraph, d_model: usize, n_layers: usize) -> Result<usize, ImportError> {
    let scale = |scores: &str| -> Option<f32> {
        let add = graph.producer(scores).filter(|n| n.op_type == "Add")?;
        let div = (add.inputs.iter())
            .filter_map(|i| graph.producer(i))
            .find(|n| n.op_type == "Div")?;
        scalar(graph, div.inputs.get(1)?)
    };
    let scales: Vec<Option<f32>> = (graph.nodes.iter())
        .filter(|n| n.op_type == "Softmax")
        .map(|n| n.inputs.first().and_then(|i| scale(i)))
        .collect();
    let width = match scales.first() {
        Some(&Some(s)) if scales.len() == n_layers && scales.iter().all(|&x| x == Some(s)) => {
            f64::from(s).powi(2).round() as usize
        }
        _ => 0,
    };
    if width > 0 && d_model.is_multiple_of(width) {
        return Ok(d_model / width);
    }
    Err(ImportError::file(
        &graph.path,
        format!(
            "expected {n_layers} attentions Softmax(Add(Div(scores, √w), mask)) sharing one \
             scale √w, w dividing the width {d_model}; found scales {scales:?}"
        ),
    ))
}
