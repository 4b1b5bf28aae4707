//! The fused single-pass ensemble: the members' pruned encoders run side by side in one
//! forward pass (grouped projections, one batched attention over all members' heads).

use backbone::{
    Activation, BlockShape, Classifier, Dropout, GroupedLayerNorm, GroupedLinear, Input,
    MemberStems, Mode, attend_heads, residual, weight_and_bias,
};
use burn::module::Module;
use burn::tensor::{Bool, Tensor};
use seam::{EnsembleModel, MemberOutputs};
use serde::{Deserialize, Serialize};

use crate::error::HydraError;
use crate::layout::Layout;

/// How the members' MLPs are fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Merge {
    /// One MLP whose weights and biases are the element-wise mean over members.
    Average,
    /// Each member keeps its own MLP (a grouped FC).
    None,
}

/// M pruned members fused into one network that runs them all in one forward pass.
///
/// The residual streams are `[M, B·T, D]`; the input embedding (stored once when the members
/// share it), LayerNorms, Q/K/V and output projections and classifiers are grouped per member; attention is one batched call over all
/// members' heads (with the padding mask of token input repeated for every member). Members may
/// keep different numbers of heads: each block is as wide as the member with the most heads
/// there, the others zero-padded (see [`fuse`]).
#[derive(Module, Debug)]
pub struct HydraModel {
    /// Input embedding and feature readout, the members' backbone's.
    pub stem: MemberStems,
    pub blocks: Vec<FusedBlock>,
    /// Classifiers `[M, D, C]`.
    pub head: GroupedLinear,
    /// Stored parameters of the members, zero-padding excluded, a shared input embedding and an
    /// averaged MLP counted once.
    pub params: usize,
    /// FLOPs per sample, padded heads included (they are computed); for text, per sequence of
    /// the `text_tokens` given to [`fuse`].
    pub flops: u64,
}

/// One fused block, pre-norm (ViT) or post-norm (BERT).
#[derive(Module, Debug)]
pub struct FusedBlock {
    pub norm1: GroupedLayerNorm,
    /// Q, K and V of every member's heads: `[M, D, 3·H·d_h]`, columns head by head (each
    /// head's q, k and v side by side).
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
    /// Pre-norm `x + Attn(LN1(x))` when true, post-norm `LN1(x + Attn(x))` when false (and the
    /// same for the MLP with LN2).
    pub norm_first: bool,
    /// The MLP's activation, the members' (copies of one base model).
    #[module(skip)]
    pub activation: Activation,
}

impl HydraModel {
    /// Member logits `[M, B, C]` for images `[B, C, H, W]` (ViT members) or token ids and
    /// their mask `[B, T]` (BERT members; T at most the position table's length).
    ///
    /// # Panics
    /// If the input is of the other modality or of another shape than the members'.
    pub fn forward(&self, input: Input) -> Tensor<3> {
        self.outputs(input).logits
    }

    /// Member logits `[M, B, C]` and each member stream's feature readout `[M, B, D]`.
    ///
    /// # Panics
    /// As [`Self::forward`].
    pub fn outputs(&self, input: Input) -> MemberOutputs {
        let members = self.members();
        let batch = input.batch_size();
        // Member-major, as the [M·B, T, ·] attention batch.
        let key_padding = input.key_padding().map(|p| p.repeat_dim(0, members));
        let stem = self.stem.stem();
        // A shared embedding is computed once and broadcast to every member's stream.
        let x = stem.embed(&input);
        let [_, rows, d] = x.dims();
        let mut x = x.expand([members, rows, d]);
        for block in &self.blocks {
            x = block.forward(x, batch, key_padding.clone());
        }
        let features = stem.features(x, &input);
        MemberOutputs {
            logits: self.head.forward(features.clone()),
            features,
        }
    }
}

impl FusedBlock {
    /// `[M, B·T, D] -> [M, B·T, D]` for a batch of `batch` samples; `key_padding` `[M·B, T]`.
    fn forward(
        &self,
        x: Tensor<3>,
        batch: usize,
        key_padding: Option<Tensor<2, Bool>>,
    ) -> Tensor<3> {
        let attention = |h: Tensor<3>| {
            let [members, rows, _] = h.dims();
            let tokens = rows / batch;
            let width = self.heads * self.head_dim;
            // Columns head by head, each head's q, k and v side by side (see `fuse_block`);
            // member-major rows, so [M, B·T, ·] is [M·B, T, ·]: one attention call over all
            // members' heads, each sample-and-member its own batch entry, so heads never mix
            // members. q, k and v are strided views: nothing is copied before the attention call.
            let per_head = (self.qkv.forward(h))
                .reshape([members * batch, tokens, self.heads, 3 * self.head_dim])
                .swap_dims(1, 2);
            let part = |i: usize| per_head.clone().narrow(3, i * self.head_dim, self.head_dim);
            let context = attend_heads(
                [part(0), part(1), part(2)],
                None,
                key_padding.clone(),
                &Dropout { prob: 0.0 },
                Mode::Deterministic,
            )
            .swap_dims(1, 2);
            self.output.forward(context.reshape([members, rows, width]))
        };
        let mlp = |h: Tensor<3>| (self.fc2).forward(self.activation.apply(self.fc1.forward(h)));
        residual(
            x,
            self.norm_first,
            Some((|h| self.norm1.forward(h), attention)),
            (|h| self.norm2.forward(h), mlp),
        )
    }
}

impl EnsembleModel for HydraModel {
    fn members(&self) -> usize {
        self.head.weight.dims()[0]
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        self.outputs(input)
    }

    fn num_params(&self) -> usize {
        self.params
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops
    }

    fn in_precision(&self, dtype: burn::tensor::FloatDType) -> Box<dyn EnsembleModel> {
        seam::precision::InPrecision::cast(self.clone(), dtype)
    }
}

/// Fuses pruned (and possibly fine-tuned) members of one architecture, all Vision Transformers
/// or all BERT classifiers, into a [`HydraModel`]; `text_tokens` is the sequence length its
/// FLOPs are counted on for BERT members (unused for ViT members).
///
/// Members may keep different head counts per block. Block l is built `H_l` heads wide, `H_l`
/// the most any member keeps there; a member with fewer gets zero Q/K/V columns (weights and
/// biases) and zero output rows for the missing heads. That is exact: a zero head has zero
/// values, hence a zero context, and its zero output rows add exact zeros to the projection.
pub fn fuse(
    members: &[Classifier],
    merge: Merge,
    text_tokens: usize,
) -> Result<HydraModel, HydraError> {
    let Some(first) = members.first() else {
        return Err(HydraError::invalid(
            "fuse members",
            "an empty list",
            "at least one member",
        ));
    };
    let layout = Layout::of(first, 0)?;
    for (m, member) in members.iter().enumerate().skip(1) {
        if member.kind() != first.kind() {
            return Err(HydraError::invalid(
                format!("member {m} modality"),
                member.kind(),
                format!("{}, as member 0", first.kind()),
            ));
        }
        let other = Layout::of(member, m)?;
        if other != layout {
            return Err(HydraError::invalid(
                format!("member {m} architecture"),
                format!("{other:?}"),
                format!("{layout:?}, as member 0"),
            ));
        }
    }
    if first.is_text() && text_tokens == 0 {
        return Err(HydraError::invalid(
            "fuse text_tokens",
            0,
            "a positive sequence length to count BERT FLOPs on",
        ));
    }

    let stem = Classifier::stems(members)?;
    let mut blocks = Vec::with_capacity(layout.layers);
    for l in 0..layout.layers {
        blocks.push(fuse_block(members, l, &layout, merge)?);
    }
    let heads: Vec<_> = members.iter().map(Classifier::head).collect();

    let mlp_params: usize = (members.iter().flat_map(|c| &c.encoder().layer))
        .map(|b| b.mlp.num_params())
        .sum();
    let all_params: usize = members.iter().map(Module::num_params).sum();
    let params = match merge {
        Merge::None => all_params,
        // The averaged MLPs are stored once instead of M times.
        Merge::Average => all_params - mlp_params + mlp_params / members.len(),
    };
    // So is a shared input embedding.
    let params = if stem.stem().shared() {
        params - (members.len() - 1) * first.backbone().embedding_params()
    } else {
        params
    };
    let shapes: Vec<_> = blocks.iter().map(|b| BlockShape::full(b.heads)).collect();

    Ok(HydraModel {
        stem,
        blocks,
        head: GroupedLinear::of(&heads),
        params,
        flops: members.len() as u64 * first.flops_with(&shapes, text_tokens),
    })
}

/// Block `l` of every member, fused.
fn fuse_block(
    members: &[Classifier],
    l: usize,
    layout: &Layout,
    merge: Merge,
) -> Result<FusedBlock, HydraError> {
    let head_dim = layout.head_dim;
    let blocks: Vec<_> = members.iter().map(|c| &c.encoder().layer[l]).collect();
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
        qkv_w.push(by_head(ws, heads));
        qkv_b.push(by_head(bs, heads).squeeze_dim(0));
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
    let mut norm1 = GroupedLayerNorm::of(&norm1, &format!("block {l} norm1"))?;
    let mut norm2 = GroupedLayerNorm::of(&norm2, &format!("block {l} norm2"))?;
    let (mut qkv, mut fc1) = (GroupedLinear::stack(qkv_w, qkv_b), fc1);
    let norm_first = layout.norm_first[l];
    // Pre-norm, each norm feeds only its branch's first projection: its affine folds into it.
    // (Post-norm, the norm's output is also the residual, so it keeps its affine.)
    if norm_first {
        qkv = norm1.fold(qkv);
        fc1 = norm2.fold(fc1);
    }
    Ok(FusedBlock {
        norm1,
        qkv,
        output: GroupedLinear::stack(out_w, out_b),
        norm2,
        fc1,
        fc2,
        heads,
        head_dim,
        norm_first,
        activation: blocks
            .first()
            .map_or(Activation::Gelu, |b| b.mlp.activation),
    })
}

/// Q, K and V weights (or biases) `[in, H·d_h]` as one `[in, 3·H·d_h]` whose columns run head
/// by head, each head's q, k and v side by side: `[in, H, 3, d_h]`, so the forward pass splits
/// heads with a reshape and reads q, k and v as views.
fn by_head(qkv: Vec<Tensor<2>>, heads: usize) -> Tensor<2> {
    let [rows, width] = qkv[0].dims();
    Tensor::stack::<3>(qkv, 1)
        .reshape([rows, 3, heads, width / heads])
        .swap_dims(1, 2)
        .reshape([rows, 3 * width])
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
