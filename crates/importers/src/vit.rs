//! The ViT family from a local checkpoint into a [`VisionTransformer`]: Hugging Face
//! `transformers`' ViT and DeiT ([`hf`]: `config.json` + `model.safetensors`) and `timm`'s
//! `vit_*` / `deit_*` state dicts saved as safetensors ([`timm`]: qkv fused, timm's names, the
//! architecture read from the tensors' shapes and the `config.json` timm's `save_for_hf` writes
//! beside them). The format is told by that `config.json` (`model_type` for `transformers`,
//! `architecture` for timm), the architecture by its fields and the tensors, never by a name.
//!
//! DeiT's distillation token (always there in `transformers`' DeiT, in timm's `*_distilled_*`)
//! becomes [`backbone::Distillation`]: the logits average the two heads', the pooled feature the
//! two tokens after the final norm, as both libraries compute at inference.

mod checkpoint;
mod format;
mod hf;
mod timm;

pub use checkpoint::VitCheckpoint;
pub use format::load_vit;
pub use hf::HfVitConfig;
