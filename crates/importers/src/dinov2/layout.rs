//! What a DINOv2 graph says its encoder is, read from the named initialisers' shapes and checked
//! against the graph.

use backbone::{BackboneError, ViTConfig};

use super::structure::{check_patch_conv, check_resize, position_tables};
use crate::error::ImportError;
use crate::onnx::{OnnxGraph, OnnxTensor};
use crate::onnx_structure::{check_exact_gelu, layer_norm_eps};

/// DINOv2's attention head width, the same for ViT-S/B/L/g.
const HEAD_WIDTH: usize = 64;

/// What the graph says the encoder is: the prefix of its names, its shape and its position
/// tables, each checked against the graph.
pub(super) struct Layout<'a> {
    pub(super) prefix: &'a str,
    pub(super) width: usize,
    pub(super) patch: usize,
    pub(super) n_layers: usize,
    pub(super) d_mlp: usize,
    pub(super) eps: f64,
    /// The anonymous class position `[1, 1, D]`.
    pub(super) class_pos: &'a OnnxTensor,
    /// The anonymous patch positions `[1, grid², D]`.
    pub(super) patch_pos: &'a OnnxTensor,
    pub(super) grid: usize,
}

impl<'a> Layout<'a> {
    /// Reads the shape from the named initialisers' shapes, then checks what is computed
    /// (GELU, patch Conv, LayerNorm epsilon, position resize) against the graph.
    pub(super) fn read(graph: &'a OnnxGraph) -> Result<Self, ImportError> {
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
    pub(super) fn config(
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
