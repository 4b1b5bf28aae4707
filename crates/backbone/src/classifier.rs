//! [`Classifier`]: the Vision Transformer or the BERT sequence classifier behind one interface,
//! so that methods which only touch the encoder blocks (head pruning, adapters, ensembles) work
//! on both.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::Tensor;

use crate::bert::{BertClassifier, mean_pool};
use crate::block::Encoder;
use crate::cost::{BlockShape, block_flops, head_flops, patch_embed_flops};
use crate::dropout::Mode;
use crate::gates::Gates;
use crate::input::Input;
use crate::vit::VisionTransformer;

/// An encoder classifier: embed the input, run the blocks, read a feature out, classify it.
///
/// `forward(x) = head(features(encoder(embed(x)), x))`; the pieces are exposed so that callers
/// can run the blocks themselves (fused members, adapted attention).
#[derive(Module, Debug)]
pub enum Classifier {
    /// Images: class-token readout after the final LayerNorm.
    Vit(VisionTransformer),
    /// Token sequences: masked mean pooling, dropout.
    Bert(BertClassifier),
}

impl From<VisionTransformer> for Classifier {
    fn from(v: VisionTransformer) -> Self {
        Self::Vit(v)
    }
}

impl From<BertClassifier> for Classifier {
    fn from(b: BertClassifier) -> Self {
        Self::Bert(b)
    }
}

impl Classifier {
    /// Logits `[B, C]`.
    ///
    /// # Panics
    /// If the input is of the other modality (images for BERT, tokens for the ViT).
    pub fn forward(&self, input: Input, gates: &Gates, mode: Mode) -> Tensor<2> {
        let tokens =
            self.encoder()
                .forward(self.embed(&input, mode), gates, input.key_padding(), mode);
        self.head().forward(self.features(tokens, &input, mode))
    }

    /// The tokens `[B, T, D]` entering the first block.
    pub fn embed(&self, input: &Input, mode: Mode) -> Tensor<3> {
        match (self, input) {
            (Self::Vit(v), Input::Images(x)) => v.embed(x.clone(), mode),
            (Self::Bert(b), Input::Tokens { ids, .. }) => {
                b.bert.embeddings.forward(ids.clone(), None, mode)
            }
            _ => panic!("{}", self.mismatch()),
        }
    }

    /// The feature `[B, D]` the head reads from the last block's tokens `[B, T, D]` (ViT: the
    /// class token after the final norm; BERT: the masked mean, then dropout).
    pub fn features(&self, tokens: Tensor<3>, input: &Input, mode: Mode) -> Tensor<2> {
        match (self, input) {
            (Self::Vit(v), Input::Images(_)) => {
                // LayerNorm acts per token: normalising the class token alone is the same.
                v.norm.forward(tokens.narrow(1, 0, 1).squeeze_dim::<2>(1))
            }
            (Self::Bert(b), Input::Tokens { mask, .. }) => {
                b.dropout.forward(mean_pool(tokens, mask.clone()), mode)
            }
            _ => panic!("{}", self.mismatch()),
        }
    }

    /// The blocks.
    pub fn encoder(&self) -> &Encoder {
        match self {
            Self::Vit(v) => &v.encoder,
            Self::Bert(b) => &b.bert.encoder,
        }
    }

    pub fn encoder_mut(&mut self) -> &mut Encoder {
        match self {
            Self::Vit(v) => &mut v.encoder,
            Self::Bert(b) => &mut b.bert.encoder,
        }
    }

    /// The classifier `D -> C`.
    pub fn head(&self) -> &Linear {
        match self {
            Self::Vit(v) => &v.head,
            Self::Bert(b) => &b.classifier,
        }
    }

    pub fn head_mut(&mut self) -> &mut Linear {
        match self {
            Self::Vit(v) => &mut v.head,
            Self::Bert(b) => &mut b.classifier,
        }
    }

    /// Only the head trains: every other parameter stops requiring gradients (so the
    /// optimiser leaves it untouched, weight decay included).
    pub fn freeze_all_but_head(self) -> Self {
        let fresh = |t: Tensor<2>| Param::from_tensor(t.detach());
        let head = self.head();
        let head = Linear {
            weight: fresh(head.weight.val()),
            bias: (head.bias.as_ref()).map(|b| Param::from_tensor(b.val().detach())),
        };
        let mut frozen = self.no_grad();
        *frozen.head_mut() = head;
        frozen
    }

    /// The input embedding stops requiring gradients (BERT: the word, position and segment
    /// tables and their LayerNorm; ViT: the patch embedding, class token and positions); the
    /// blocks, the final norm and the head train as before. Members fine-tuned so keep their
    /// base model's embedding bit for bit, which Hydra's fusion then stores once.
    pub fn freeze_embeddings(self) -> Self {
        match self {
            Self::Vit(mut v) => {
                v.patch_embed = v.patch_embed.no_grad();
                v.cls_token = v.cls_token.no_grad();
                v.pos_embed = v.pos_embed.no_grad();
                Self::Vit(v)
            }
            Self::Bert(mut b) => {
                b.bert.embeddings = b.bert.embeddings.no_grad();
                Self::Bert(b)
            }
        }
    }

    /// The same model with dropout `p` on embeddings, block outputs (and BERT's pooled feature)
    /// and `attention_p` on attention probabilities: a pretrained checkpoint's rates replaced by
    /// the experiment's.
    pub fn with_dropout(mut self, p: f64, attention_p: f64) -> Self {
        match &mut self {
            Self::Vit(v) => v.dropout.prob = p,
            Self::Bert(b) => {
                b.bert.embeddings.dropout.prob = p;
                b.dropout.prob = p;
            }
        }
        for block in &mut self.encoder_mut().layer {
            block.dropout.prob = p;
            block.attention.dropout.prob = attention_p;
        }
        self
    }

    /// Whether the model reads token sequences.
    pub fn is_text(&self) -> bool {
        matches!(self, Self::Bert(_))
    }

    /// FLOPs per sample, counted as [`crate::block_flops`] does, from the module's own shapes
    /// (pruned heads are gone): for a ViT on its fixed token count, for BERT on a sequence of
    /// `text_tokens` tokens.
    pub fn flops(&self, text_tokens: usize) -> u64 {
        let [d_model, classes] = self.head().weight.dims();
        let (tokens, stem) = match self {
            Self::Vit(v) => {
                let [_, tokens, _] = v.pos_embed.dims();
                let [_, channels, p, _] = v.patch_embed.weight.dims();
                (tokens, patch_embed_flops(tokens - 1, channels, p, d_model))
            }
            Self::Bert(_) => (text_tokens, 0),
        };
        let encoder: u64 = (self.encoder().layer.iter())
            .map(|b| {
                let heads = b.attention.n_heads;
                let head_dim = b.attention.query.weight.dims()[1] / heads.max(1);
                let d_mlp = b.mlp.fc1.weight.dims()[1];
                block_flops(BlockShape::full(heads), tokens, d_model, head_dim, d_mlp)
            })
            .sum();
        stem + encoder + head_flops(d_model, classes)
    }

    fn mismatch(&self) -> &'static str {
        match self {
            Self::Vit(_) => "the Vision Transformer takes images, not token sequences",
            Self::Bert(_) => "the BERT classifier takes token sequences, not images",
        }
    }
}
