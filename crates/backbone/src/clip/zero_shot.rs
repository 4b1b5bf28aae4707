//! [`ClipZeroShot`]: CLIP as an image classifier without training, its classes given by
//! prompts, and what makes it a [`Backbone`].

use burn::module::{Module, Param};
use burn::nn::{Linear, LinearConfig};
use burn::tensor::{Int, Tensor};

use super::model::ClipModel;
use crate::block::Encoder;
use crate::cost::head_flops;
use crate::dropout::Mode;
use crate::error::BackboneError;
use crate::input::Input;
use crate::traits::{Architecture, Backbone, Members, StemLayout};
use crate::unit::normalize;
use crate::vit::{PatchStem, VisionTransformer};
use kernels::linear;

/// CLIP's zero-shot classifier: `logits = exp(logit_scale) · normalize(image) · classesᵀ`, the
/// vision tower and its projection kept from the [`ClipModel`], each class embedding the mean
/// of its prompts' normalised text embeddings, renormalised (CLIP's zero-shot recipe).
///
/// As a [`Backbone`]: the blocks are the vision tower's, the feature `[B, E]` the normalised
/// image embedding and the head `E -> C` (no bias) the scaled class embeddings, so every method
/// that runs on a backbone's blocks runs on it.
#[derive(Module, Debug)]
pub struct ClipZeroShot {
    /// The vision tower (its own `head` an unused placeholder).
    pub vision: VisionTransformer,
    /// `D_v -> E`, no bias.
    pub visual_projection: Linear,
    /// `E -> C`, no bias: column c is `exp(logit_scale)` times class c's embedding.
    pub head: Linear,
}

/// One class's prompts: token ids and attention mask `[P, L]` (one row a template).
pub type Prompts = (Tensor<2, Int>, Tensor<2, Int>);

impl ClipZeroShot {
    /// The classifier of `model` for the classes of `prompts` (class c's templates filled in,
    /// tokenized); an error when there is no class or a class has no prompt.
    pub fn new(model: &ClipModel, prompts: &[Prompts]) -> Result<Self, BackboneError> {
        if prompts.is_empty() {
            return Err(BackboneError::invalid(
                "classes",
                "none",
                "at least one class",
            ));
        }
        let mut classes = Vec::with_capacity(prompts.len());
        for (c, (ids, mask)) in prompts.iter().enumerate() {
            if ids.dims()[0] == 0 {
                return Err(BackboneError::invalid(
                    format!("class {c} prompts"),
                    "none",
                    "at least one prompt per class",
                ));
            }
            let embeds = normalize(model.text_embeds(ids.clone(), mask.clone()));
            classes.push(embeds.mean_dim(0)); // [1, E]
        }
        let classes = normalize(Tensor::cat(classes, 0)); // [C, E]
        let scale = model.logit_scale.val().exp().reshape([1, 1]);
        let [count, width] = classes.dims();
        let device = classes.device();
        let mut head = LinearConfig::new(width, count)
            .with_bias(false)
            .init(&device);
        head.weight = Param::from_tensor(classes.transpose() * scale);
        Ok(Self {
            vision: model.vision.clone(),
            visual_projection: model.visual_projection.clone(),
            head,
        })
    }
}

impl Backbone for ClipZeroShot {
    fn architecture(&self) -> Architecture {
        Architecture::ClipZeroShot
    }

    fn embed(&self, input: &Input, mode: Mode) -> Tensor<3> {
        Backbone::embed(&self.vision, input, mode)
    }

    /// The normalised image embedding `[B, E]`.
    fn features(&self, tokens: Tensor<3>, input: &Input, mode: Mode) -> Tensor<2> {
        let pooled = Backbone::features(&self.vision, tokens, input, mode);
        normalize(linear(&self.visual_projection, pooled))
    }

    fn encoder(&self) -> &Encoder {
        &self.vision.encoder
    }

    fn encoder_mut(&mut self) -> &mut Encoder {
        &mut self.vision.encoder
    }

    fn head(&self) -> &Linear {
        &self.head
    }

    fn head_mut(&mut self) -> &mut Linear {
        &mut self.head
    }

    fn freeze_embeddings(&mut self) {
        self.vision.freeze_embeddings();
    }

    fn set_dropout(&mut self, p: f64) {
        self.vision.set_dropout(p);
    }

    fn tokens(&self, text_tokens: usize) -> usize {
        self.vision.tokens(text_tokens)
    }

    /// The patch embedding and the projection (counted as a head `D_v -> E`).
    fn embed_flops(&self) -> u64 {
        let [d, e] = self.visual_projection.weight.dims();
        self.vision.embed_flops() + head_flops(d, e)
    }

    fn embedding_params(&self) -> usize {
        self.vision.embedding_params()
    }

    fn check_input(&self, input: &Input, field: &str) -> Result<(), BackboneError> {
        self.vision.check_input(input, field)
    }

    /// The vision tower's, and the embedding width E.
    fn stem_layout(&self) -> Result<StemLayout, BackboneError> {
        let mut layout = self.vision.stem_layout()?;
        let [_, e] = self.visual_projection.weight.dims();
        layout.0.push(("projection", e));
        Ok(layout)
    }
}

impl Members for ClipZeroShot {
    type Stems = PatchStem;

    /// The vision towers' stems, each member's feature read through its projection.
    fn stems(members: &[&Self]) -> Result<PatchStem, BackboneError> {
        let visions: Vec<_> = members.iter().map(|m| &m.vision).collect();
        let projections: Vec<_> = members.iter().map(|m| &m.visual_projection).collect();
        Ok(PatchStem::of(&visions)?.with_projection(&projections))
    }
}
