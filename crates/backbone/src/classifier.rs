//! [`Classifier`]: every backbone behind one interface, so that methods which only touch the
//! encoder blocks (head pruning, adapters, ensembles) work on all of them.
//!
//! A backbone is a module implementing [`Backbone`] and [`Members`] (`traits.rs`), plus its
//! variant in [`Classifier`] and [`MemberStems`] and its arm in their matches, written out here.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::Tensor;

use crate::bert::{BertClassifier, TokenStem};
use crate::block::Encoder;
use crate::clip::ClipZeroShot;
use crate::cost::{BlockShape, block_flops, head_flops};
use crate::dropout::Mode;
use crate::error::BackboneError;
use crate::gates::Gates;
use crate::input::{Input, InputKind};
use crate::traits::{Architecture, Backbone, GroupedStem, Members};
use crate::vit::{PatchStem, VisionTransformer};
use kernels::linear;

/// A base model: one of the registered backbones. A new backbone is a variant here, one in
/// [`MemberStems`], an arm in each `match` below and a line in the `from_models!` list.
// A model holds one and moves it rarely: the ViT variant being larger than BERT's (DeiT's
// optional distillation token and head held inline; Burn has no boxed module) costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum Classifier {
    /// Images: class-token readout after the final LayerNorm.
    Vit(VisionTransformer),
    /// Token sequences: masked mean pooling or BERT's `[CLS]` pooler ([`crate::Pooling`]), dropout.
    Bert(BertClassifier),
    /// Images: CLIP's normalised image embedding against its prompts' class embeddings.
    ClipZeroShot(ClipZeroShot),
}

/// The stems of fused members of one backbone.
// As for Classifier: held once per fused model, and Burn has no boxed module (the ViT's stems
// grew with CLIP's optional LayerNorm and projection).
#[allow(clippy::large_enum_variant)]
#[derive(Module, Debug)]
pub enum MemberStems {
    Vit(PatchStem),
    Bert(TokenStem),
}

/// `From<Model> for Classifier` for each backbone.
macro_rules! from_models {
    ($($variant:ident($model:ty)),+ $(,)?) => {
        $(impl From<$model> for Classifier {
            fn from(model: $model) -> Self {
                Self::$variant(model)
            }
        })+
    };
}

from_models!(
    Vit(VisionTransformer),
    Bert(BertClassifier),
    ClipZeroShot(ClipZeroShot)
);

impl Classifier {
    /// The backbone behind the variant.
    pub fn backbone(&self) -> &dyn Backbone {
        match self {
            Self::Vit(model) => model,
            Self::Bert(model) => model,
            Self::ClipZeroShot(model) => model,
        }
    }

    pub fn backbone_mut(&mut self) -> &mut dyn Backbone {
        match self {
            Self::Vit(model) => model,
            Self::Bert(model) => model,
            Self::ClipZeroShot(model) => model,
        }
    }

    /// The stems of `members` fused (members of one backbone, checked beforehand to share
    /// [`Backbone::stem_layout`]).
    pub fn stems(members: &[Classifier]) -> Result<MemberStems, BackboneError> {
        let first = members.first().ok_or_else(|| {
            BackboneError::invalid("members", "an empty list", "at least one member")
        })?;
        Ok(match first {
            Self::Vit(_) => {
                MemberStems::Vit(VisionTransformer::stems(&same(members, |c| match c {
                    Self::Vit(model) => Some(model),
                    _ => None,
                })?)?)
            }
            Self::Bert(_) => {
                MemberStems::Bert(BertClassifier::stems(&same(members, |c| match c {
                    Self::Bert(model) => Some(model),
                    _ => None,
                })?)?)
            }
            Self::ClipZeroShot(_) => {
                MemberStems::Vit(ClipZeroShot::stems(&same(members, |c| match c {
                    Self::ClipZeroShot(model) => Some(model),
                    _ => None,
                })?)?)
            }
        })
    }
}

/// Every member as the backbone `pick` takes, or an error when one is of another backbone.
fn same<'m, M>(
    members: &'m [Classifier],
    pick: impl Fn(&'m Classifier) -> Option<&'m M>,
) -> Result<Vec<&'m M>, BackboneError> {
    let same: Vec<&M> = members.iter().filter_map(pick).collect();
    if same.len() != members.len() {
        return Err(BackboneError::invalid(
            "members",
            "members of different backbones",
            "members of one backbone",
        ));
    }
    Ok(same)
}

impl MemberStems {
    pub fn stem(&self) -> &dyn GroupedStem {
        match self {
            Self::Vit(stems) => stems,
            Self::Bert(stems) => stems,
        }
    }
}

impl Classifier {
    /// Logits `[B, C]`.
    ///
    /// # Panics
    /// If the input is of the other modality (images for BERT, tokens for the ViT).
    pub fn forward(&self, input: Input, gates: &Gates, mode: Mode) -> Tensor<2> {
        self.outputs(input, gates, mode).0
    }

    /// Logits `[B, C]` and the feature `[B, D]` the head read to give them.
    ///
    /// # Panics
    /// If the input is of the other modality.
    pub fn outputs(&self, input: Input, gates: &Gates, mode: Mode) -> (Tensor<2>, Tensor<2>) {
        let tokens =
            self.encoder()
                .forward(self.embed(&input, mode), gates, input.key_padding(), mode);
        let features = self.features(tokens, &input, mode);
        (linear(self.head(), features.clone()), features)
    }

    /// The tokens `[B, T, D]` entering the first block.
    ///
    /// # Panics
    /// If the input is of the other modality.
    pub fn embed(&self, input: &Input, mode: Mode) -> Tensor<3> {
        self.expect(input).embed(input, mode)
    }

    /// The feature `[B, D]` the head reads from the last block's tokens `[B, T, D]` (ViT: the
    /// class token after the final norm; BERT: its pooling, then dropout).
    ///
    /// # Panics
    /// If the input is of the other modality.
    pub fn features(&self, tokens: Tensor<3>, input: &Input, mode: Mode) -> Tensor<2> {
        self.expect(input).features(tokens, input, mode)
    }

    /// The blocks.
    pub fn encoder(&self) -> &Encoder {
        self.backbone().encoder()
    }

    pub fn encoder_mut(&mut self) -> &mut Encoder {
        self.backbone_mut().encoder_mut()
    }

    /// The classifier `D -> C`.
    pub fn head(&self) -> &Linear {
        self.backbone().head()
    }

    pub fn head_mut(&mut self) -> &mut Linear {
        self.backbone_mut().head_mut()
    }

    /// Which family the model is.
    pub fn architecture(&self) -> Architecture {
        self.backbone().architecture()
    }

    /// What the model reads.
    pub fn reads(&self) -> InputKind {
        self.architecture().reads()
    }

    /// What it is and reads, for messages: "a Vision Transformer (images)".
    pub fn kind(&self) -> String {
        let architecture = self.architecture();
        format!("{architecture} ({})", architecture.reads())
    }

    /// Whether the model reads token sequences.
    pub fn is_text(&self) -> bool {
        self.reads() == InputKind::Tokens
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
    pub fn freeze_embeddings(mut self) -> Self {
        self.backbone_mut().freeze_embeddings();
        self
    }

    /// The same model with dropout `p` on embeddings, block outputs (and BERT's pooled feature)
    /// and `attention_p` on attention probabilities: a pretrained checkpoint's rates replaced by
    /// the experiment's.
    pub fn with_dropout(mut self, p: f64, attention_p: f64) -> Self {
        self.backbone_mut().set_dropout(p);
        for block in &mut self.encoder_mut().layer {
            block.dropout.prob = p;
            block.attention.dropout.prob = attention_p;
        }
        self
    }

    /// FLOPs per sample, counted as [`crate::block_flops`] does, from the module's own shapes
    /// (pruned heads are gone): for a ViT on its fixed token count, for BERT on a sequence of
    /// `text_tokens` tokens.
    pub fn flops(&self, text_tokens: usize) -> u64 {
        let shapes: Vec<_> = (self.encoder().layer.iter())
            .map(|b| BlockShape::full(b.attention.n_heads))
            .collect();
        self.flops_with(&shapes, text_tokens)
    }

    /// FLOPs per sample with block l shaped `blocks[l]` (e.g. padded to more heads), the head
    /// size, MLP width and embedding the model's own.
    pub fn flops_with(&self, blocks: &[BlockShape], text_tokens: usize) -> u64 {
        // The blocks' width: the head may read another (CLIP's projection).
        let [head_in, classes] = self.head().weight.dims();
        let d_model = (self.encoder().layer.first()).map_or(head_in, |b| b.norm1.gamma.dims()[0]);
        let tokens = self.backbone().tokens(text_tokens);
        let encoder: u64 = (self.encoder().layer.iter().zip(blocks))
            .map(|(b, &shape)| {
                let heads = b.attention.n_heads;
                let head_dim = b.attention.query.weight.dims()[1] / heads.max(1);
                let d_mlp = b.mlp.fc1.weight.dims()[1];
                block_flops(shape, tokens, d_model, head_dim, d_mlp)
            })
            .sum();
        self.backbone().embed_flops() + encoder + head_flops(head_in, classes)
    }

    /// Checks that the model reads `input` (named `field` in errors): its modality, then what
    /// the backbone checks (BERT: ids in the vocabulary, no longer than the position table).
    pub fn check_input(&self, input: &Input, field: &str) -> Result<(), BackboneError> {
        let (backbone, architecture) = (self.backbone(), self.architecture());
        if input.kind() != architecture.reads() {
            return Err(BackboneError::invalid(
                field,
                input.kind(),
                format!("{}: the model is {architecture}", architecture.reads()),
            ));
        }
        backbone.check_input(input, field)
    }

    /// The backbone, after checking that it reads `input`.
    fn expect(&self, input: &Input) -> &dyn Backbone {
        let (backbone, architecture) = (self.backbone(), self.architecture());
        if input.kind() != architecture.reads() {
            panic!(
                "{architecture} takes {}, not {}",
                architecture.reads(),
                input.kind()
            );
        }
        backbone
    }
}
