//! Hydra on BERT members: padded token batches, post-norm blocks, per-member or shared
//! embeddings.

use crate::{prune, strategy};
use backbone::{Classifier, Input};
use burn::module::{Module, Param};
use burn::tensor::{Int, Tensor};
use hydra::{HeadSet, HydraError, Keep, Merge, SelectConfig, fuse, plan_members};
use seam::EnsembleModel;

use crate::fused::{assert_shared_embedding, averaged, embedding_groups, member, pruned_from};
use crate::taylor::assert_matches_finite_differences;
use crate::{
    assert_close, device, logits, text_calibration, tiny, tiny_bert, tiny_bert_cls, tokens,
};

/// Three members from different weights (embeddings included), keeping different head counts
/// in each block, so the fused blocks are zero-padded.
fn members() -> Vec<Classifier> {
    crate::fused::members_of(tiny_bert)
}

/// `input` with every padded token's id replaced by `id`.
fn repad(input: &Input, id: i64) -> Input {
    let Input::Tokens { ids, mask } = input else {
        panic!("tokens expected")
    };
    let fill = Tensor::<2, Int>::full(ids.dims(), id, &device());
    let ids = ids.clone().mask_where(mask.clone().equal_elem(0), fill);
    Input::Tokens {
        ids,
        mask: mask.clone(),
    }
}

#[test]
fn merge_none_equals_the_members_one_by_one() {
    let members = members();
    let x = tokens(5, 1);
    let fused = fuse(&members, Merge::None, 6).unwrap();
    let out = fused.member_logits(x.clone());
    assert_eq!(out.dims(), [3, 5, 3]);
    for (m, model) in members.iter().enumerate() {
        assert_close(&member(&out, m), &logits(model, &x), 1e-5);
    }
    // The members differ, so the comparison tells them apart.
    assert!(
        (member(&out, 0) - member(&out, 1))
            .abs()
            .max()
            .into_scalar::<f32>()
            > 1e-2
    );
    // Padding is masked: other ids in the padded slots change nothing.
    assert_close(&fused.member_logits(repad(&x, 7)), &out, 1e-6);
    // Members of different weights keep their own tables.
    assert_eq!(embedding_groups(&fused.stem), [3; 5]);
    let stored: usize = members.iter().map(Module::num_params).sum();
    assert_eq!(EnsembleModel::num_params(&fused), stored);
}

#[test]
fn members_of_one_model_share_the_embedding_tables() {
    let base = tiny_bert(6);
    let Classifier::Bert(b) = &base else {
        unreachable!("a BERT classifier")
    };
    let embedding = b.bert.embeddings.num_params();
    assert_shared_embedding(&pruned_from(&base), &tokens(5, 6), embedding);
}

#[test]
fn one_different_embedding_layer_norm_keeps_per_member_tables() {
    let mut members = pruned_from(&tiny_bert(6));
    let Classifier::Bert(b) = &mut members[1] else {
        unreachable!("a BERT classifier")
    };
    let gamma = &mut b.bert.embeddings.layer_norm.gamma;
    *gamma = Param::from_tensor(gamma.val().add_scalar(0.25));
    let fused = fuse(&members, Merge::None, 6).unwrap();
    assert_eq!(embedding_groups(&fused.stem), [3; 5]);
    let x = tokens(4, 7);
    let out = fused.forward(x.clone());
    for (m, model) in members.iter().enumerate() {
        assert_close(&member(&out, m), &logits(model, &x), 1e-5);
    }
    let stored: usize = members.iter().map(Module::num_params).sum();
    assert_eq!(EnsembleModel::num_params(&fused), stored);
}

#[test]
fn merge_average_equals_members_with_the_averaged_mlp() {
    let members = members();
    let x = tokens(4, 2);
    let fused = fuse(&members, Merge::Average, 6).unwrap();
    let out = fused.forward(x.clone());
    for m in 0..members.len() {
        assert_close(&member(&out, m), &logits(&averaged(&members, m), &x), 1e-5);
    }
}

#[test]
fn pruned_model_equals_the_gated_base_model() {
    let pruned = crate::prune::pruned_equals_gated(&tiny_bert(5), &tokens(4, 5));
    let heads: Vec<usize> = (pruned.encoder().layer.iter())
        .map(|b| b.attention.n_heads)
        .collect();
    assert_eq!(heads, [2, 1]);
}

#[test]
fn taylor_scores_match_squared_finite_differences() {
    assert_matches_finite_differences(&tiny_bert(21), &text_calibration(2, 4));
}

#[test]
fn activation_scores_ignore_padding() {
    let (model, data) = (tiny_bert(22), text_calibration(2, 4));
    let activation = strategy("activation", &toml::Table::new()).unwrap();
    let ctx = pruning::ScoreContext { seed: 0, member: 0 };
    let scores = activation.scores(&model, &data, &ctx).unwrap();
    let mut repadded = data.clone();
    for (x, _) in &mut repadded.batches {
        *x = repad(x, 9);
    }
    let again = activation.scores(&model, &repadded, &ctx).unwrap();
    for (a, b) in scores.0.iter().flatten().zip(again.0.iter().flatten()) {
        assert!(*a > 0.0 && (a - b).abs() <= 1e-5 * a, "{a} vs {b}");
    }
}

#[test]
fn circuit_plans_members_on_token_data() {
    let (model, data) = (tiny_bert(23), text_calibration(2, 4));
    let circuit = strategy(
        "circuit",
        &"objectives = [\"loss\", \"avg\"]\nn = 1".parse().unwrap(),
    )
    .unwrap();
    let cfg = SelectConfig {
        members: 3,
        keep: Keep::PerBlock(1),
        temperature: 0.0,
        bootstrap: true,
    };
    let plans = plan_members(&model, circuit.criterion(), &data, &cfg, 4).unwrap();
    assert_eq!(plans.len(), 3);
    for plan in &plans {
        // Plain top-1 keeps each block's circuit head (the only one scored 2 or more).
        for (row, kept) in plan.scores.0.iter().zip(&plan.kept.0) {
            assert_eq!(row.iter().filter(|&&s| s >= 2.0).count(), 1, "{row:?}");
            assert_eq!(kept.len(), 1);
            assert!(row[kept[0]] >= 2.0, "{row:?} {kept:?}");
        }
    }
    let members: Vec<_> = (plans.iter())
        .map(|p| prune(&model, &p.kept).unwrap())
        .collect();
    let fused = fuse(&members, Merge::None, 6).unwrap();
    let x = tokens(2, 24);
    let out = fused.forward(x.clone());
    for (m, pruned) in members.iter().enumerate() {
        assert_close(&member(&out, m), &logits(pruned, &x), 1e-5);
    }
}

#[test]
fn flops_are_the_members_flops_when_no_head_is_padded() {
    let set = HeadSet(vec![vec![0, 2], vec![1, 3]]);
    let members: Vec<_> = (0..3)
        .map(|m| prune(&tiny_bert(m), &set).unwrap())
        .collect();
    let fused = fuse(&members, Merge::Average, 12).unwrap();
    let sum: u64 = members.iter().map(|c| c.flops(12)).sum();
    assert_eq!(fused.flops_per_sample(), sum);
    // Twice the tokens cost more than twice (attention is quadratic in them).
    let longer = fuse(&members, Merge::Average, 24).unwrap();
    assert!(longer.flops_per_sample() > 2 * sum);
}

#[test]
fn rejects_mixed_modalities_and_no_text_length() {
    let err = fuse(&[tiny(1), tiny_bert(1)], Merge::None, 6).unwrap_err();
    assert!(
        matches!(&err, HydraError::Invalid { field, .. } if field == "member 1 modality"),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("a BERT classifier") && text.contains("a Vision Transformer"),
        "{text}"
    );
    let err = fuse(&[tiny_bert(1)], Merge::None, 0)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("fuse text_tokens = 0"), "{err}");
    // Members must read the same vocabulary.
    let small = crate::bert_config()
        .with_vocab_size(40)
        .init_classifier(3, &device())
        .unwrap();
    let err = fuse(&[tiny_bert(1), small.into()], Merge::None, 6).unwrap_err();
    assert!(err.to_string().contains("vocab: 40"), "{err}");
}

#[test]
fn cls_pooled_members_fuse_like_the_members_one_by_one() {
    let x = tokens(5, 3);
    // Members of different weights, then members of one model (a shared embedding).
    for members in [
        crate::fused::members_of(tiny_bert_cls),
        pruned_from(&tiny_bert_cls(7)),
    ] {
        let fused = fuse(&members, Merge::None, 6).unwrap();
        let out = fused.member_logits(x.clone());
        for (m, model) in members.iter().enumerate() {
            assert_close(&member(&out, m), &logits(model, &x), 1e-5);
        }
        // The first token is never padding: other ids in the padded slots change nothing.
        assert_close(&fused.member_logits(repad(&x, 7)), &out, 1e-6);
        let stored: usize = members.iter().map(Module::num_params).sum();
        let shared = fused.stem.stem().shared();
        let embedding = members[0].backbone().embedding_params();
        let expected = stored - if shared { 2 * embedding } else { 0 };
        assert_eq!(EnsembleModel::num_params(&fused), expected);
    }
    // The pooler is read: the [CLS] readout differs from the mean of the same weights.
    let (cls, mean) = (tiny_bert_cls(4), tiny_bert(4));
    let gap = (logits(&cls, &x) - logits(&mean, &x)).abs().max();
    assert!(gap.into_scalar::<f32>() > 1e-2);
}

#[test]
fn members_of_different_pooling_are_refused() {
    let err = fuse(&[tiny_bert(1), tiny_bert_cls(2)], Merge::None, 6).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("members' pooling"), "{text}");
    assert!(
        text.contains("some with a pooler and some without"),
        "{text}"
    );
}
