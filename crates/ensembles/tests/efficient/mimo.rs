//! MIMO: one network, member m reading input slot m and writing output block m.

use backbone::{Gates, Mode};
use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Device, Int, Tensor, TensorData};
use ensembles::{Mimo, MimoConfig};
use seam::EnsembleModel;
use seam::Trainable;

use crate::{assert_close, images, member, param, serial, tiny};

struct Touch;

impl ModuleVisitor for Touch {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let _ = param.val();
    }
}

fn permutation_rows(p: &Tensor<2, Int>) -> Vec<Vec<usize>> {
    let [m, b] = p.dims();
    let flat = p.to_data().convert::<i64>().try_into_vec::<i64>().unwrap();
    (0..m)
        .map(|r| {
            flat[r * b..(r + 1) * b]
                .iter()
                .map(|&v| v as usize)
                .collect()
        })
        .collect()
}

#[test]
fn one_member_is_the_plain_vit() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(1);
    let mimo = MimoConfig {
        members: 1,
        ..MimoConfig::default()
    }
    .init(&config, 3, &device)
    .unwrap();
    // The same seed, then every lazily initialised weight drawn in field order.
    device.seed(3);
    let plain = config.init(&device).unwrap();
    plain.visit(&mut Touch);
    let x = images(4, 1, &device);
    let logits = mimo.member_logits(x.clone().into());
    assert_eq!(logits.dims(), [1, 4, 3]);
    let expected = plain.forward(x, &Gates::none(), Mode::Deterministic);
    logits
        .squeeze_dim::<2>(0)
        .into_data()
        .assert_eq(&expected.into_data(), true);
    assert_eq!(mimo.flops_per_sample(), config.flops_per_sample());
    assert_eq!(EnsembleModel::num_params(&mimo), plain.num_params());
}

#[test]
fn at_test_time_member_m_reads_every_slot_and_writes_block_m() {
    let _guard = serial();
    let device = Device::flex();
    let (config, m, c, k) = (tiny(2), 3, 2, 3);
    let mimo = MimoConfig {
        members: m,
        ..MimoConfig::default()
    }
    .init(&config, 4, &device)
    .unwrap();
    let x = images(4, c, &device);
    let logits = mimo.member_logits(x.clone().into());
    assert_eq!(logits.dims(), [m, 4, k]);
    // The same image in all slots: a plain ViT whose patch weight sums the slots' weights,
    // with classifier block m, is member m.
    let weight = mimo.model.patch_embed.weight.val(); // [D, M·C, p, p]
    let summed = (0..m)
        .map(|s| weight.clone().narrow(1, s * c, c))
        .reduce(|a, b| a + b)
        .unwrap();
    for j in 0..m {
        let mut plain = mimo.model.clone();
        plain.patch_embed.weight = param(summed.clone());
        plain.head.weight = param(mimo.model.head.weight.val().narrow(1, j * k, k));
        let bias = mimo.model.head.bias.as_ref().unwrap().val();
        plain.head.bias = Some(param(bias.narrow(0, j * k, k)));
        let expected = plain.forward(x.clone(), &Gates::none(), Mode::Deterministic);
        assert_close(&member(&logits, j), &expected, 1e-5);
    }
}

#[test]
fn training_outputs_come_back_in_batch_order() {
    let _guard = serial();
    let device = Device::flex();
    let (config, m, b, c, k) = (tiny(1), 2, 4, 1, 3);
    let mimo = MimoConfig {
        members: m,
        ..MimoConfig::default()
    }
    .init(&config, 5, &device)
    .unwrap();
    let x = images(b, c, &device);
    let orders = [[2usize, 0, 3, 1], [1, 3, 0, 2]];
    let flat: Vec<i64> = orders.iter().flatten().map(|&i| i as i64).collect();
    let perms = Tensor::<2, Int>::from_data(TensorData::new(flat, [m, b]), &device);
    let got = mimo.forward_permuted(x.clone(), perms, Mode::Deterministic);

    // By hand: slot i holds image orders[j][i] in member j's channels.
    let image = |i: usize| x.clone().narrow(0, i, 1);
    let stacked = (0..b)
        .map(|i| Tensor::cat((0..m).map(|j| image(orders[j][i])).collect(), 1))
        .collect();
    let slots = mimo
        .model
        .forward(Tensor::cat(stacked, 0), &Gates::none(), Mode::Deterministic); // [B, M·K]
    for (j, order) in orders.iter().enumerate() {
        for (slot, &i) in order.iter().enumerate() {
            let expected = slots.clone().narrow(0, slot, 1).narrow(1, j * k, k);
            let actual = member(&got, j).narrow(0, i, 1);
            assert_close(&actual, &expected, 1e-5);
        }
    }
}

#[test]
fn permutations_are_reproducible_permutations() {
    let _guard = serial();
    let device = Device::flex();
    let mimo = |rho: f64| -> Mimo {
        MimoConfig {
            members: 3,
            input_repetition: rho,
        }
        .init(&tiny(1), 6, &device)
        .unwrap()
    };
    let independent = mimo(0.0);
    let draw = |model: &Mimo, seed: u64| {
        device.seed(seed);
        permutation_rows(&model.permutations(8, &device))
    };
    let first = draw(&independent, 11);
    assert_eq!(
        first,
        draw(&independent, 11),
        "same device seed, same orders"
    );
    assert_ne!(first, draw(&independent, 12), "another seed, other orders");
    for row in &first {
        let mut sorted = row.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..8).collect::<Vec<_>>(),
            "{row:?} is not a permutation"
        );
    }
    assert!(first[0] != first[1] || first[1] != first[2]);

    // ρ = 1/2: the last 4 slots hold the same image for every member.
    let half = draw(&mimo(0.5), 13);
    for row in &half {
        let mut sorted = row.clone();
        sorted.sort();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }
    assert!(half.iter().all(|r| r[4..] == half[0][4..]), "{half:?}");
    let all = draw(&mimo(1.0), 14);
    assert!(all.iter().all(|r| *r == all[0]), "{all:?}");

    // train_logits draws the same orders after the same seed.
    let x = images(8, 1, &device);
    device.seed(15);
    let a = independent.train_logits(x.clone().into());
    device.seed(15);
    let b = independent.train_logits(x.into());
    assert_eq!(a.dims(), [3, 8, 3]);
    a.into_data().assert_eq(&b.into_data(), true);
}

#[test]
fn parameter_and_flop_counts_match_their_closed_forms() {
    let _guard = serial();
    let device = Device::flex();
    let config = tiny(1);
    let m = 3;
    let mimo = MimoConfig {
        members: m,
        ..MimoConfig::default()
    }
    .init(&config, 7, &device)
    .unwrap();
    let base = config.init(&device).unwrap().num_params();
    let (c, p, d, k, n) = (1, 4, 8, 3, 4);
    // Extra input slots in the patch embedding, extra classifier blocks.
    let expected = base + (m - 1) * c * p * p * d + (m - 1) * (d * k + k);
    assert_eq!(EnsembleModel::num_params(&mimo), expected);
    let extra_flops = 2 * (m - 1) as u64 * (n * c * p * p * d + d * k) as u64;
    assert_eq!(
        mimo.flops_per_sample(),
        config.flops_per_sample() + extra_flops
    );
}

#[test]
fn invalid_settings_are_named() {
    let _guard = serial();
    let device = Device::flex();
    for (settings, field) in [
        (
            MimoConfig {
                members: 0,
                ..MimoConfig::default()
            },
            "MimoConfig.members",
        ),
        (
            MimoConfig {
                input_repetition: 1.5,
                ..MimoConfig::default()
            },
            "MimoConfig.input_repetition",
        ),
    ] {
        let e = settings.init(&tiny(1), 1, &device).unwrap_err();
        assert!(e.to_string().contains(field), "{e}");
    }
}
