//! Moving the graph's initialisers into a [`VisionTransformer`]'s parameters, by name or by
//! role, every missing or mis-shaped tensor collected rather than the first returned.

use std::collections::{BTreeMap, BTreeSet};

use backbone::{Block, VisionTransformer};
use burn::module::Param;
use burn::tensor::{Tensor, TensorData};

use super::bicubic;
use super::layout::Layout;
use crate::error::ImportError;
use crate::onnx::{OnnxGraph, OnnxTensor};

/// Named initialisers the encoder has no use for.
const IGNORED: [&str; 1] = ["embeddings.mask_token"];

/// Grey input: `conv(W, [g, g, g]) = conv(W_r + W_g + W_b, g)`, so summing the RGB filters
/// is exactly replicating the grey channel.
fn fold_channels(rgb: Vec<f32>, channels: usize, patch: usize) -> Vec<f32> {
    if channels == 3 {
        return rgb;
    }
    let plane = patch * patch;
    rgb.chunks_exact(3 * plane)
        .flat_map(|filter| {
            (0..plane).map(move |k| filter[k] + filter[plane + k] + filter[2 * plane + k])
        })
        .collect()
}

/// Replaces a parameter's value (shape already checked against the graph).
fn set<const D: usize>(param: &mut Param<Tensor<D>>, values: Vec<f32>) {
    let shape = param.lazy_shape();
    let tensor = Tensor::from_data(TensorData::new(values, shape), &param.lazy_device());
    *param = param.clone().transform_for_load(tensor, param.id);
}

/// Collects every missing or mismatched tensor instead of stopping at the first.
pub(super) struct Loader<'a> {
    graph: &'a OnnxGraph,
    prefix: &'a str,
    /// The anonymous projection weights by role ([`matmul_weights`](crate::onnx_structure::matmul_weights)).
    weights: BTreeMap<String, &'a OnnxTensor>,
    used: BTreeSet<&'a str>,
    missing: Vec<String>,
    mismatched: Vec<String>,
}

impl<'a> Loader<'a> {
    pub(super) fn new(
        graph: &'a OnnxGraph,
        prefix: &'a str,
        weights: BTreeMap<String, &'a OnnxTensor>,
    ) -> Self {
        Self {
            graph,
            prefix,
            weights,
            used: BTreeSet::new(),
            missing: Vec::new(),
            mismatched: Vec::new(),
        }
    }

    /// The initialiser named `{prefix}{suffix}`, with that name as its label.
    fn named(&self, suffix: &str) -> (String, Option<&'a OnnxTensor>) {
        let name = format!("{}{suffix}", self.prefix);
        let tensor = self.graph.initializer(&name);
        (name, tensor)
    }

    /// The anonymous projection weight whose role is `{prefix}{suffix}`.
    fn weight(&self, suffix: &str) -> (String, Option<&'a OnnxTensor>) {
        let name = format!("{}{suffix}", self.prefix);
        let tensor = self.weights.get(&name).copied();
        (name, tensor)
    }

    /// The class token, the patch embedding (RGB filters folded for grey input) and the
    /// position table, its patch positions resized to the images' grid.
    pub(super) fn embeddings(
        &mut self,
        layout: &Layout<'a>,
        model: &mut VisionTransformer,
        image_size: usize,
        channels: usize,
    ) {
        let (d, patch, grid) = (layout.width, layout.patch, layout.grid);
        if let Some(v) = self.values(self.named("embeddings.cls_token"), &[1, 1, d]) {
            set(&mut model.cls_token, v);
        }
        let conv = "embeddings.patch_embeddings.projection";
        if let Some(v) = self.values(self.named(&format!("{conv}.weight")), &[d, 3, patch, patch]) {
            set(
                &mut model.patch_embed.weight,
                fold_channels(v, channels, patch),
            );
        }
        if let Some(bias) = &mut model.patch_embed.bias
            && let Some(v) = self.values(self.named(&format!("{conv}.bias")), &[d])
        {
            set(bias, v);
        }
        let by_name = |t: &'a OnnxTensor| (t.name.clone(), Some(t));
        let positions = (
            self.values(by_name(layout.class_pos), &[1, 1, d]),
            self.values(by_name(layout.patch_pos), &[1, grid * grid, d]),
        );
        if let (Some(mut table), Some(patches)) = positions {
            let side = image_size / patch;
            table.extend(bicubic::resize(&patches, grid, side, d));
            set(&mut model.pos_embed, table);
        }
    }

    /// Block `i`: its norms, the projections (LayerScale folded into the last linear of each
    /// branch) and their biases.
    pub(super) fn block(&mut self, i: usize, block: &mut Block, d: usize, f: usize) {
        let layer = |s: &str| format!("encoder.layer.{i}.{s}");
        self.layer_norm(&layer("norm1"), &mut block.norm1, d);
        self.layer_norm(&layer("norm2"), &mut block.norm2, d);
        let attention = &mut block.attention;
        for (module, linear) in [
            ("attention.attention.query", &mut attention.query),
            ("attention.attention.key", &mut attention.key),
            ("attention.attention.value", &mut attention.value),
        ] {
            let w = self.values(self.weight(&layer(&format!("{module}.weight"))), &[d, d]);
            let b = self.values(self.named(&layer(&format!("{module}.bias"))), &[d]);
            self.linear(linear, w, b, None);
        }
        let w = self.values(
            self.weight(&layer("attention.output.dense.weight")),
            &[d, d],
        );
        let b = self.values(self.named(&layer("attention.output.dense.bias")), &[d]);
        let gamma = self.values(self.named(&layer("layer_scale1.lambda1")), &[d]);
        self.linear(&mut attention.output, w, b, gamma);
        let w = self.values(self.weight(&layer("mlp.fc1.weight")), &[d, f]);
        let b = self.values(self.named(&layer("mlp.fc1.bias")), &[f]);
        self.linear(&mut block.mlp.fc1, w, b, None);
        let w = self.values(self.weight(&layer("mlp.fc2.weight")), &[f, d]);
        let b = self.values(self.named(&layer("mlp.fc2.bias")), &[d]);
        let gamma = self.values(self.named(&layer("layer_scale2.lambda1")), &[d]);
        self.linear(&mut block.mlp.fc2, w, b, gamma);
    }

    /// The values of `tensor` (found under the role `label`) if it has `shape` and holds
    /// floats; otherwise records why not.
    fn values(
        &mut self,
        (label, tensor): (String, Option<&'a OnnxTensor>),
        shape: &[usize],
    ) -> Option<Vec<f32>> {
        let Some(tensor) = tensor else {
            self.missing.push(label);
            return None;
        };
        self.used.insert(&tensor.name);
        let label = if tensor.name == label {
            label
        } else {
            format!("{label} ({})", tensor.name)
        };
        if tensor.dims != shape {
            self.mismatched.push(format!(
                "{label}: expected shape {shape:?}, found {:?}",
                tensor.dims
            ));
            return None;
        }
        let Some(values) = &tensor.floats else {
            self.mismatched.push(format!(
                "{label}: data type {}, expected FLOAT or DOUBLE",
                tensor.data_type
            ));
            return None;
        };
        Some(values.clone())
    }

    pub(super) fn layer_norm(&mut self, module: &str, norm: &mut burn::nn::LayerNorm, d: usize) {
        if let Some(v) = self.values(self.named(&format!("{module}.weight")), &[d]) {
            set(&mut norm.gamma, v);
        }
        if let Some(beta) = &mut norm.beta
            && let Some(v) = self.values(self.named(&format!("{module}.bias")), &[d])
        {
            set(beta, v);
        }
    }

    /// Sets a Linear from its `[in, out]` weight and bias, scaling output column j by
    /// `gamma[j]` (LayerScale) when given.
    fn linear(
        &mut self,
        linear: &mut burn::nn::Linear,
        weight: Option<Vec<f32>>,
        bias: Option<Vec<f32>>,
        gamma: Option<Vec<f32>>,
    ) {
        let (Some(mut weight), Some(mut bias)) = (weight, bias) else {
            return;
        };
        if let Some(gamma) = gamma {
            for row in weight.chunks_exact_mut(gamma.len()) {
                row.iter_mut().zip(&gamma).for_each(|(w, g)| *w *= g);
            }
            bias.iter_mut().zip(&gamma).for_each(|(b, g)| *b *= g);
        }
        set(&mut linear.weight, weight);
        if let Some(b) = &mut linear.bias {
            set(b, bias);
        }
    }

    /// Unused initialisers under the prefix or anonymous are unexpected.
    pub(super) fn finish(self) -> Result<(), ImportError> {
        let graph = self.graph;
        let ignored: Vec<String> = IGNORED
            .iter()
            .map(|n| format!("{}{n}", self.prefix))
            .collect();
        let unexpected: Vec<String> = graph
            .initializers
            .iter()
            .map(|t| t.name.as_str())
            .filter(|name| {
                (name.starts_with(self.prefix) || !name.contains('.'))
                    && !self.used.contains(name)
                    && !ignored.iter().any(|i| i == name)
            })
            .map(str::to_string)
            .collect();
        if self.missing.is_empty() && unexpected.is_empty() && self.mismatched.is_empty() {
            return Ok(());
        }
        Err(ImportError::Tensors {
            path: graph.path.clone(),
            missing: self.missing,
            unexpected,
            mismatched: self.mismatched,
        })
    }
}
