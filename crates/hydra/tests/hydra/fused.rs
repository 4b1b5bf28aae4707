//! The fused model against its definition: running the pruned members one by one.

use crate::prune;
use backbone::MemberStems;
use backbone::{BlockShape, Classifier, Input};
use burn::module::{Module, Param};
use burn::tensor::{Tensor, TensorData};
use hydra::{HeadSet, HydraError, Merge, fuse};
use seam::EnsembleModel;

use crate::{HEADS, LAYERS, assert_close, config, images, logits, tiny, values};

/// Three head sets keeping different head counts in each block, so the fused blocks are
/// zero-padded.
fn head_sets() -> [HeadSet; 3] {
    [
        vec![vec![0, 1], vec![2, 3]],
        vec![vec![1, 2, 3], vec![0]],
        vec![vec![3], vec![0, 1, 2, 3]],
    ]
    .map(HeadSet)
}

/// Three members from different weights (as if each were fine-tuned; `build(seed)` makes one),
/// pruned to [`head_sets`].
pub fn members_of(build: fn(u64) -> Classifier) -> Vec<Classifier> {
    (head_sets().iter().enumerate())
        .map(|(m, set)| prune(&build(10 + m as u64), set).unwrap())
        .collect()
}

/// Three members pruned to [`head_sets`] from the one model `base`: the same embedding.
pub fn pruned_from(base: &Classifier) -> Vec<Classifier> {
    (head_sets().iter())
        .map(|set| prune(base, set).unwrap())
        .collect()
}

/// The leading (group) size of every input-embedding tensor the stem stores.
pub fn embedding_groups(stem: &MemberStems) -> Vec<usize> {
    match stem {
        MemberStems::Vit(s) => vec![
            s.patch.weight.dims()[0],
            s.patch.bias.dims()[0],
            s.cls_token.dims()[0],
            s.pos_embed.dims()[0],
        ],
        MemberStems::Bert(s) => vec![
            s.word.dims()[0],
            s.position.dims()[0],
            s.token_type.dims()[0],
            s.norm.gamma.dims()[0],
            s.norm.beta.dims()[0],
        ],
    }
}

/// `members` (pruned from one model, so with one embedding of `embedding` parameters each),
/// fused with either merge: the embedding is stored once, the fused model still equals the
/// members one by one on `x`, and its parameters count the embedding once.
pub fn assert_shared_embedding(members: &[Classifier], x: &Input, embedding: usize) {
    let stored: usize = members.iter().map(Module::num_params).sum();
    let mlp: usize = (members[0].encoder().layer.iter())
        .map(|b| b.mlp.num_params())
        .sum();
    for merge in [Merge::None, Merge::Average] {
        let fused = fuse(members, merge, 6).unwrap();
        let groups = embedding_groups(&fused.stem);
        assert!(groups.iter().all(|&g| g == 1), "{merge:?}: {groups:?}");
        let out = fused.forward(x.clone());
        for m in 0..members.len() {
            let expected = match merge {
                Merge::None => members[m].clone(),
                Merge::Average => averaged(members, m),
            };
            assert_close(&member(&out, m), &logits(&expected, x), 1e-5);
        }
        let shared_mlp = if merge == Merge::Average { 2 * mlp } else { 0 };
        assert_eq!(
            EnsembleModel::num_params(&fused),
            stored - 2 * embedding - shared_mlp,
            "{merge:?}"
        );
    }
}

fn members() -> Vec<Classifier> {
    members_of(tiny)
}

pub fn member(logits: &Tensor<3>, m: usize) -> Tensor<2> {
    logits.clone().narrow(0, m, 1).squeeze_dim(0)
}

#[test]
fn merge_none_equals_the_members_one_by_one() {
    let members = members();
    let x = images(5, 1);
    let fused = fuse(&members, Merge::None, 0).unwrap();
    let out = fused.member_logits(x.clone());
    assert_eq!(out.dims(), [3, 5, 3]);
    for (m, model) in members.iter().enumerate() {
        assert_close(&member(&out, m), &logits(model, &x), 1e-5);
    }
    assert_eq!(fused.members(), 3);
    // Members of different weights keep their own patch embeddings.
    assert_eq!(embedding_groups(&fused.stem), [3; 4]);
    let stored: usize = members.iter().map(Module::num_params).sum();
    assert_eq!(EnsembleModel::num_params(&fused), stored);
    // Block widths are the widest member's: 3 heads in block 0, 4 in block 1.
    let padded = [BlockShape::full(3), BlockShape::full(4)];
    assert_eq!(fused.flops_per_sample(), 3 * config().flops(&padded));
}

/// Members pruned from a model whose blocks lost different numbers of MLP neurons fuse: each
/// fused block is as wide as its members' block.
#[test]
fn members_of_a_neuron_pruned_model_fuse() {
    let base = tiny(6);
    let narrowed = pruning::prune_neurons(&base, &[(0..16).collect(), vec![1, 4, 9]]).unwrap();
    let members = pruned_from(&narrowed);
    let x = images(4, 2);
    for merge in [Merge::None, Merge::Average] {
        let fused = fuse(&members, merge, 0).unwrap();
        let out = fused.member_logits(x.clone());
        for (m, model) in members.iter().enumerate() {
            let expected = match merge {
                Merge::None => logits(model, &x),
                Merge::Average => logits(&averaged(&members, m), &x),
            };
            assert_close(&member(&out, m), &expected, 1e-5);
        }
    }
}

/// Element-wise mean of the members' tensors, computed on the host.
fn host_mean(tensors: Vec<Tensor<2>>) -> Tensor<2> {
    let shape = tensors[0].dims();
    let mut sum = vec![0.0f32; shape[0] * shape[1]];
    for t in &tensors {
        sum.iter_mut().zip(values(t)).for_each(|(s, v)| *s += v);
    }
    let mean = sum.iter().map(|s| s / tensors.len() as f32).collect();
    Tensor::from_data(TensorData::new(mean, shape), &tensors[0].device())
}

#[test]
fn merge_average_equals_members_with_the_averaged_mlp() {
    let members = members();
    let x = images(4, 2);
    let fused = fuse(&members, Merge::Average, 0).unwrap();
    let out = fused.forward(x.clone());
    for m in 0..members.len() {
        let expected = averaged(&members, m);
        assert_close(&member(&out, m), &logits(&expected, &x), 1e-5);
    }
    // The averaged MLPs are stored once.
    let mlp: usize = (members[0].encoder().layer.iter())
        .map(|b| b.mlp.num_params())
        .sum();
    let stored: usize = members.iter().map(Module::num_params).sum();
    assert_eq!(EnsembleModel::num_params(&fused), stored - 2 * mlp);
}

/// Member `m` with every block's MLP replaced by the element-wise mean of the members' MLPs.
pub fn averaged(members: &[Classifier], m: usize) -> Classifier {
    let mut expected = members[m].clone();
    for (l, block) in expected.encoder_mut().layer.iter_mut().enumerate() {
        let others = |f: fn(&backbone::Block) -> &burn::nn::Linear| {
            let w = members
                .iter()
                .map(|v| f(&v.encoder().layer[l]).weight.val())
                .collect();
            let b = members
                .iter()
                .map(|v| {
                    f(&v.encoder().layer[l])
                        .bias
                        .as_ref()
                        .unwrap()
                        .val()
                        .unsqueeze()
                })
                .collect();
            (host_mean(w), host_mean(b).squeeze_dim(0))
        };
        let (w1, b1) = others(|b| &b.mlp.fc1);
        let (w2, b2) = others(|b| &b.mlp.fc2);
        block.mlp.fc1.weight = Param::from_tensor(w1);
        block.mlp.fc1.bias = Some(Param::from_tensor(b1));
        block.mlp.fc2.weight = Param::from_tensor(w2);
        block.mlp.fc2.bias = Some(Param::from_tensor(b2));
    }
    expected
}

#[test]
fn members_of_one_model_share_the_patch_embedding() {
    let base = tiny(4);
    let Classifier::Vit(v) = &base else {
        unreachable!("a Vision Transformer")
    };
    let embedding =
        v.patch_embed.num_params() + v.cls_token.num_params() + v.pos_embed.num_params();
    assert_shared_embedding(&pruned_from(&base), &images(5, 4), embedding);
}

#[test]
fn keeping_all_heads_reproduces_the_base_model() {
    let base = tiny(3);
    let x = images(6, 3);
    let all = HeadSet(vec![(0..HEADS).collect(); LAYERS]);
    let pruned = prune(&base, &all).unwrap();
    // Same weights, same operations: bit-identical.
    assert_eq!(values(&logits(&pruned, &x)), values(&logits(&base, &x)));
    for merge in [Merge::None, Merge::Average] {
        let fused = fuse(std::slice::from_ref(&pruned), merge, 0).unwrap();
        assert_close(
            &member(&fused.forward(x.clone()), 0),
            &logits(&base, &x),
            1e-6,
        );
        assert_eq!(EnsembleModel::num_params(&fused), base.num_params());
        assert_eq!(fused.flops_per_sample(), config().flops_per_sample());
    }
}

#[test]
fn equal_head_counts_cost_m_pruned_models() {
    let set = HeadSet(vec![vec![0, 2], vec![1, 3]]);
    let members: Vec<_> = (0..3).map(|m| prune(&tiny(m), &set).unwrap()).collect();
    let fused = fuse(&members, Merge::None, 0).unwrap();
    let pruned = [BlockShape::full(2); LAYERS];
    assert_eq!(fused.flops_per_sample(), 3 * config().flops(&pruned));
}

#[test]
fn rejects_no_members_and_mismatched_architectures() {
    let err = fuse(&[], Merge::None, 0).unwrap_err();
    assert!(err.to_string().contains("at least one member"), "{err}");
    let other = config().with_num_classes(5).init(&crate::device()).unwrap();
    let err = fuse(&[tiny(1), other.into()], Merge::Average, 0).unwrap_err();
    assert!(
        matches!(&err, HydraError::Invalid { field, .. } if field == "member 1 architecture"),
        "{err}"
    );
    assert!(err.to_string().contains("classes: 5"), "{err}");
}
