//! [`ClipModel`]: CLIP's two towers, their projections into the shared embedding space and the
//! logit scale, as transformers' `CLIPModel`.

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::{LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor};

use super::text::{ClipTextConfig, ClipTextTransformer};
use crate::dropout::Mode;
use crate::error::{BackboneError, positive};
use crate::gates::Gates;
use crate::mlp::Activation;
use crate::unit::normalize;
use crate::vit::{ViTConfig, VisionTransformer};
use kernels::linear;

/// Configuration of a [`ClipModel`].
#[derive(Config, Debug)]
pub struct ClipConfig {
    /// The vision tower's shape: a pre-norm ViT, to which [`ClipConfig::init`] adds CLIP's
    /// LayerNorm before the blocks and takes the patch embedding's bias; its `num_classes` is
    /// the width of a placeholder head the model does not use.
    pub vision: ViTConfig,
    /// The text tower.
    pub text: ClipTextConfig,
    /// The shared embedding width E.
    pub projection_dim: usize,
    /// The vision tower's MLP activation.
    #[config(default = "Activation::QuickGelu")]
    pub vision_activation: Activation,
    /// The initial `logit_scale` (the logits are scaled by its exp): log(1 / 0.07).
    #[config(default = 2.6592)]
    pub logit_scale_init: f64,
}

impl ClipConfig {
    /// Builds the model, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<ClipModel, BackboneError> {
        positive("ClipConfig.projection_dim", self.projection_dim)?;
        let projection = |d: usize| {
            LinearConfig::new(d, self.projection_dim)
                .with_bias(false)
                .init(device)
        };
        Ok(ClipModel {
            vision: self.vision_tower(device)?,
            visual_projection: projection(self.vision.d_model),
            text: self.text.init(device)?,
            text_projection: projection(self.text.d_model),
            logit_scale: Param::from_tensor(Tensor::full([1], self.logit_scale_init, device)),
        })
    }

    /// The vision tower: the ViT of `vision` with CLIP's differences set here rather than in
    /// [`ViTConfig`], whose serialised form is every ViT's cache fingerprint.
    fn vision_tower(&self, device: &Device) -> Result<VisionTransformer, BackboneError> {
        let mut vision = self.vision.init(device)?;
        let norm =
            LayerNormConfig::new(self.vision.d_model).with_epsilon(self.vision.layer_norm_eps);
        vision.pre_norm = Some(norm.init(device));
        vision.patch_embed.bias = None;
        for block in &mut vision.encoder.layer {
            block.mlp.activation = self.vision_activation;
        }
        Ok(vision)
    }
}

/// CLIP (transformers' `CLIPModel`): images and texts embedded into one space, where their
/// scaled cosine similarities are the logits.
#[derive(Module, Debug)]
pub struct ClipModel {
    /// The vision tower; its feature is the class token after the final norm
    /// (`post_layernorm`). Its `head` is an unused placeholder.
    pub vision: VisionTransformer,
    /// `D_v -> E`, no bias.
    pub visual_projection: Linear,
    /// The text tower.
    pub text: ClipTextTransformer,
    /// `D_t -> E`, no bias.
    pub text_projection: Linear,
    /// `[1]`: the logits are scaled by its exp.
    pub logit_scale: Param<Tensor<1>>,
}

impl ClipModel {
    /// Image embeddings `[N, E]` of pixel values `[N, C, H, W]`: the projected pooled feature,
    /// not normalised (transformers' `get_image_features`).
    ///
    /// # Panics
    /// If the image shape differs from the configured one.
    pub fn image_embeds(&self, pixels: Tensor<4>) -> Tensor<2> {
        let features = (self.vision).features(pixels, &Gates::none(), Mode::Deterministic);
        linear(&self.visual_projection, features)
    }

    /// Text embeddings `[T, E]` of token ids `[T, L]` with their attention mask `[T, L]`
    /// (1 = token, 0 = padding): the projected pooled feature, not normalised (transformers'
    /// `get_text_features`).
    ///
    /// # Panics
    /// If L exceeds the position table or an id the vocabulary.
    pub fn text_embeds(&self, ids: Tensor<2, Int>, mask: Tensor<2, Int>) -> Tensor<2> {
        let pooled = (self.text).forward(ids, mask, &Gates::none(), Mode::Deterministic);
        linear(&self.text_projection, pooled)
    }

    /// `exp(logit_scale) · normalize(images) · normalize(texts)ᵀ`: `[N, E]` and `[T, E]` ->
    /// `[N, T]`.
    pub fn similarity(&self, images: Tensor<2>, texts: Tensor<2>) -> Tensor<2> {
        let scale = self.logit_scale.val().exp().reshape([1, 1]);
        normalize(images).matmul(normalize(texts).transpose()) * scale
    }

    /// transformers' `logits_per_image` `[N, T]` of pixel values `[N, C, H, W]` against texts
    /// (ids and attention mask `[T, L]`).
    ///
    /// # Panics
    /// As [`Self::image_embeds`] and [`Self::text_embeds`].
    pub fn logits_per_image(
        &self,
        pixels: Tensor<4>,
        ids: Tensor<2, Int>,
        mask: Tensor<2, Int>,
    ) -> Tensor<2> {
        self.similarity(self.image_embeds(pixels), self.text_embeds(ids, mask))
    }
}
