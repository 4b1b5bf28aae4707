//! The fused single-pass ensemble (METHODS.md §1.3).

use std::fmt;
use std::str::FromStr;

use backbone::{BlockShape, Dropout, Mode, ViTConfig, VisionTransformer, attend, vit_flops};
use burn::module::{Module, Param};
use burn::nn::PaddingConfig2d;
use burn::tensor::Tensor;
use burn::tensor::activation::gelu;
use ensembles::EnsembleModel;
use serde::{Deserialize, Serialize};

use crate::error::HydraError;
use crate::grouped::{GroupedLayerNorm, GroupedLinear, weight_and_bias};

/// How the members' MLPs are fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Merge {
    /// One MLP whose weights and biases are the element-wise mean over members.
    Average,
    /// Each member keeps its own MLP (a grouped FC).
    None,
}

impl FromStr for Merge {
    type Err = HydraError;

    fn from_str(s: &str) -> Result<Self, HydraError> {
        match s {
            "average" => Ok(Self::Average),
            "none" => Ok(Self::None),
            other => Err(HydraError::invalid(
                "merge",
                format!("{other:?}"),
                "\"average\" or \"none\"",
            )),
        }
    }
}

impl fmt::Display for Merge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Average => "average",
            Self::None => "none",
        })
    }
}

/// M pruned members fused into one network that runs them all in one forward pass.
///
/// The residual streams are `[M, B·T, D]`; patch embedding, LayerNorms, Q/K/V and output
/// projections and classifiers are grouped per member; attention is one batched call over all
/// members' heads. Members may keep different numbers of heads: each block is as wide as the
/// member with the most heads there, the others zero-padded (see [`fuse`]).
#[derive(Module, Debug)]
pub struct HydraModel {
    /// Patch embedding as a grouped FC on flattened patches: `[M, C·p·p, D]`.
    pub patch: GroupedLinear,
    /// `[M, 1, 1, D]`.
    pub cls_token: Param<Tensor<4>>,
    /// `[M, 1, T, D]`.
    pub pos_embed: Param<Tensor<4>>,
    pub blocks: Vec<FusedBlock>,
    pub norm: GroupedLayerNorm,
    /// Classifiers `[M, D, C]`.
    pub head: GroupedLinear,
    pub patch_size: usize,
    /// Stored parameters of the members, zero-padding excluded, an averaged MLP counted once.
    pub params: usize,
    /// FLOPs per sample, padded heads included (they are computed).
    pub flops: u64,
}

/// One fused pre-norm block.
#[derive(Module, Debug)]
pub struct FusedBlock {
    pub norm1: GroupedLayerNorm,
    /// Q, K and V of every member's heads: `[M, D, 3·H·d_h]`.
    pub qkv: GroupedLinear,
    /// `[M, H·d_h, D]`.
    pub output: GroupedLinear,
    pub norm2: GroupedLayerNorm,
    /// `[M, D, F]`, or `[1, D, F]` when averaged.
    pub fc1: GroupedLinear,
    pub fc2: GroupedLinear,
    /// Heads per member in this block (the widest member's count).
    pub heads: usize,
    pub head_dim: usize,
}

impl HydraModel {
    /// Member logits `[M, B, C]` for images `[B, C, H, W]`.
    ///
    /// # Panics
    /// If the image shape differs from the members'.
    pub fn forward(&self, images: Tensor<4>) -> Tensor<3> {
        let [batch, channels, height, width] = images.dims();
        let p = self.patch_size;
        let (rows, cols) = (height / p, width / p);
        let patches = rows * cols;
        // [B, C, h, p, w, p] -> [B, h, w, C, p, p]: each patch flattened as Conv2d's weight is.
        let pixels = images
            .reshape([batch, channels, rows, p, cols, p])
            .permute([0, 2, 4, 1, 3, 5])
            .reshape([1, batch * patches, channels * p * p]);
        let x = self.patch.forward(pixels);
        let [members, _, d] = x.dims();
        let cls = self.cls_token.val().expand([members, batch, 1, d]);
        let tokens = Tensor::cat(vec![cls, x.reshape([members, batch, patches, d])], 2)
            + self.pos_embed.val();
        let t = patches + 1;
        let mut x = tokens.reshape([members, batch * t, d]);
        for block in &self.blocks {
            x = block.forward(x, batch);
        }
        let cls = x.reshape([members, batch, t, d]).narrow(2, 0, 1);
        self.head
            .forward(self.norm.forward(cls.reshape([members, batch, d])))
    }
}

impl FusedBlock {
    /// `[M, B·T, D] -> [M, B·T, D]` for a batch of `batch` samples.
    fn forward(&self, x: Tensor<3>, batch: usize) -> Tensor<3> {
        let [members, rows, _] = x.dims();
        let tokens = rows / batch;
        let width = self.heads * self.head_dim;
        let qkv = self.qkv.forward(self.norm1.forward(x.clone()));
        // Member-major rows, so [M, B·T, ·] is [M·B, T, ·]: one attention call over all
        // members' heads, each sample-and-member its own batch entry, so heads never mix members.
        let part = |i: usize| {
            qkv.clone()
                .narrow(2, i * width, width)
                .reshape([members * batch, tokens, width])
        };
        let no_dropout = Dropout { prob: 0.0 };
        let context = attend(
            [part(0), part(1), part(2)],
            self.heads,
            None,
            None,
            &no_dropout,
            Mode::Deterministic,
        );
        let x = x + self.output.forward(context.reshape([members, rows, width]));
        let hidden = gelu(self.fc1.forward(self.norm2.forward(x.clone())));
        x + self.fc2.forward(hidden)
    }
}

impl EnsembleModel for HydraModel {
    fn members(&self) -> usize {
        self.head.weight.dims()[0]
    }

    fn member_logits(&self, images: Tensor<4>) -> Tensor<3> {
        self.forward(images)
    }

    fn num_params(&self) -> usize {
        self.params
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops
    }
}

/// Fuses pruned (and possibly fine-tuned) members of one architecture into a [`HydraModel`].
///
/// Members may keep different head counts per block. Block l is built `H_l` heads wide, `H_l`
/// the most any member keeps there; a member with fewer gets zero Q/K/V columns (weights and
/// biases) and zero output rows for the missing heads. That is exact: a zero head has zero
/// values, hence a zero context, and its zero output rows add exact zeros to the projection.
pub fn fuse(members: &[VisionTransformer], merge: Merge) -> Result<HydraModel, HydraError> {
    let Some(first) = members.first() else {
        return Err(HydraError::invalid(
            "fuse members",
            "an empty list",
            "at least one member",
        ));
    };
    let layout = Layout::of(first, 0)?;
    for (m, member) in members.iter().enumerate().skip(1) {
        let other = Layout::of(member, m)?;
        if other != layout {
            return Err(HydraError::invalid(
                format!("member {m} architecture"),
                format!("{other:?}"),
                format!("{layout:?}, as member 0"),
            ));
        }
    }

    let patch = members.iter().map(|v| {
        let w = v.patch_embed.weight.val(); // [D, C, p, p]
        let [d, ..] = w.dims();
        let bias = (v.patch_embed.bias.as_ref())
            .map_or_else(|| Tensor::zeros([d], &w.device()), |b| b.val());
        (w.reshape([d as i32, -1]).transpose(), bias)
    });
    let (patch_w, patch_b) = patch.unzip();
    let mut blocks = Vec::with_capacity(layout.layers);
    for l in 0..layout.layers {
        blocks.push(fuse_block(members, l, layout.head_dim, merge)?);
    }
    let norms: Vec<_> = members.iter().map(|v| &v.norm).collect();
    let heads: Vec<_> = members.iter().map(|v| &v.head).collect();

    let mlp_params: usize = (members.iter().flat_map(|v| &v.encoder.layer))
        .map(|b| b.mlp.num_params())
        .sum();
    let all_params: usize = members.iter().map(Module::num_params).sum();
    let params = match merge {
        Merge::None => all_params,
        // The averaged MLPs are stored once instead of M times.
        Merge::Average => all_params - mlp_params + mlp_params / members.len(),
    };
    let shapes: Vec<_> = blocks.iter().map(|b| BlockShape::full(b.heads)).collect();
    let flops = members.len() as u64 * vit_flops(&layout.config(), &shapes);

    Ok(HydraModel {
        patch: GroupedLinear::stack(patch_w, patch_b),
        cls_token: Param::from_tensor(Tensor::stack(
            members.iter().map(|v| v.cls_token.val()).collect(),
            0,
        )),
        pos_embed: Param::from_tensor(Tensor::stack(
            members.iter().map(|v| v.pos_embed.val()).collect(),
            0,
        )),
        blocks,
        norm: GroupedLayerNorm::of(&norms, "norm")?,
        head: GroupedLinear::of(&heads),
        patch_size: layout.patch,
        params,
        flops,
    })
}

/// Block `l` of every member, fused.
fn fuse_block(
    members: &[VisionTransformer],
    l: usize,
    head_dim: usize,
    merge: Merge,
) -> Result<FusedBlock, HydraError> {
    let blocks: Vec<_> = members.iter().map(|v| &v.encoder.layer[l]).collect();
    let heads = blocks
        .iter()
        .map(|b| b.attention.n_heads)
        .max()
        .unwrap_or(0);
    let width = heads * head_dim;
    let (mut qkv_w, mut qkv_b, mut out_w, mut out_b) = (vec![], vec![], vec![], vec![]);
    for block in &blocks {
        let a = &block.attention;
        let (mut ws, mut bs) = (vec![], vec![]);
        for linear in [&a.query, &a.key, &a.value] {
            let (w, b) = weight_and_bias(linear);
            ws.push(pad(w, 1, width));
            bs.push(pad(b.unsqueeze::<2>(), 1, width));
        }
        qkv_w.push(Tensor::cat(ws, 1));
        qkv_b.push(Tensor::cat(bs, 1).squeeze_dim(0));
        let (w, b) = weight_and_bias(&a.output);
        out_w.push(pad(w, 0, width));
        out_b.push(b);
    }
    let fc1: Vec<_> = blocks.iter().map(|b| &b.mlp.fc1).collect();
    let fc2: Vec<_> = blocks.iter().map(|b| &b.mlp.fc2).collect();
    let (fc1, fc2) = match merge {
        Merge::None => (GroupedLinear::of(&fc1), GroupedLinear::of(&fc2)),
        Merge::Average => (average(&fc1), average(&fc2)),
    };
    let norm1: Vec<_> = blocks.iter().map(|b| &b.norm1).collect();
    let norm2: Vec<_> = blocks.iter().map(|b| &b.norm2).collect();
    Ok(FusedBlock {
        norm1: GroupedLayerNorm::of(&norm1, &format!("block {l} norm1"))?,
        qkv: GroupedLinear::stack(qkv_w, qkv_b),
        output: GroupedLinear::stack(out_w, out_b),
        norm2: GroupedLayerNorm::of(&norm2, &format!("block {l} norm2"))?,
        fc1,
        fc2,
        heads,
        head_dim,
    })
}

/// Zero-pads dimension `dim` of `t` up to `size`.
fn pad(t: Tensor<2>, dim: usize, size: usize) -> Tensor<2> {
    let mut shape = t.dims();
    if shape[dim] == size {
        return t;
    }
    shape[dim] = size - shape[dim];
    let zeros = Tensor::zeros(shape, &t.device());
    Tensor::cat(vec![t, zeros], dim)
}

/// One shared group whose weight and bias are the element-wise means of `linears`.
fn average(linears: &[&burn::nn::Linear]) -> GroupedLinear {
    let (weights, biases): (Vec<_>, Vec<_>) = linears.iter().map(|l| weight_and_bias(l)).unzip();
    let mean2 = Tensor::stack::<3>(weights, 0).mean_dim(0).squeeze_dim(0);
    let mean1 = Tensor::stack::<2>(biases, 0).mean_dim(0).squeeze_dim(0);
    GroupedLinear::stack(vec![mean2], vec![mean1])
}

/// What members must share to be fused.
#[derive(Debug, Clone, PartialEq)]
struct Layout {
    channels: usize,
    patch: usize,
    grid: usize,
    d_model: usize,
    head_dim: usize,
    d_mlp: usize,
    classes: usize,
    layers: usize,
}

impl Layout {
    fn of(v: &VisionTransformer, m: usize) -> Result<Self, HydraError> {
        let bad = |what: &str, value: String, expected: &str| {
            HydraError::invalid(format!("member {m} {what}"), value, expected)
        };
        let conv = &v.patch_embed;
        let [d_model, channels, kh, kw] = conv.weight.dims();
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
        let d_mlp = v
            .encoder
            .layer
            .first()
            .map_or(0, |b| b.mlp.fc1.weight.dims()[1]);
        let mut head_dim = None;
        for (l, block) in v.encoder.layer.iter().enumerate() {
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
            channels,
            patch: kh,
            grid,
            d_model,
            head_dim,
            d_mlp,
            classes: v.head.weight.dims()[1],
            layers: v.encoder.layer.len(),
        })
    }

    /// The unpruned ViT configuration with these shapes (for FLOP counts).
    fn config(&self) -> ViTConfig {
        ViTConfig::new()
            .with_image_size(self.grid * self.patch)
            .with_channels(self.channels)
            .with_patch_size(self.patch)
            .with_d_model(self.d_model)
            .with_n_layers(self.layers)
            .with_n_heads(self.d_model / self.head_dim)
            .with_d_mlp(self.d_mlp)
            .with_num_classes(self.classes)
    }
}
