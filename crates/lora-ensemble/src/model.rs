use backbone::{Block, Classifier, Input, Mode, attend, residual};
use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::{Bool, Tensor};
use seam::Trainable;
use seam::{EnsembleModel, MemberOutputs};

use crate::adapters::{Adapters, BlockAdapters, LowRank};

/// A frozen encoder classifier (ViT or BERT) shared by N members, each with its own low-rank
/// adapters on the Q, K, V and output projections of every block and its own classifier.
/// Training runs all members in one pass over the input repeated N times; evaluation merges
/// each member's adapters into its weights ([`LoraEnsemble::forward_merged`]).
#[derive(Module, Debug)]
pub struct LoraEnsemble {
    /// The shared backbone; its parameters do not require gradients. Its own classifier
    /// ([`Classifier::head`]) is unused: each member has one in `adapters.heads`.
    pub backbone: Classifier,
    /// Everything that differs between members.
    pub adapters: Adapters,
    /// Adapter scale s.
    pub scale: f64,
    /// Text: the sequence length at which [`EnsembleModel::flops_per_sample`] counts (a ViT's
    /// token count is fixed by its shapes).
    pub text_tokens: usize,
    /// Evaluation runs members in groups of at most this many rows (members × samples):
    /// [`LoraConfig`](crate::LoraConfig)'s `eval_rows`, 256 by default.
    pub eval_rows: usize,
}

/// How a block's adapted projections are computed.
#[derive(Clone, Copy)]
enum Projection {
    /// Base weight on the whole stack plus the batched low-rank path (training, MC sampling).
    Adapter,
    /// Members `start..start + n` with merged weights (evaluation), n the stack's members.
    Merged { start: usize },
}

impl LoraEnsemble {
    /// Member features `[N, B, D]` (ViT: the class token after the final norm; BERT: the masked
    /// mean of the last tokens, then dropout); `mode` turns the backbone's dropout on or off.
    ///
    /// # Panics
    /// If the input is of the other modality than the backbone (see [`Classifier::embed`]).
    pub fn member_features(&self, input: Input, mode: Mode) -> Tensor<3> {
        let members = self.members();
        // Member-major: rows n·B..(n+1)·B are member n's copy of the batch.
        let stacked = input.repeat(members);
        let x = self.backbone.embed(&stacked, mode);
        self.encode(x, &stacked, members, Projection::Adapter, mode)
    }

    /// Member logits `[N, B, C]` by the vectorised adapter path.
    ///
    /// # Panics
    /// If the input is of the other modality than the backbone.
    pub fn forward(&self, input: Input, mode: Mode) -> Tensor<3> {
        self.adapters
            .heads
            .forward(self.member_features(input, mode))
    }

    /// Member logits `[N, B, C]` without dropout, each member's adapters merged into its
    /// weights (`W0 + s·A_n B_n`): what evaluation runs. The frozen input embedding is computed
    /// once for all members, and members run in groups of at most [`Self::eval_rows`] rows
    /// (members × samples, at least one member), so evaluation memory stays that of one such
    /// pass however many members there are. Equal to [`Self::forward`] up to float rounding.
    ///
    /// # Panics
    /// If the input is of the other modality than the backbone.
    pub fn forward_merged(&self, input: Input) -> Tensor<3> {
        self.outputs_merged(input).logits
    }

    /// [`Self::forward_merged`]'s member logits `[N, B, C]` with each member's feature readout
    /// `[N, B, D]` (what its classifier reads).
    ///
    /// # Panics
    /// If the input is of the other modality than the backbone.
    pub fn outputs_merged(&self, input: Input) -> MemberOutputs {
        let (members, batch) = (self.members(), input.batch_size());
        let group = (self.eval_rows / batch.max(1)).clamp(1, members);
        let mode = Mode::Deterministic;
        let embedded = self.backbone.embed(&input, mode);
        let groups = (0..members).step_by(group).map(|start| {
            let n = group.min(members - start);
            let stacked = input.clone().repeat(n);
            let x = embedded.clone().repeat_dim(0, n);
            let features = self.encode(x, &stacked, n, Projection::Merged { start }, mode);
            let logits = self.adapters.heads.forward_members(features.clone(), start);
            (logits, features)
        });
        let (logits, features): (Vec<_>, Vec<_>) = groups.unzip();
        MemberOutputs {
            logits: Tensor::cat(logits, 0),
            features: Tensor::cat(features, 0),
        }
    }

    /// The blocks and the feature readout on the member-major stack `[n·B, T, D]` of `n`
    /// members (`stacked`: the input repeated n times) -> features `[n, B, D]`.
    fn encode(
        &self,
        mut x: Tensor<3>,
        stacked: &Input,
        n: usize,
        projection: Projection,
        mode: Mode,
    ) -> Tensor<3> {
        let key_padding = stacked.key_padding();
        for (block, adapters) in self
            .backbone
            .encoder()
            .layer
            .iter()
            .zip(&self.adapters.blocks)
        {
            x = self.block(block, adapters, x, key_padding.clone(), n, projection, mode);
        }
        let features = self.backbone.features(x, stacked, mode);
        let [rows, width] = features.dims();
        features.reshape([n, rows / n, width])
    }

    /// [`backbone::Block::forward`] (no gates) with adapted attention, on the member-major
    /// stack `[n·B, T, D]` with its key-padding mask `[n·B, T]` (true = padding; `None` for
    /// images).
    #[allow(clippy::too_many_arguments)]
    fn block(
        &self,
        block: &Block,
        adapters: &BlockAdapters,
        x: Tensor<3>,
        key_padding: Option<Tensor<2, Bool>>,
        n: usize,
        projection: Projection,
        mode: Mode,
    ) -> Tensor<3> {
        let attn = |h| {
            let a = self.attention(block, adapters, h, key_padding, n, projection, mode);
            block.dropout.forward(a, mode)
        };
        let mlp = |h| block.dropout.forward(block.mlp.forward(h, None), mode);
        residual(
            x,
            block.norm_first,
            Some((|h| block.norm1_forward(h), attn)),
            (|h| block.norm2_forward(h), mlp),
        )
    }

    /// Self-attention with every projection adapted: `[n·B, T, D] -> [n·B, T, D]`.
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        block: &Block,
        adapters: &BlockAdapters,
        x: Tensor<3>,
        key_padding: Option<Tensor<2, Bool>>,
        n: usize,
        projection: Projection,
        mode: Mode,
    ) -> Tensor<3> {
        let attention = &block.attention;
        let [rows, tokens, _] = x.dims();
        // [n·B, T, D] and [n, B·T, D] share one memory layout: the reshapes are free.
        let project = |adapter: &LowRank, base: &Linear, h: Tensor<3>| {
            let width = h.dims()[2];
            let stacked = h.reshape([n, rows / n * tokens, width]);
            let y = match projection {
                Projection::Adapter => adapter.project(base, stacked, self.scale),
                Projection::Merged { start } => {
                    adapter.project_merged(base, stacked, self.scale, start, n)
                }
            };
            let out = y.dims()[2];
            y.reshape([rows, tokens, out])
        };
        let q = project(&adapters.query, &attention.query, x.clone());
        let k = project(&adapters.key, &attention.key, x.clone());
        let v = project(&adapters.value, &attention.value, x);
        let context = attend(
            [q, k, v],
            attention.n_heads,
            None,
            key_padding,
            &attention.dropout,
            mode,
        );
        project(&adapters.output, &attention.output, context)
    }
}

impl EnsembleModel for LoraEnsemble {
    fn members(&self) -> usize {
        self.adapters.heads.bias.lazy_shape().dims::<2>()[0]
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        self.outputs_merged(input)
    }

    /// Backbone (its unused classifier included) plus every member's adapters and classifier.
    fn num_params(&self) -> usize {
        Module::num_params(self)
    }

    /// What evaluation ([`Self::forward_merged`]) computes: N full backbone passes
    /// ([`Classifier::flops`], whose classifier has the shape of each member's). The merge,
    /// `D_in·r·D_out` multiply-accumulates per member and projection, is paid once per batch,
    /// not per sample, and is left out. Text counts sequences of `text_tokens` tokens.
    fn flops_per_sample(&self) -> u64 {
        self.members() as u64 * self.backbone.flops(self.text_tokens)
    }

    fn in_precision(&self, dtype: burn::tensor::FloatDType) -> Box<dyn EnsembleModel> {
        seam::precision::InPrecision::cast(self.clone(), dtype)
    }
}

impl Trainable for LoraEnsemble {
    /// Member logits `[N, B, C]` with the backbone's dropout on.
    fn train_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input, Mode::Stochastic)
    }

    /// Unmerged, so that it is the trained function itself (not up to rounding).
    fn eval_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input, Mode::Deterministic)
    }
}
