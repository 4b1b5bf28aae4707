//! The baselines against their definitions: members are the models they wrap.

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::{Device, Distribution, Tensor, Tolerance};
use ensembles::{DeepEnsemble, McDropout, Single};
use seam::EnsembleModel;

fn tiny(device: &Device, seed: u64, dropout: f64) -> VisionTransformer {
    device.seed(seed);
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_num_classes(3)
        .with_dropout(dropout)
        .init(device)
        .unwrap()
}

fn images(device: &Device) -> Tensor<4> {
    device.seed(99);
    Tensor::random([5, 1, 8, 8], Distribution::Uniform(0.0, 1.0), device)
}

#[test]
fn deep_ensemble_members_are_the_models() {
    let device = Device::flex();
    let models = vec![
        tiny(&device, 1, 0.0),
        tiny(&device, 2, 0.0),
        tiny(&device, 3, 0.0),
    ];
    let x = images(&device);
    let ensemble = DeepEnsemble::new(models.clone(), 100);
    let logits = ensemble.member_logits(x.clone().into());
    assert_eq!(logits.dims(), [3, 5, 3]);
    for (k, m) in models.iter().enumerate() {
        let alone = m.forward(x.clone(), &Gates::none(), Mode::Deterministic);
        let member = logits.clone().narrow(0, k, 1).squeeze_dim::<2>(0);
        member
            .into_data()
            .assert_approx_eq::<f32>(&alone.into_data(), Tolerance::absolute(1e-6));
    }
    assert_eq!(ensemble.num_params(), 3 * models[0].num_params());
    assert_eq!(ensemble.flops_per_sample(), 300);
    assert_eq!(ensemble.members(), 3);
}

#[test]
fn single_is_the_deterministic_model() {
    let device = Device::flex();
    let model = tiny(&device, 4, 0.3);
    let x = images(&device);
    let single = Single::new(model.clone(), 7);
    let a = single.member_logits(x.clone().into());
    assert_eq!(a.dims(), [1, 5, 3]);
    let b = model
        .forward(x, &Gates::none(), Mode::Deterministic)
        .unsqueeze_dim::<3>(0);
    a.into_data().assert_eq(&b.into_data(), true);
}

#[test]
fn mc_dropout_samples_differ_and_collapse_without_dropout() {
    let device = Device::flex();
    let x = images(&device);
    let stochastic = McDropout::new(tiny(&device, 5, 0.5), 4, 10);
    device.seed(7);
    let s = stochastic.member_logits(x.clone().into());
    assert_eq!(s.dims(), [4, 5, 3]);
    let first = s.clone().narrow(0, 0, 1);
    let second = s.narrow(0, 1, 1);
    let gap: f32 = (first - second).abs().max().into_scalar();
    assert!(gap > 1e-4, "dropout samples should differ");
    assert_eq!(stochastic.flops_per_sample(), 40);

    let model = tiny(&device, 6, 0.0);
    let plain = McDropout::new(model.clone(), 3, 10).member_logits(x.clone().into());
    let base = model.forward(x, &Gates::none(), Mode::Deterministic);
    for k in 0..3 {
        let member = plain.clone().narrow(0, k, 1).squeeze_dim::<2>(0);
        member
            .into_data()
            .assert_approx_eq::<f32>(&base.clone().into_data(), Tolerance::absolute(1e-6));
    }
}
