//! The Vision Transformer: its config, the module, and what makes it a [`Backbone`].

use burn::config::Config;
use burn::module::{Module, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::tensor::{Device, Distribution, Tensor};

use crate::block::{BlockConfig, Encoder};
use crate::cost::{BlockShape, block_flops, head_flops, patch_embed_flops};
use crate::dropout::{Dropout, Mode};
use crate::error::{BackboneError, positive};
use crate::gates::Gates;
use crate::input::Input;
use crate::traits::{Architecture, Backbone, Members, StemLayout};
use kernels::{layer_norm, linear};

mod stem;
pub use stem::{PatchStem, patchify};

/// Configuration of a [`VisionTransformer`]; the defaults are the `vit_tiny_28` preset.
#[derive(Config, Debug)]
pub struct ViTConfig {
    /// Image height and width (square images).
    #[config(default = 28)]
    pub image_size: usize,
    /// Input channels.
    #[config(default = 1)]
    pub channels: usize,
    /// Patch side; must divide `image_size`.
    #[config(default = 7)]
    pub patch_size: usize,
    /// Width D.
    #[config(default = 64)]
    pub d_model: usize,
    /// Blocks L.
    #[config(default = 4)]
    pub n_layers: usize,
    /// Heads per block H.
    #[config(default = 4)]
    pub n_heads: usize,
    /// MLP hidden width F.
    #[config(default = 256)]
    pub d_mlp: usize,
    /// Classes C.
    #[config(default = 10)]
    pub num_classes: usize,
    /// Dropout on embeddings and on attention/MLP outputs.
    #[config(default = 0.0)]
    pub dropout: f64,
    /// Dropout on attention probabilities.
    #[config(default = 0.0)]
    pub attention_dropout: f64,
    /// LayerNorm epsilon.
    #[config(default = 1e-6)]
    pub layer_norm_eps: f64,
    /// A distillation token after the class token, read by a second head (DeiT's distilled
    /// models; see [`Distillation`]).
    #[config(default = false)]
    pub distilled: bool,
}

impl ViTConfig {
    /// Patches per image, `(image_size / patch_size)²`.
    pub fn num_patches(&self) -> usize {
        (self.image_size / self.patch_size).pow(2)
    }

    /// Tokens per image: the patches plus the class token (and the distillation token).
    pub fn num_tokens(&self) -> usize {
        self.num_patches() + 1 + usize::from(self.distilled)
    }

    /// FLOPs per image of this ViT with its blocks described by `blocks` (one entry per block),
    /// counted as [`crate::block_flops`] does.
    pub fn flops(&self, blocks: &[BlockShape]) -> u64 {
        let head_dim = self.d_model / self.n_heads;
        let stem = patch_embed_flops(
            self.num_patches(),
            self.channels,
            self.patch_size,
            self.d_model,
        );
        let encoder: u64 = (blocks.iter())
            .map(|&b| block_flops(b, self.num_tokens(), self.d_model, head_dim, self.d_mlp))
            .sum();
        let heads = 1 + u64::from(self.distilled);
        stem + encoder + heads * head_flops(self.d_model, self.num_classes)
    }

    /// FLOPs per image of the unpruned ViT.
    pub fn flops_per_sample(&self) -> u64 {
        self.flops(&vec![BlockShape::full(self.n_heads); self.n_layers])
    }

    /// The configuration of every block (pre-norm).
    pub fn block(&self) -> BlockConfig {
        BlockConfig::new(self.d_model, self.n_heads, self.d_mlp, true)
            .with_dropout(self.dropout)
            .with_attention_dropout(self.attention_dropout)
            .with_layer_norm_eps(self.layer_norm_eps)
    }

    /// Checks every field, naming an invalid one (`ViTConfig.<field>`); models that build their
    /// own layers from a ViT config (the efficient ensembles) check it the same way.
    pub fn check(&self) -> Result<(), BackboneError> {
        self.block().check("ViTConfig")?;
        positive("ViTConfig.n_layers", self.n_layers)?;
        positive("ViTConfig.patch_size", self.patch_size)?;
        positive("ViTConfig.channels", self.channels)?;
        positive("ViTConfig.num_classes", self.num_classes)?;
        if self.image_size == 0 || !self.image_size.is_multiple_of(self.patch_size) {
            return Err(BackboneError::invalid(
                "ViTConfig.image_size",
                self.image_size,
                format!("a positive multiple of patch_size = {}", self.patch_size),
            ));
        }
        Ok(())
    }

    /// Builds the model, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<VisionTransformer, BackboneError> {
        self.check()?;
        let p = self.patch_size;
        let d = self.d_model;
        let embedding = Distribution::Normal(0.0, 0.02);
        let norm = LayerNormConfig::new(d).with_epsilon(self.layer_norm_eps);
        Ok(VisionTransformer {
            patch_embed: Conv2dConfig::new([self.channels, d], [p, p])
                .with_stride([p, p])
                .init(device),
            cls_token: Param::from_tensor(Tensor::random([1, 1, d], embedding, device)),
            pos_embed: Param::from_tensor(Tensor::random(
                [1, self.num_tokens(), d],
                embedding,
                device,
            )),
            dropout: Dropout { prob: self.dropout },
            pre_norm: None,
            encoder: self.block().init_encoder(self.n_layers, device)?,
            norm: norm.init(device),
            layer_norm_eps: self.layer_norm_eps,
            head: LinearConfig::new(d, self.num_classes).init(device),
            distillation: self.distilled.then(|| Distillation {
                token: Param::from_tensor(Tensor::random([1, 1, d], embedding, device)),
                head: LinearConfig::new(d, self.num_classes).init(device),
            }),
        })
    }
}

/// Vision Transformer: patch embedding, class token, learned positions, pre-norm encoder,
/// final LayerNorm and a linear classifier on the class token (DeiT's distilled models: also a
/// distillation token with its own head, see [`Distillation`]).
///
/// Every piece is public so the encoder can be run piecewise:
/// `embed` -> `encoder.layer[i].forward` -> `norm` -> token 0 -> `head`.
#[derive(Module, Debug)]
pub struct VisionTransformer {
    /// Patch embedding: Conv2d with kernel = stride = patch, C -> D.
    pub patch_embed: Conv2d,
    /// Class token `[1, 1, D]`.
    pub cls_token: Param<Tensor<3>>,
    /// Position embeddings `[1, N + 1, D]` (class token first).
    pub pos_embed: Param<Tensor<3>>,
    /// Dropout after the position embeddings.
    pub dropout: Dropout,
    /// A LayerNorm on the embedded tokens before the first block, when the model has one
    /// (CLIP's `pre_layrnorm`, set by [`crate::ClipConfig::init`]).
    pub pre_norm: Option<LayerNorm>,
    /// The pre-norm blocks.
    pub encoder: Encoder,
    /// Final LayerNorm.
    pub norm: LayerNorm,
    /// Every LayerNorm's epsilon (see [`crate::Block::layer_norm_eps`]).
    pub layer_norm_eps: f64,
    /// Classifier D -> C.
    pub head: Linear,
    /// DeiT's distillation token and head, when the model has them.
    pub distillation: Option<Distillation>,
}

/// DeiT's distillation token (`[1, 1, D]`, placed after the class token, its position second in
/// `pos_embed`) and the head D -> C that reads it. As in `transformers` and `timm` at inference,
/// the logits are the average of the two heads' and the feature the average of the two tokens
/// after the final norm. [`crate::Classifier`], which applies [`Backbone::head`] to the feature,
/// gives the class head on that average: the same as the model's logits only once the two
/// heads are equal (as after fine-tuning one head); fused members refuse the token.
#[derive(Module, Debug)]
pub struct Distillation {
    /// The distillation token `[1, 1, D]`.
    pub token: Param<Tensor<3>>,
    /// Its classifier D -> C.
    pub head: Linear,
}

impl VisionTransformer {
    /// Images `[B, C, H, W]` -> tokens `[B, N + 1, D]` entering the first block.
    ///
    /// # Panics
    /// If the image shape differs from the configured one.
    pub fn embed(&self, images: Tensor<4>, mode: Mode) -> Tensor<3> {
        let patches = self.patch_embed.forward(images); // [B, D, h, w]
        let [batch, d, _, _] = patches.dims();
        let patches = patches.flatten::<3>(2, 3).swap_dims(1, 2); // [B, N, D]
        let mut tokens = vec![self.cls_token.val().expand([batch, 1, d])];
        tokens.extend((self.distillation.as_ref()).map(|t| t.token.val().expand([batch, 1, d])));
        tokens.push(patches);
        let tokens = Tensor::cat(tokens, 1) + self.pos_embed.val();
        let tokens = self.dropout.forward(tokens, mode);
        match &self.pre_norm {
            Some(norm) => layer_norm(norm, self.layer_norm_eps, tokens),
            None => tokens,
        }
    }

    /// The class-token feature after the final norm, `[B, D]`.
    pub fn features(&self, images: Tensor<4>, gates: &Gates, mode: Mode) -> Tensor<2> {
        let tokens = self
            .encoder
            .forward(self.embed(images, mode), gates, None, mode);
        self.class_token_feature(tokens)
    }

    /// The final norm on the class token of the last block's tokens `[B, T, D]` -> `[B, D]`
    /// (with a distillation token, the average of both normalised tokens).
    fn class_token_feature(&self, tokens: Tensor<3>) -> Tensor<2> {
        match self.distillation {
            None => self.normed_token(&tokens, 0),
            Some(_) => (self.normed_token(&tokens, 0) + self.normed_token(&tokens, 1)) / 2.0,
        }
    }

    /// Token `index` of `[B, T, D]` after the final norm, `[B, D]`. LayerNorm acts per token,
    /// so normalising only this token gives the same feature.
    fn normed_token(&self, tokens: &Tensor<3>, index: usize) -> Tensor<2> {
        layer_norm(
            &self.norm,
            self.layer_norm_eps,
            tokens.clone().narrow(1, index, 1).squeeze_dim::<2>(1),
        )
    }

    /// Logits `[B, num_classes]` (with a distillation token, the average of both heads').
    pub fn forward(&self, images: Tensor<4>, gates: &Gates, mode: Mode) -> Tensor<2> {
        let Some(distillation) = &self.distillation else {
            return linear(&self.head, self.features(images, gates, mode));
        };
        let tokens = (self.encoder).forward(self.embed(images, mode), gates, None, mode);
        let class = linear(&self.head, self.normed_token(&tokens, 0));
        (class + linear(&distillation.head, self.normed_token(&tokens, 1))) / 2.0
    }
}

impl Backbone for VisionTransformer {
    fn architecture(&self) -> Architecture {
        Architecture::Vit
    }

    fn embed(&self, input: &Input, mode: Mode) -> Tensor<3> {
        VisionTransformer::embed(self, input.clone().images(), mode)
    }

    fn features(&self, tokens: Tensor<3>, _input: &Input, _mode: Mode) -> Tensor<2> {
        self.class_token_feature(tokens)
    }

    fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    fn encoder_mut(&mut self) -> &mut Encoder {
        &mut self.encoder
    }

    fn head(&self) -> &Linear {
        &self.head
    }

    fn head_mut(&mut self) -> &mut Linear {
        &mut self.head
    }

    fn freeze_embeddings(&mut self) {
        self.patch_embed = self.patch_embed.clone().no_grad();
        self.cls_token = self.cls_token.clone().no_grad();
        self.pos_embed = self.pos_embed.clone().no_grad();
        if let Some(distillation) = &mut self.distillation {
            distillation.token = distillation.token.clone().no_grad();
        }
        self.pre_norm = self.pre_norm.take().map(Module::no_grad);
    }

    fn set_dropout(&mut self, p: f64) {
        self.dropout.prob = p;
    }

    fn tokens(&self, _text_tokens: usize) -> usize {
        self.pos_embed.dims()[1]
    }

    fn embed_flops(&self) -> u64 {
        let [_, tokens, d_model] = self.pos_embed.dims();
        let [_, channels, p, _] = self.patch_embed.weight.dims();
        let readout = 1 + usize::from(self.distillation.is_some());
        patch_embed_flops(tokens - readout, channels, p, d_model)
    }

    fn embedding_params(&self) -> usize {
        let distillation = (self.distillation.as_ref()).map_or(0, |t| t.token.num_params());
        self.patch_embed.num_params()
            + self.cls_token.num_params()
            + self.pos_embed.num_params()
            + distillation
            + self.pre_norm.as_ref().map_or(0, Module::num_params)
    }

    fn check_input(&self, _input: &Input, _field: &str) -> Result<(), BackboneError> {
        Ok(())
    }

    fn stem_layout(&self) -> Result<StemLayout, BackboneError> {
        if self.distillation.is_some() {
            // The fused stems embed and read out the class token alone.
            return Err(BackboneError::invalid(
                "distillation token",
                "present",
                "a ViT without one (fused members read the class token alone)",
            ));
        }
        let conv = &self.patch_embed;
        let [_, channels, kh, kw] = conv.weight.dims();
        let patchify = kh == kw
            && conv.stride == [kh, kw]
            && conv.dilation == [1, 1]
            && conv.groups == 1
            && matches!(conv.padding, PaddingConfig2d::Valid);
        if !patchify {
            return Err(BackboneError::invalid(
                "patch_embed",
                format!("kernel {kh}x{kw}, stride {:?}", conv.stride),
                "a square patch embedding with stride = kernel, no padding, dilation or groups",
            ));
        }
        let [_, tokens, _] = self.pos_embed.dims();
        let grid = (tokens.saturating_sub(1) as f64).sqrt().round() as usize;
        if grid * grid + 1 != tokens {
            return Err(BackboneError::invalid(
                "pos_embed tokens",
                tokens,
                "a square number of patches plus the class token",
            ));
        }
        let mut layout = vec![("channels", channels), ("patch", kh), ("grid", grid)];
        // Only CLIP's vision tower has one: a plain ViT's layout stays as it was.
        layout.extend(self.pre_norm.is_some().then_some(("pre_norm", 1)));
        Ok(StemLayout(layout))
    }
}

impl Members for VisionTransformer {
    type Stems = PatchStem;

    fn stems(members: &[&Self]) -> Result<PatchStem, BackboneError> {
        PatchStem::of(members)
    }
}
