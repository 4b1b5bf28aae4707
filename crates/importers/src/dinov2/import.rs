//! The import itself: the graph read, the model built and every tensor loaded.

use std::path::Path;

use backbone::{ViTConfig, VisionTransformer};
use burn::module::Param;
use burn::tensor::Device;

use super::layout::Layout;
use super::loader::Loader;
use crate::error::ImportError;
use crate::onnx::OnnxGraph;
use crate::onnx_structure::matmul_weights;

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
