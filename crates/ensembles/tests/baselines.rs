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

/// f32 rounded to bf16 (round to nearest, ties to even), from the bits.
fn to_bf16(x: f32) -> f32 {
    let bits = x.to_bits();
    f32::from_bits((bits + 0x7fff + ((bits >> 16) & 1)) & 0xffff_0000)
}

#[test]
fn in_precision_casts_the_weights_and_returns_f32_logits() {
    use burn::tensor::{DType, FloatDType};
    let device = Device::flex();
    let model = tiny(&device, 6, 0.0);
    let x = images(&device);
    let single = Single::new(model.clone(), 7);
    let plain = single.member_logits(x.clone().into());
    // In f32 the wrapper changes nothing.
    let same = single
        .in_precision(FloatDType::F32)
        .member_logits(x.clone().into());
    same.into_data().assert_eq(&plain.clone().into_data(), true);
    // In bf16 every weight is the f32 weight rounded to 8 significant bits.
    let weight = model.encoder.layer[0].mlp.fc1.weight.val();
    let cast = seam::precision::cast_floats(model.clone(), FloatDType::BF16);
    let low_weight = cast.encoder.layer[0].mlp.fc1.weight.val();
    assert_eq!(low_weight.dtype(), DType::BF16);
    let expected: Vec<f32> = (weight.into_data().try_to_vec::<f32>().unwrap().iter())
        .map(|&w| to_bf16(w))
        .collect();
    let got = low_weight
        .cast(FloatDType::F32)
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();
    assert_eq!(got, expected);
    // The logits come back in f32, close to the f32 model's but not equal to them: bf16's
    // relative rounding is 2^-9 per value, a few of them per layer on this 2-block model.
    let ensemble = DeepEnsemble::new(vec![model.clone(), tiny(&device, 7, 0.0)], 100);
    for m in [&single as &dyn EnsembleModel, &ensemble] {
        let f32_logits = m.member_logits(x.clone().into());
        let low = m.in_precision(FloatDType::BF16);
        assert_eq!(
            (low.members(), low.num_params(), low.flops_per_sample()),
            (m.members(), m.num_params(), m.flops_per_sample())
        );
        let logits = low.member_logits(x.clone().into());
        assert_eq!(logits.dtype(), DType::F32);
        let scale: f32 = f32_logits.clone().abs().max().into_scalar();
        let gap: f32 = (logits - f32_logits).abs().max().into_scalar();
        assert!(gap > 0.0 && gap < 0.05 * (1.0 + scale), "{gap} vs {scale}");
    }
}
