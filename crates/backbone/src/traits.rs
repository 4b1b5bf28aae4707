//! What a backbone is to the methods: [`Backbone`] (embed, blocks, feature readout,
//! classifier, shapes) and [`Members`] (its members embedded in one pass, for fused Hydra). The
//! implementors (`vit.rs`, `bert.rs`) and the [`crate::Classifier`] registry import these;
//! nothing here names an implementor.

use burn::nn::Linear;
use burn::tensor::Tensor;

use crate::block::Encoder;
use crate::dropout::Mode;
use crate::error::BackboneError;
use crate::input::{Input, InputKind};

/// The families of backbones, each an implementor of [`Backbone`]: what a model reads and
/// which methods apply to it follow from its family (HetDPT, BatchEnsemble, MIMO and Packed
/// need a ViT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Architecture {
    /// A Vision Transformer ([`crate::VisionTransformer`]).
    Vit,
    /// A BERT encoder with a pooled head ([`crate::BertClassifier`]).
    Bert,
    /// CLIP's vision tower with its prompts' class embeddings as the head
    /// ([`crate::ClipZeroShot`]).
    ClipZeroShot,
}

impl Architecture {
    /// What a model of this family reads.
    pub fn reads(self) -> InputKind {
        match self {
            Self::Vit | Self::ClipZeroShot => InputKind::Images,
            Self::Bert => InputKind::Tokens,
        }
    }
}

impl std::fmt::Display for Architecture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Vit => "a Vision Transformer",
            Self::Bert => "a BERT classifier",
            Self::ClipZeroShot => "a CLIP zero-shot classifier",
        })
    }
}

/// What a method needs from a transformer classifier: `forward(x) = head(features(encoder(
/// embed(x)), x))`, the pieces exposed so that callers can run the blocks themselves (fused
/// members, adapted attention). The blocks are the shared [`Encoder`]; what differs between
/// backbones is the input they read, how they embed it and how they read a feature out.
pub trait Backbone {
    /// Which family it is, and so what it reads.
    fn architecture(&self) -> Architecture;

    /// The tokens `[B, T, D]` entering the first block. The input is of the model's modality
    /// ([`crate::Classifier`] checks it before calling).
    fn embed(&self, input: &Input, mode: Mode) -> Tensor<3>;

    /// The feature `[B, D]` the head reads from the last block's tokens `[B, T, D]`.
    fn features(&self, tokens: Tensor<3>, input: &Input, mode: Mode) -> Tensor<2>;

    fn encoder(&self) -> &Encoder;

    fn encoder_mut(&mut self) -> &mut Encoder;

    /// The classifier `D -> C`.
    fn head(&self) -> &Linear;

    fn head_mut(&mut self) -> &mut Linear;

    /// The input embedding stops requiring gradients.
    fn freeze_embeddings(&mut self);

    /// Dropout `p` on what lies outside the blocks (embedding, pooled feature).
    fn set_dropout(&mut self, p: f64);

    /// Tokens per sample entering the blocks; text is counted at `text_tokens` tokens.
    fn tokens(&self, text_tokens: usize) -> usize;

    /// FLOPs per sample of the input embedding (a table lookup counts 0) and of any readout layer
    /// before the head (BERT's pooler).
    fn embed_flops(&self) -> u64;

    /// Parameters of the input embedding: what [`Backbone::freeze_embeddings`] freezes.
    fn embedding_params(&self) -> usize;

    /// Checks that an input of the model's modality fits it (named `field` in errors).
    fn check_input(&self, input: &Input, field: &str) -> Result<(), BackboneError>;

    /// The embedding's shapes that members fused together must share, by name; an error when
    /// the embedding cannot be fused at all.
    fn stem_layout(&self) -> Result<StemLayout, BackboneError>;
}

/// The shapes of a backbone's input embedding that fused members must share, by name.
#[derive(Clone, PartialEq, Eq)]
pub struct StemLayout(pub Vec<(&'static str, usize)>);

/// `{ vocab: 50, positions: 16 }`.
impl std::fmt::Debug for StemLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fields: Vec<_> = self.0.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        write!(f, "{{ {} }}", fields.join(", "))
    }
}

/// Members of one backbone embedded in one pass and read out per member (fused Hydra).
pub trait Members: Backbone + Sized {
    type Stems: GroupedStem;

    /// The members' embeddings and readouts, stored once when every member has the same ones.
    /// The members share [`Backbone::stem_layout`].
    fn stems(members: &[&Self]) -> Result<Self::Stems, BackboneError>;
}

/// The input end and the readout of M fused members.
pub trait GroupedStem {
    /// The input -> `[G, B·T, D]` (G = 1 when the embedding is shared, else M).
    fn embed(&self, input: &Input) -> Tensor<3>;

    /// Each member's feature `[M, B, D]` from the last block's tokens `[M, B·T, D]`.
    fn features(&self, tokens: Tensor<3>, input: &Input) -> Tensor<3>;

    /// Whether the input embedding is stored once for all members.
    fn shared(&self) -> bool;
}
