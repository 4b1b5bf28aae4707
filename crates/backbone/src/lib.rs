//! Transformer encoder backbones for uqformer: the modules (one [`Block`] type, pre-norm for ViT,
//! post-norm for BERT; a [`VisionTransformer`] and a BERT-style [`BertModel`]; attention, grouped
//! layers) and their FLOP counts ([`ViTConfig::flops`], [`Classifier::flops`]), on the
//! `kernels` crate's fast paths. Device-independent Burn 0.22 modules.
//!
//! Hooks instead of forks: every forward takes
//! - [`Gates`]: per-head gates `[L, H]` (head pruning, Taylor importance), attention-branch
//!   gates `[L]` and GELU gates `[L]` (HetDPT depth pruning). Gradients with respect to them
//!   flow; `Gates::none()` is the plain transformer.
//! - [`Mode`]: dropout on or off, independent of the device (so MC Dropout runs at inference);
//!   dropout masks, like weight initialisation, come from the device RNG (`device.seed(..)`).
//!
//! All fields are public so other crates (Hydra fusion, LoRA adapters, HetDPT merging) can read
//! every weight and run the encoder block by block; [`attend`] is the attention core on
//! already projected Q/K/V ([`attend_heads`] on heads already apart); a block runs its norms
//! through [`Block::norm1_forward`] and [`Block::norm2_forward`], which know their epsilon. Configs are validated on `init`, which returns a [`BackboneError`] naming the field. A
//! Linear weight is stored `[in, out]` (Burn's layout).
//!
//! Backbones behind one trait: [`Backbone`] is what methods need from a transformer classifier
//! (embed, the shared [`Encoder`] blocks, feature readout, head, shapes, FLOPs) and [`Members`]
//! embeds fused members in one pass ([`GroupedStem`], on [`GroupedLinear`] /
//! [`GroupedLayerNorm`]). [`Classifier`] is the base model: an enum with one variant per backbone,
//! written out in `classifier.rs` (the ViT, the BERT classifier and CLIP zero-shot).
//!
//! CLIP ([`ClipModel`]) reuses them: its vision tower is a [`VisionTransformer`] with CLIP's
//! LayerNorm before the blocks ([`VisionTransformer::pre_norm`]) and quick-GELU
//! ([`Activation`]), its text tower ([`ClipTextTransformer`]) a causal pre-norm [`Encoder`]
//! ([`causal_mask`]) pooled where [`TextPooling`] says; [`ClipZeroShot`] is its zero-shot image
//! classifier, a third [`Classifier`] variant.
//!
//! Presets name the ViTs trained from scratch ([`ViTConfig::vit_tiny_28`], ...,
//! [`ViTConfig::preset`]). [`BertModel::sentence_embeddings`] gives sentence-transformers'
//! normalised mean-pooled embeddings. Pretrained checkpoints (their readers, the imports into
//! these modules and their registry) are the `importers` crate's.
//!
//! ```no_run
//! use backbone::{Gates, Mode, ViTConfig};
//! use burn::tensor::{Device, Tensor};
//! let device = Device::flex();
//! let model = ViTConfig::preset("vit_tiny_28").unwrap().init(&device).unwrap();
//! let images = Tensor::<4>::zeros([2, 1, 28, 28], &device);
//! let logits = model.forward(images, &Gates::none(), Mode::Deterministic); // [2, 10]
//! ```

mod attention;
mod bert;
mod block;
mod classifier;
mod clip;
mod cost;
mod dropout;
mod error;
mod gates;
mod grouped;
mod input;
mod mlp;
mod presets;
mod traits;
mod unit;
mod vit;

pub use attention::{
    Attention, AttentionConfig, attend, attend_heads, attention_probs, causal_mask, padding_mask,
};
pub use bert::{
    BertClassifier, BertConfig, BertEmbeddings, BertModel, Pooling, TokenStem, cls_pool, mean_pool,
};
pub use block::{Block, BlockConfig, Encoder, residual};
pub use classifier::{Classifier, MemberStems};
pub use clip::{
    ClipConfig, ClipModel, ClipTextConfig, ClipTextTransformer, ClipZeroShot, Prompts, TextPooling,
};
pub use cost::{BlockShape, block_flops, head_flops, patch_embed_flops};
pub use dropout::{Dropout, Mode};
pub use error::{BackboneError, positive};
pub use gates::{BlockGates, Gates};
pub use grouped::{GroupedLayerNorm, GroupedLinear, weight_and_bias};
pub use input::{Input, InputKind};
pub use mlp::{Activation, Mlp, MlpConfig};
pub use presets::PRESETS;
pub use traits::{Architecture, Backbone, GroupedStem, Members, StemLayout};
pub use unit::normalize;
pub use vit::{Distillation, PatchStem, ViTConfig, VisionTransformer, patchify};
