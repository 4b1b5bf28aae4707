use backbone::{Block, Classifier, Input, Mode, attend};
use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::{Bool, Tensor};
use ensembles::EnsembleModel;
use train::Trainable;

use crate::adapters::{Adapters, BlockAdapters, LowRank};

/// A frozen encoder classifier (ViT or BERT) shared by N members, each with its own low-rank
/// adapters on the Q, K, V and output projections of every block and its own classifier. All
/// members run in one pass over the input repeated N times.
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
}

impl LoraEnsemble {
    /// Member features `[N, B, D]` (ViT: the class token after the final norm; BERT: the masked
    /// mean of the last tokens, then dropout); `mode` turns the backbone's dropout on or off.
    ///
    /// # Panics
    /// If the input is of the other modality than the backbone (see [`Classifier::embed`]).
    pub fn member_features(&self, input: Input, mode: Mode) -> Tensor<3> {
        let members = self.members();
        let batch = input.batch_size();
        // Member-major: rows n·B..(n+1)·B are member n's copy of the batch.
        let stacked = input.repeat(members);
        let key_padding = stacked.key_padding();
        let mut x = self.backbone.embed(&stacked, mode);
        for (block, adapters) in self
            .backbone
            .encoder()
            .layer
            .iter()
            .zip(&self.adapters.blocks)
        {
            x = self.block(block, adapters, x, key_padding.clone(), mode);
        }
        let features = self.backbone.features(x, &stacked, mode);
        let width = features.dims()[1];
        features.reshape([members, batch, width])
    }

    /// Member logits `[N, B, C]`.
    ///
    /// # Panics
    /// If the input is of the other modality than the backbone.
    pub fn forward(&self, input: Input, mode: Mode) -> Tensor<3> {
        self.adapters
            .heads
            .forward(self.member_features(input, mode))
    }

    /// [`backbone::Block::forward`] (no gates) with adapted attention, on the member-major
    /// stack `[N·B, T, D]` with its key-padding mask `[N·B, T]` (true = padding; `None` for
    /// images).
    fn block(
        &self,
        block: &Block,
        adapters: &BlockAdapters,
        x: Tensor<3>,
        key_padding: Option<Tensor<2, Bool>>,
        mode: Mode,
    ) -> Tensor<3> {
        let attn = |h| {
            let a = self.attention(block, adapters, h, key_padding, mode);
            block.dropout.forward(a, mode)
        };
        let mlp = |h| block.dropout.forward(block.mlp.forward(h, None), mode);
        if block.norm_first {
            let x = x.clone() + attn(block.norm1.forward(x));
            x.clone() + mlp(block.norm2.forward(x))
        } else {
            let x = block.norm1.forward(x.clone() + attn(x));
            block.norm2.forward(x.clone() + mlp(x))
        }
    }

    /// Self-attention with every projection adapted: `[N·B, T, D] -> [N·B, T, D]`.
    fn attention(
        &self,
        block: &Block,
        adapters: &BlockAdapters,
        x: Tensor<3>,
        key_padding: Option<Tensor<2, Bool>>,
        mode: Mode,
    ) -> Tensor<3> {
        let attention = &block.attention;
        let [rows, tokens, _] = x.dims();
        let members = self.members();
        // [N·B, T, D] and [N, B·T, D] share one memory layout: the reshapes are free.
        let project = |adapter: &LowRank, base: &Linear, h: Tensor<3>| {
            let width = h.dims()[2];
            let stacked = h.reshape([members, rows / members * tokens, width]);
            let y = adapter.project(base, stacked, self.scale);
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

    /// Tokens per sample through the blocks: the ViT's patches plus class token, or
    /// `text_tokens` for BERT.
    fn tokens(&self) -> usize {
        match &self.backbone {
            Classifier::Vit(vit) => vit.pos_embed.lazy_shape().dims::<3>()[1],
            Classifier::Bert(_) => self.text_tokens,
        }
    }
}

impl EnsembleModel for LoraEnsemble {
    fn members(&self) -> usize {
        self.adapters.heads.bias.lazy_shape().dims::<2>()[0]
    }

    fn member_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input, Mode::Deterministic)
    }

    /// Backbone (its unused classifier included) plus every member's adapters and classifier.
    fn num_params(&self) -> usize {
        Module::num_params(self)
    }

    /// N full backbone passes ([`Classifier::flops`], whose classifier has the shape of each
    /// member's) plus, per member, block and token, the adapter matmuls `x A` (D_in·r) and
    /// `(x A) B` (r·D_out), 2 FLOPs per multiply-accumulate. Text counts sequences of
    /// `text_tokens` tokens.
    fn flops_per_sample(&self) -> u64 {
        let adapter_macs: u64 = self
            .adapters
            .blocks
            .iter()
            .flat_map(|b| [&b.query, &b.key, &b.value, &b.output])
            .map(|adapter| {
                let [_, d_in, rank] = adapter.a.lazy_shape().dims();
                let [_, _, d_out] = adapter.b.lazy_shape().dims();
                (rank * (d_in + d_out)) as u64
            })
            .sum();
        let tokens = self.tokens() as u64;
        self.members() as u64 * (self.backbone.flops(self.text_tokens) + 2 * tokens * adapter_macs)
    }
}

impl Trainable for LoraEnsemble {
    /// Member logits `[N, B, C]` with the backbone's dropout on.
    fn train_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input, Mode::Stochastic)
    }
}
