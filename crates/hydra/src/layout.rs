//! What members must share to be fused, and the fused model's FLOPs.

use backbone::{
    BertConfig, BlockShape, Classifier, ViTConfig, VisionTransformer, bert_flops, vit_flops,
};
use burn::nn::PaddingConfig2d;

use crate::error::HydraError;

/// The shapes of a member that every other member must match (head counts may differ).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub stem: StemLayout,
    pub d_model: usize,
    pub head_dim: usize,
    pub d_mlp: usize,
    pub classes: usize,
    pub layers: usize,
    /// Per block: pre-norm (ViT) or post-norm (BERT).
    pub norm_first: Vec<bool>,
}

/// The modality-specific shapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StemLayout {
    Patches {
        channels: usize,
        patch: usize,
        grid: usize,
    },
    Tokens {
        vocab: usize,
        positions: usize,
        segments: usize,
    },
}

impl Layout {
    /// The layout of member `m`, or why it cannot be fused.
    pub fn of(member: &Classifier, m: usize) -> Result<Self, HydraError> {
        let bad = |what: &str, value: String, expected: &str| {
            HydraError::invalid(format!("member {m} {what}"), value, expected)
        };
        let [d_model, classes] = member.head().weight.dims();
        let stem = match member {
            Classifier::Vit(v) => patches(v, &bad)?,
            Classifier::Bert(b) => {
                let e = &b.bert.embeddings;
                let tables = [
                    &e.word_embeddings,
                    &e.position_embeddings,
                    &e.token_type_embeddings,
                ]
                .map(|t| t.weight.dims());
                if tables.iter().any(|[_, d]| *d != d_model) {
                    return Err(bad(
                        "embedding tables",
                        format!("{tables:?}"),
                        &format!("word, position and segment tables of width {d_model}"),
                    ));
                }
                StemLayout::Tokens {
                    vocab: tables[0][0],
                    positions: tables[1][0],
                    segments: tables[2][0],
                }
            }
        };
        let layer = &member.encoder().layer;
        let d_mlp = layer.first().map_or(0, |b| b.mlp.fc1.weight.dims()[1]);
        let mut head_dim = None;
        for (l, block) in layer.iter().enumerate() {
            let mlp = [block.mlp.fc1.weight.dims(), block.mlp.fc2.weight.dims()];
            if mlp != [[d_model, d_mlp], [d_mlp, d_model]] {
                return Err(bad(
                    &format!("block {l} mlp"),
                    format!("fc1 {:?}, fc2 {:?}", mlp[0], mlp[1]),
                    &format!("fc1 [{d_model}, {d_mlp}] and fc2 [{d_mlp}, {d_model}], as block 0"),
                ));
            }
            let a = &block.attention;
            let [_, width] = a.query.weight.dims();
            let dh = width / a.n_heads.max(1);
            if a.n_heads == 0 || dh * a.n_heads != width || head_dim.is_some_and(|h| h != dh) {
                return Err(bad(
                    &format!("block {l} attention"),
                    format!("{} heads over width {width}", a.n_heads),
                    "at least one head, all heads of the model of one size",
                ));
            }
            head_dim = Some(dh);
        }
        let head_dim =
            head_dim.ok_or_else(|| bad("encoder", "no blocks".into(), "at least one block"))?;
        if !d_model.is_multiple_of(head_dim) {
            return Err(bad(
                "head size",
                head_dim.to_string(),
                &format!("a divisor of the width {d_model}"),
            ));
        }
        Ok(Self {
            stem,
            d_model,
            head_dim,
            d_mlp,
            classes,
            layers: layer.len(),
            norm_first: layer.iter().map(|b| b.norm_first).collect(),
        })
    }

    /// FLOPs per sample of M members whose blocks are `blocks` (padded heads included); text
    /// is counted on sequences of `text_tokens` tokens.
    pub fn flops(&self, members: usize, blocks: &[BlockShape], text_tokens: usize) -> u64 {
        let heads = self.d_model / self.head_dim;
        let one = match self.stem {
            StemLayout::Patches {
                channels,
                patch,
                grid,
            } => {
                let config = ViTConfig::new()
                    .with_image_size(grid * patch)
                    .with_channels(channels)
                    .with_patch_size(patch)
                    .with_d_model(self.d_model)
                    .with_n_layers(self.layers)
                    .with_n_heads(heads)
                    .with_d_mlp(self.d_mlp)
                    .with_num_classes(self.classes);
                vit_flops(&config, blocks)
            }
            StemLayout::Tokens { .. } => {
                let config = BertConfig::new()
                    .with_d_model(self.d_model)
                    .with_n_layers(self.layers)
                    .with_n_heads(heads)
                    .with_d_mlp(self.d_mlp);
                bert_flops(&config, text_tokens, self.classes, blocks)
            }
        };
        members as u64 * one
    }
}

/// The patch layout of a ViT member (`bad` names the member in errors).
fn patches(
    v: &VisionTransformer,
    bad: &impl Fn(&str, String, &str) -> HydraError,
) -> Result<StemLayout, HydraError> {
    let conv = &v.patch_embed;
    let [_, channels, kh, kw] = conv.weight.dims();
    let patchify = kh == kw
        && conv.stride == [kh, kw]
        && conv.dilation == [1, 1]
        && conv.groups == 1
        && matches!(conv.padding, PaddingConfig2d::Valid);
    if !patchify {
        return Err(bad(
            "patch_embed",
            format!("kernel {kh}x{kw}, stride {:?}", conv.stride),
            "a square patch embedding with stride = kernel, no padding, dilation or groups",
        ));
    }
    let [_, tokens, _] = v.pos_embed.dims();
    let grid = (tokens.saturating_sub(1) as f64).sqrt().round() as usize;
    if grid * grid + 1 != tokens {
        return Err(bad(
            "pos_embed tokens",
            tokens.to_string(),
            "a square number of patches plus the class token",
        ));
    }
    Ok(StemLayout::Patches {
        channels,
        patch: kh,
        grid,
    })
}
