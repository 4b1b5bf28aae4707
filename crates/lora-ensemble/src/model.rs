use backbone::{Block, Mode, ViTConfig, VisionTransformer, attend, flops_per_sample};
use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::Tensor;
use ensembles::EnsembleModel;
use train::Trainable;

use crate::adapters::{Adapters, BlockAdapters, LowRank};

/// A frozen Vision Transformer shared by N members, each with its own low-rank adapters on the
/// Q, K, V and output projections of every block and its own classifier. All members run in one
/// pass over the input repeated N times.
#[derive(Module, Debug)]
pub struct LoraEnsemble {
    /// The shared backbone; its parameters do not require gradients. Its own classifier
    /// (`head`) is unused: each member has one in `adapters.heads`.
    pub backbone: VisionTransformer,
    /// Everything that differs between members.
    pub adapters: Adapters,
    /// Adapter scale s.
    pub scale: f64,
}

impl LoraEnsemble {
    /// Member features (the class token after the final norm) `[N, B, D]` for images
    /// `[B, C, H, W]`; `mode` turns the backbone's dropout on or off.
    pub fn member_features(&self, images: Tensor<4>, mode: Mode) -> Tensor<3> {
        let members = self.members();
        let batch = images.dims()[0];
        // Member-major: rows n·B..(n+1)·B are member n's copy of the batch.
        let mut x = self.backbone.embed(images.repeat_dim(0, members), mode);
        for (block, adapters) in self
            .backbone
            .encoder
            .layer
            .iter()
            .zip(&self.adapters.blocks)
        {
            x = self.block(block, adapters, x, mode);
        }
        let cls = x.narrow(1, 0, 1).squeeze_dim::<2>(1);
        let features = self.backbone.norm.forward(cls);
        let width = features.dims()[1];
        features.reshape([members, batch, width])
    }

    /// Member logits `[N, B, C]`.
    pub fn forward(&self, images: Tensor<4>, mode: Mode) -> Tensor<3> {
        self.adapters
            .heads
            .forward(self.member_features(images, mode))
    }

    /// [`backbone::Block::forward`] (no gates, no padding) with adapted attention, on the
    /// member-major stack `[N·B, T, D]`.
    fn block(
        &self,
        block: &Block,
        adapters: &BlockAdapters,
        x: Tensor<3>,
        mode: Mode,
    ) -> Tensor<3> {
        let attn = |h| {
            block
                .dropout
                .forward(self.attention(block, adapters, h, mode), mode)
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
            None,
            &attention.dropout,
            mode,
        );
        project(&adapters.output, &attention.output, context)
    }

    /// The backbone's configuration, read back from its weight shapes.
    fn backbone_config(&self) -> ViTConfig {
        let vit = &self.backbone;
        let [d_model, channels, patch, _] = vit.patch_embed.weight.lazy_shape().dims();
        let patches = vit.pos_embed.lazy_shape().dims::<3>()[1].saturating_sub(1);
        // A hand-built encoder may be empty; its head count and MLP width then cost nothing.
        let (heads, d_mlp) = vit.encoder.layer.first().map_or((1, 0), |block| {
            let [_, d_mlp] = block.mlp.fc1.weight.lazy_shape().dims();
            (block.attention.n_heads, d_mlp)
        });
        ViTConfig::new()
            .with_image_size(patches.isqrt() * patch)
            .with_channels(channels)
            .with_patch_size(patch)
            .with_d_model(d_model)
            .with_n_layers(vit.encoder.layer.len())
            .with_n_heads(heads)
            .with_d_mlp(d_mlp)
            .with_num_classes(vit.head.weight.lazy_shape().dims::<2>()[1])
    }
}

impl EnsembleModel for LoraEnsemble {
    fn members(&self) -> usize {
        self.adapters.heads.bias.lazy_shape().dims::<2>()[0]
    }

    fn member_logits(&self, images: Tensor<4>) -> Tensor<3> {
        self.forward(images, Mode::Deterministic)
    }

    /// Backbone (its unused classifier included) plus every member's adapters and classifier.
    fn num_params(&self) -> usize {
        Module::num_params(self)
    }

    /// N full backbone passes (each with its member's classifier) plus, per member, block and
    /// token, the adapter matmuls `x A` (D_in·r) and `(x A) B` (r·D_out), 2 FLOPs per
    /// multiply-accumulate.
    fn flops_per_sample(&self) -> u64 {
        let config = self.backbone_config();
        let tokens = config.num_tokens() as u64;
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
        self.members() as u64 * (flops_per_sample(&config) + 2 * tokens * adapter_macs)
    }
}

impl Trainable for LoraEnsemble {
    /// Member logits `[N, B, C]` with the backbone's dropout on.
    fn train_logits(&self, images: Tensor<4>) -> Tensor<3> {
        self.forward(images, Mode::Stochastic)
    }
}
