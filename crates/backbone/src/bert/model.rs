//! The BERT encoder and sequence classifier: config, modules, and what makes the classifier a
//! [`Backbone`].

use burn::config::Config;
use burn::module::Module;
use burn::nn::{EmbeddingConfig, Initializer, LayerNormConfig, Linear, LinearConfig};
use burn::tensor::{Device, Int, Tensor};

use crate::attention::padding_mask;
use crate::block::{BlockConfig, Encoder};
use crate::cost::{BlockShape, block_flops, head_flops};
use crate::dropout::{Dropout, Mode};
use crate::error::{BackboneError, positive};
use crate::gates::Gates;
use crate::input::Input;
use crate::traits::{Architecture, Backbone, Members, StemLayout};
use kernels::linear;

use super::embeddings::BertEmbeddings;
use super::pooling::{Pooling, pool};
use super::stem::TokenStem;

/// Configuration of a [`BertModel`]; the defaults are all-MiniLM-L6-v2's shape (`importers`'
/// `minilm_l6`).
#[derive(Config, Debug)]
pub struct BertConfig {
    /// Vocabulary size.
    #[config(default = 30522)]
    pub vocab_size: usize,
    /// Width D.
    #[config(default = 384)]
    pub d_model: usize,
    /// Blocks L.
    #[config(default = 6)]
    pub n_layers: usize,
    /// Heads per block H.
    #[config(default = 12)]
    pub n_heads: usize,
    /// MLP hidden width F.
    #[config(default = 1536)]
    pub d_mlp: usize,
    /// Longest sequence the position table covers.
    #[config(default = 512)]
    pub max_position: usize,
    /// Token-type (segment) vocabulary size.
    #[config(default = 2)]
    pub type_vocab_size: usize,
    /// LayerNorm epsilon.
    #[config(default = 1e-12)]
    pub layer_norm_eps: f64,
    /// Dropout on embeddings and on attention/MLP outputs.
    #[config(default = 0.1)]
    pub dropout: f64,
    /// Dropout on attention probabilities.
    #[config(default = 0.1)]
    pub attention_dropout: f64,
}

impl BertConfig {
    /// FLOPs per sequence of `tokens` tokens for the encoder with blocks described by `blocks`
    /// and a classifier of `num_classes` classes (the embedding lookups count 0).
    pub fn flops(&self, tokens: usize, num_classes: usize, blocks: &[BlockShape]) -> u64 {
        let head_dim = self.d_model / self.n_heads;
        let encoder: u64 = (blocks.iter())
            .map(|&b| block_flops(b, tokens, self.d_model, head_dim, self.d_mlp))
            .sum();
        encoder + head_flops(self.d_model, num_classes)
    }

    /// The configuration of every block (post-norm).
    pub fn block(&self) -> BlockConfig {
        BlockConfig::new(self.d_model, self.n_heads, self.d_mlp, false)
            .with_dropout(self.dropout)
            .with_attention_dropout(self.attention_dropout)
            .with_layer_norm_eps(self.layer_norm_eps)
    }

    /// Builds the encoder, or says which field is invalid.
    pub fn init(&self, device: &Device) -> Result<BertModel, BackboneError> {
        self.block().check("BertConfig")?;
        positive("BertConfig.n_layers", self.n_layers)?;
        positive("BertConfig.vocab_size", self.vocab_size)?;
        positive("BertConfig.max_position", self.max_position)?;
        positive("BertConfig.type_vocab_size", self.type_vocab_size)?;
        // BERT initialises embeddings with N(0, 0.02).
        let table = |n: usize| {
            EmbeddingConfig::new(n, self.d_model)
                .with_initializer(Initializer::Normal {
                    mean: 0.0,
                    std: 0.02,
                })
                .init(device)
        };
        Ok(BertModel {
            embeddings: BertEmbeddings {
                word_embeddings: table(self.vocab_size),
                position_embeddings: table(self.max_position),
                token_type_embeddings: table(self.type_vocab_size),
                layer_norm: LayerNormConfig::new(self.d_model)
                    .with_epsilon(self.layer_norm_eps)
                    .init(device),
                layer_norm_eps: self.layer_norm_eps,
                dropout: Dropout { prob: self.dropout },
            },
            encoder: self.block().init_encoder(self.n_layers, device)?,
        })
    }

    /// Builds the encoder with a sequence classifier on its mean-pooled output.
    pub fn init_classifier(
        &self,
        num_classes: usize,
        device: &Device,
    ) -> Result<BertClassifier, BackboneError> {
        self.init_pooled_classifier(num_classes, Pooling::Mean, device)
    }

    /// Builds the encoder with a sequence classifier reading its output by `pooling` (with
    /// [`Pooling::Cls`], a pooler `D -> D` before the dropout and the classifier).
    pub fn init_pooled_classifier(
        &self,
        num_classes: usize,
        pooling: Pooling,
        device: &Device,
    ) -> Result<BertClassifier, BackboneError> {
        positive("num_classes", num_classes)?;
        let pooler = (pooling == Pooling::Cls)
            .then(|| LinearConfig::new(self.d_model, self.d_model).init(device));
        Ok(BertClassifier {
            bert: self.init(device)?,
            pooler,
            dropout: Dropout { prob: self.dropout },
            classifier: LinearConfig::new(self.d_model, num_classes).init(device),
        })
    }
}

/// BERT-style encoder (post-norm blocks); field names follow Hugging Face where Burn allows
/// (`encoder.layer.N`; see [`Block`](crate::Block) for the names inside a block).
#[derive(Module, Debug)]
pub struct BertModel {
    /// The embedding layer.
    pub embeddings: BertEmbeddings,
    /// The post-norm blocks.
    pub encoder: Encoder,
}

impl BertModel {
    /// Hidden states `[B, T, D]` for ids `[B, T]` and an attention mask `[B, T]` (1 = token,
    /// 0 = padding; padded keys are ignored by every query).
    pub fn forward(
        &self,
        ids: Tensor<2, Int>,
        attention_mask: Tensor<2, Int>,
        gates: &Gates,
        mode: Mode,
    ) -> Tensor<3> {
        let x = self.embeddings.forward(ids, None, mode);
        self.encoder
            .forward(x, gates, Some(padding_mask(attention_mask)), mode)
    }
}

/// Sequence classifier: pooled BERT features ([`Pooling`]: masked mean, or the first token
/// through the pooler and tanh) -> dropout -> Linear D -> C.
#[derive(Module, Debug)]
pub struct BertClassifier {
    /// The encoder.
    pub bert: BertModel,
    /// BERT's pooler `D -> D` (tanh over the first token), or `None` for mean pooling.
    pub pooler: Option<Linear>,
    /// Dropout on the pooled feature.
    pub dropout: Dropout,
    /// Classifier D -> C.
    pub classifier: Linear,
}

impl BertClassifier {
    /// How the classifier pools: [`Pooling::Cls`] exactly when it has a pooler.
    pub fn pooling(&self) -> Pooling {
        match self.pooler {
            Some(_) => Pooling::Cls,
            None => Pooling::Mean,
        }
    }

    /// Pooled feature `[B, D]` (the pooler output with [`Pooling::Cls`]).
    pub fn features(
        &self,
        ids: Tensor<2, Int>,
        attention_mask: Tensor<2, Int>,
        gates: &Gates,
        mode: Mode,
    ) -> Tensor<2> {
        let hidden = self.bert.forward(ids, attention_mask.clone(), gates, mode);
        pool(hidden, attention_mask, self.pooler.as_ref())
    }

    /// Logits `[B, C]`.
    pub fn forward(
        &self,
        ids: Tensor<2, Int>,
        attention_mask: Tensor<2, Int>,
        gates: &Gates,
        mode: Mode,
    ) -> Tensor<2> {
        let pooled = self.features(ids, attention_mask, gates, mode);
        linear(&self.classifier, self.dropout.forward(pooled, mode))
    }
}

impl Backbone for BertClassifier {
    fn architecture(&self) -> Architecture {
        Architecture::Bert
    }

    fn embed(&self, input: &Input, mode: Mode) -> Tensor<3> {
        let Input::Tokens { ids, .. } = input else {
            unreachable!("checked by Classifier")
        };
        self.bert.embeddings.forward(ids.clone(), None, mode)
    }

    fn features(&self, tokens: Tensor<3>, input: &Input, mode: Mode) -> Tensor<2> {
        let Input::Tokens { mask, .. } = input else {
            unreachable!("checked by Classifier")
        };
        let pooled = pool(tokens, mask.clone(), self.pooler.as_ref());
        self.dropout.forward(pooled, mode)
    }

    fn encoder(&self) -> &Encoder {
        &self.bert.encoder
    }

    fn encoder_mut(&mut self) -> &mut Encoder {
        &mut self.bert.encoder
    }

    fn head(&self) -> &Linear {
        &self.classifier
    }

    fn head_mut(&mut self) -> &mut Linear {
        &mut self.classifier
    }

    fn freeze_embeddings(&mut self) {
        self.bert.embeddings = self.bert.embeddings.clone().no_grad();
    }

    fn set_dropout(&mut self, p: f64) {
        self.bert.embeddings.dropout.prob = p;
        self.dropout.prob = p;
    }

    fn tokens(&self, text_tokens: usize) -> usize {
        text_tokens
    }

    /// The table lookups count 0; the pooler, when there is one, is counted here.
    fn embed_flops(&self) -> u64 {
        (self.pooler.as_ref()).map_or(0, |p| {
            let [d_in, d_out] = p.weight.dims();
            head_flops(d_in, d_out)
        })
    }

    fn embedding_params(&self) -> usize {
        self.bert.embeddings.num_params()
    }

    /// Token ids and a mask of one shape, no longer than the position table, ids in the
    /// vocabulary.
    fn check_input(&self, input: &Input, field: &str) -> Result<(), BackboneError> {
        let Input::Tokens { ids, mask } = input else {
            unreachable!("checked by Classifier")
        };
        let tables = &self.bert.embeddings;
        let [vocab, _] = tables.word_embeddings.weight.dims();
        let [positions, _] = tables.position_embeddings.weight.dims();
        let [_, len] = ids.dims();
        if ids.dims() != mask.dims() {
            return Err(BackboneError::invalid(
                field,
                format!("ids {:?} with mask {:?}", ids.dims(), mask.dims()),
                "an attention mask of the ids' shape",
            ));
        }
        if len > positions {
            return Err(BackboneError::invalid(
                field,
                format!("{len} tokens per sequence"),
                format!("at most {positions}, the model's position table"),
            ));
        }
        let low: i64 = ids.clone().min().into_scalar();
        let high: i64 = ids.clone().max().into_scalar();
        if low < 0 || high >= vocab as i64 {
            return Err(BackboneError::invalid(
                field,
                format!("token ids from {low} to {high}"),
                format!("ids in 0..{vocab}, the model's vocabulary"),
            ));
        }
        Ok(())
    }

    fn stem_layout(&self) -> Result<StemLayout, BackboneError> {
        let e = &self.bert.embeddings;
        let [d_model, _] = self.classifier.weight.dims();
        let tables = [
            &e.word_embeddings,
            &e.position_embeddings,
            &e.token_type_embeddings,
        ]
        .map(|t| t.weight.dims());
        if tables.iter().any(|[_, d]| *d != d_model) {
            return Err(BackboneError::invalid(
                "embedding tables",
                format!("{tables:?}"),
                format!("word, position and segment tables of width {d_model}"),
            ));
        }
        Ok(StemLayout(vec![
            ("vocab", tables[0][0]),
            ("positions", tables[1][0]),
            ("segments", tables[2][0]),
        ]))
    }
}

impl Members for BertClassifier {
    type Stems = TokenStem;

    fn stems(members: &[&Self]) -> Result<TokenStem, BackboneError> {
        let tables: Vec<_> = members.iter().map(|b| &b.bert.embeddings).collect();
        let poolers: Vec<_> = members.iter().map(|b| b.pooler.as_ref()).collect();
        TokenStem::of(&tables, &poolers)
    }
}
