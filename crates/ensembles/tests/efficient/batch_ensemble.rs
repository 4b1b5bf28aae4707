//! BatchEnsemble: member m is the shared ViT with weights `diag(r_m) W diag(s_m)` and bias b_m.

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::nn::Linear;
use burn::tensor::{Device, Distribution, Tensor};
use ensembles::{BatchEnsemble, BatchEnsembleConfig, BeLinear, FastInit};
use seam::EnsembleModel;
use seam::Trainable;

use crate::{assert_close, images, layer_norm, member, param, row, serial, tiny, values};

/// Member m's effective dense layer: weight `[in, out]` and bias `[out]`.
fn effective(l: &BeLinear, m: usize) -> (Tensor<2>, Tensor<1>) {
    let r = row(&l.r.val(), m).unsqueeze_dim::<2>(1); // [in, 1]
    let s = row(&l.s.val(), m).unsqueeze::<2>(); // [1, out]
    (l.weight.val() * r * s, row(&l.bias.val(), m))
}

fn set_linear(target: &mut Linear, (weight, bias): (Tensor<2>, Tensor<1>)) {
    target.weight = param(weight);
    target.bias = Some(param(bias));
}

/// A plain ViT holding member m's effective weights, for comparison.
fn member_vit(
    be: &BatchEnsemble,
    m: usize,
    config: &ViTConfig,
    device: &Device,
) -> VisionTransformer {
    let mut vit = config.init(device).unwrap();
    let (patch, patch_bias) = effective(&be.patch_embed, m);
    let (p, c, d) = (config.patch_size, config.channels, config.d_model);
    vit.patch_embed.weight = param(patch.transpose().reshape([d, c, p, p]));
    vit.patch_embed.bias = Some(param(patch_bias));
    vit.cls_token = be.cls_token.clone();
    vit.pos_embed = be.pos_embed.clone();
    for (block, ours) in vit.encoder.layer.iter_mut().zip(&be.blocks) {
        set_linear(&mut block.attention.query, effective(&ours.query, m));
        set_linear(&mut block.attention.key, effective(&ours.key, m));
        set_linear(&mut block.attention.value, effective(&ours.value, m));
        set_linear(&mut block.attention.output, effective(&ours.output, m));
        set_linear(&mut block.mlp.fc1, effective(&ours.fc1, m));
        set_linear(&mut block.mlp.fc2, effective(&ours.fc2, m));
        block.norm1 = ours.norm1.clone();
        block.norm2 = ours.norm2.clone();
    }
    vit.norm = layer_norm(
        &vit.norm,
        be.norm.gamma.val(),
        be.norm.beta.as_ref().unwrap().val(),
    );
    set_linear(&mut vit.head, effective(&be.head, m));
    vit
}

fn linears(be: &mut BatchEnsemble) -> Vec<&mut BeLinear> {
    let mut all = vec![&mut be.patch_embed];
    for b in &mut be.blocks {
        all.extend([
            &mut b.query,
            &mut b.key,
            &mut b.value,
            &mut b.output,
            &mut b.fc1,
            &mut b.fc2,
        ]);
    }
    all.push(&mut be.head);
    all
}

#[test]
fn unit_fast_weights_and_shared_biases_give_the_shared_model() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(2);
    let be = BatchEnsembleConfig {
        members: 3,
        fast_init: FastInit::Ones,
    }
    .init(&config, 5, &device)
    .unwrap();
    // The shared model: the shared weights and (equal) biases copied into a plain ViT.
    let mut shared = config.init(&device).unwrap();
    let plain = |l: &BeLinear| (l.weight.val(), row(&l.bias.val(), 0));
    let (p, c, d) = (config.patch_size, config.channels, config.d_model);
    shared.patch_embed.weight = param(
        be.patch_embed
            .weight
            .val()
            .transpose()
            .reshape([d, c, p, p]),
    );
    shared.patch_embed.bias = Some(param(row(&be.patch_embed.bias.val(), 0)));
    shared.cls_token = be.cls_token.clone();
    shared.pos_embed = be.pos_embed.clone();
    for (block, ours) in shared.encoder.layer.iter_mut().zip(&be.blocks) {
        set_linear(&mut block.attention.query, plain(&ours.query));
        set_linear(&mut block.attention.key, plain(&ours.key));
        set_linear(&mut block.attention.value, plain(&ours.value));
        set_linear(&mut block.attention.output, plain(&ours.output));
        set_linear(&mut block.mlp.fc1, plain(&ours.fc1));
        set_linear(&mut block.mlp.fc2, plain(&ours.fc2));
        block.norm1 = ours.norm1.clone();
        block.norm2 = ours.norm2.clone();
    }
    shared.norm = be.norm.clone();
    set_linear(&mut shared.head, plain(&be.head));

    let x = images(4, 2, &device);
    let logits = be.member_logits(x.clone().into());
    assert_eq!(logits.dims(), [3, 4, 3]);
    let expected = shared.forward(x, &Gates::none(), Mode::Deterministic);
    for m in 0..3 {
        assert_close(&member(&logits, m), &expected, 1e-5);
    }
}

#[test]
fn each_member_is_the_vit_with_its_rank1_modulated_weights() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(2);
    let mut be = BatchEnsembleConfig {
        members: 3,
        ..BatchEnsembleConfig::default()
    }
    .init(&config, 6, &device)
    .unwrap();
    for r in values(&be.blocks[1].fc1.r.val()) {
        assert!(r == 1.0 || r == -1.0, "fast weight {r} is not a sign");
    }
    // Per-member biases start shared; make them differ so that b_m is tested too.
    for l in linears(&mut be) {
        let noise = l.bias.val().random_like(Distribution::Normal(0.0, 0.1));
        l.bias = param(l.bias.val() + noise);
    }
    let x = images(4, 2, &device);
    let logits = be.member_logits(x.clone().into());
    for m in 0..3 {
        let vit = member_vit(&be, m, &config, &device);
        let expected = vit.forward(x.clone(), &Gates::none(), Mode::Deterministic);
        assert_close(&member(&logits, m), &expected, 1e-5);
    }
    let gap: f32 = (member(&logits, 0) - member(&logits, 1))
        .abs()
        .max()
        .into_scalar();
    assert!(gap > 1e-3, "random-sign members should differ");
    assert_eq!(be.train_logits(x.into()).dims(), [3, 4, 3]);
}

#[test]
fn parameter_and_flop_counts_match_their_closed_forms() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(2);
    let m = 3;
    let be = BatchEnsembleConfig {
        members: m,
        ..BatchEnsembleConfig::default()
    }
    .init(&config, 7, &device)
    .unwrap();
    let base = config.init(&device).unwrap().num_params();
    // Each linear (in, out) adds r, s and M biases in place of its one bias.
    let extra = |d_in: usize, d_out: usize| m * (d_in + 2 * d_out) - d_out;
    let (c, p, d, f, k) = (2, 4, 8, 16, 3);
    let per_block = 4 * extra(d, d) + extra(d, f) + extra(f, d);
    let expected = base + extra(c * p * p, d) + config.n_layers * per_block + extra(d, k);
    assert_eq!(EnsembleModel::num_params(&be), expected);
    assert_eq!(be.flops_per_sample(), m as u64 * config.flops_per_sample());
    assert_eq!(be.members(), m);
}

#[test]
fn invalid_settings_are_named() {
    let _guard = serial();
    let device = Device::flex();
    let e = BatchEnsembleConfig {
        members: 0,
        ..BatchEnsembleConfig::default()
    }
    .init(&tiny(1), 1, &device)
    .unwrap_err();
    assert!(e.to_string().contains("BatchEnsembleConfig.members"), "{e}");
    let e = BatchEnsembleConfig::default()
        .init(&tiny(1).with_patch_size(3), 1, &device)
        .unwrap_err();
    assert!(e.to_string().contains("ViTConfig.image_size"), "{e}");
}
