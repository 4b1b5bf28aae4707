//! Packed-Ensembles: member m is a plain ViT of width d_m made of its slices of every layer.

use backbone::{Gates, GroupedLinear, Mode, ViTConfig, VisionTransformer};
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Device, Distribution, Tensor};
use ensembles::{PackedConfig, PackedEnsemble, PackedLayerNorm};
use seam::EnsembleModel;
use seam::Trainable;

use crate::{assert_close, images, layer_norm, member, param, row, serial, tiny};

/// Group g of a grouped linear as a dense layer.
fn group(l: &GroupedLinear, g: usize) -> (Tensor<2>, Tensor<1>) {
    let weight = l.weight.val().narrow(0, g, 1).squeeze_dim(0);
    (weight, row(&l.bias.val().squeeze_dim(1), g))
}

fn set_linear(target: &mut Linear, (weight, bias): (Tensor<2>, Tensor<1>)) {
    target.weight = param(weight);
    target.bias = Some(param(bias));
}

/// Member m of a γ = 1 Packed-Ensemble as a plain ViT of width d_m, heads H, MLP f_m.
fn member_vit(
    packed: &PackedEnsemble,
    m: usize,
    config: &ViTConfig,
    widths: (usize, usize),
    device: &Device,
) -> VisionTransformer {
    let (d_m, f_m) = widths;
    let mut vit = config
        .clone()
        .with_d_model(d_m)
        .with_d_mlp(f_m)
        .init(device)
        .unwrap();
    let channels = |t: Tensor<3>| param(t.narrow(2, m * d_m, d_m));
    let norm = |like: &LayerNorm, n: &PackedLayerNorm| {
        layer_norm(like, row(&n.gamma.val(), m), row(&n.beta.val(), m))
    };
    let conv = &packed.patch_embed;
    vit.patch_embed.weight = param(conv.weight.val().narrow(0, m * d_m, d_m));
    vit.patch_embed.bias = Some(param(conv.bias.as_ref().unwrap().val().narrow(
        0,
        m * d_m,
        d_m,
    )));
    vit.cls_token = channels(packed.cls_token.val());
    vit.pos_embed = channels(packed.pos_embed.val());
    for (block, ours) in vit.encoder.layer.iter_mut().zip(&packed.blocks) {
        set_linear(&mut block.attention.query, group(&ours.query, m));
        set_linear(&mut block.attention.key, group(&ours.key, m));
        set_linear(&mut block.attention.value, group(&ours.value, m));
        set_linear(&mut block.attention.output, group(&ours.output, m));
        set_linear(&mut block.mlp.fc1, group(&ours.fc1, m));
        set_linear(&mut block.mlp.fc2, group(&ours.fc2, m));
        block.norm1 = norm(&block.norm1.clone(), &ours.norm1);
        block.norm2 = norm(&block.norm2.clone(), &ours.norm2);
    }
    vit.norm = norm(&vit.norm.clone(), &packed.norm);
    set_linear(&mut vit.head, group(&packed.head, m));
    vit
}

fn jitter(n: &mut PackedLayerNorm) {
    let noise = |t: Tensor<2>| t.random_like(Distribution::Normal(0.0, 0.2));
    n.gamma = param(n.gamma.val() + noise(n.gamma.val()));
    n.beta = param(n.beta.val() + noise(n.beta.val()));
}

#[test]
fn each_member_is_a_plain_vit_of_its_slices() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(1);
    // M = 1, α = 1, γ = 1 is the plain ViT itself; M = 3, α = 2 rounds d_m = 16/3 up to 6
    // (a multiple of H = 2) and f_m = 32/3 up to 11.
    for (members, alpha, widths) in [(1, 1.0, (8, 16)), (3, 2.0, (6, 11))] {
        let settings = PackedConfig {
            members,
            alpha,
            ..PackedConfig::default()
        };
        assert_eq!(
            (
                settings.member_width(&config),
                settings.member_mlp_width(&config)
            ),
            widths
        );
        let mut packed = settings.init(&config, 8, &device).unwrap();
        // Per-member norm parameters start equal; make them differ so their grouping is tested.
        for b in &mut packed.blocks {
            jitter(&mut b.norm1);
            jitter(&mut b.norm2);
        }
        jitter(&mut packed.norm);
        let x = images(5, 1, &device);
        let logits = packed.member_logits(x.clone().into());
        assert_eq!(logits.dims(), [members, 5, 3]);
        for m in 0..members {
            let vit = member_vit(&packed, m, &config, widths, &device);
            let expected = vit.forward(x.clone(), &Gates::none(), Mode::Deterministic);
            assert_close(&member(&logits, m), &expected, 1e-5);
        }
        let member_config = config.clone().with_d_model(widths.0).with_d_mlp(widths.1);
        assert_eq!(
            packed.flops_per_sample(),
            members as u64 * member_config.flops_per_sample()
        );
    }
}

#[test]
fn groups_within_members_shape_and_count() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(1);
    let (m, gamma) = (3, 2);
    let settings = PackedConfig {
        members: m,
        gamma,
        ..PackedConfig::default()
    };
    let packed = settings.init(&config, 9, &device).unwrap();
    // d_m = 16/3 -> 6 (a multiple of lcm(H, γ) = 2), f_m = 32/3 -> 12 (a multiple of γ).
    let (d_m, f_m) = (6, 12);
    assert_eq!(packed.blocks[0].query.weight.dims(), [m * gamma, 3, 3]);
    assert_eq!(packed.blocks[0].fc1.weight.dims(), [m * gamma, 3, 6]);
    let x = images(5, 1, &device);
    assert_eq!(packed.member_logits(x.clone().into()).dims(), [3, 5, 3]);
    assert_eq!(packed.train_logits(x.into()).dims(), [3, 5, 3]);

    let (w, f, g) = (m * d_m, m * f_m, m * gamma);
    let (c, p, t, k, layers) = (1, 4, 5, 3, 2);
    let embedding = c * p * p * w + w + w + t * w; // patch conv, class token, positions
    let per_block = 4 * (w * w / g + w) + (w * f / g + f) + (f * w / g + w) + 2 * 2 * w;
    let expected = embedding + layers * per_block + 2 * w + (w * k + m * k);
    assert_eq!(EnsembleModel::num_params(&packed), expected);
}

#[test]
fn flops_count_only_the_block_diagonal_part() {
    let _guard = serial();
    // M = 2, α = 2, γ = 2 on the tiny ViT: W = 16, MLP 32, 4 groups, 5 tokens, 4 patches.
    // Multiply-accumulates: patches 4·16·16 = 1024; per block 5·(4·16² + 2·16·32)/4 (grouped
    // projections) + 2·5²·16 (scores and context) = 3360; classifier 16·3 = 48.
    let settings = PackedConfig {
        members: 2,
        gamma: 2,
        ..PackedConfig::default()
    };
    assert_eq!(settings.flops(&tiny(1)), 2 * (1024 + 2 * 3360 + 48));
}

#[test]
fn invalid_settings_are_named() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(1);
    for (settings, field) in [
        (
            PackedConfig {
                alpha: 0.0,
                ..PackedConfig::default()
            },
            "PackedConfig.alpha",
        ),
        (
            PackedConfig {
                alpha: f64::NAN,
                ..PackedConfig::default()
            },
            "PackedConfig.alpha",
        ),
        (
            PackedConfig {
                gamma: 0,
                ..PackedConfig::default()
            },
            "PackedConfig.gamma",
        ),
        (
            PackedConfig {
                members: 0,
                ..PackedConfig::default()
            },
            "PackedConfig.members",
        ),
    ] {
        let e = settings.init(&config, 1, &device).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
    let e = PackedConfig::default()
        .init(&config.with_n_heads(3), 1, &device)
        .unwrap_err();
    assert!(e.to_string().contains("ViTConfig.n_heads"), "{e}");
}
