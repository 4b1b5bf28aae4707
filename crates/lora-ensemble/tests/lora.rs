//! LoRA-Ensemble on a tiny ViT: the vectorised pass equals N merged models, members start at the
//! base model, training moves only adapters and heads, closed-form counts, and adapter files.

use std::sync::{Mutex, MutexGuard};

use backbone::{Gates, Mode, ViTConfig, VisionTransformer, flops_per_sample};
use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::{Device, Tensor, TensorData};
use data::{ImageDataset, Normalization, Pixels};
use ensembles::EnsembleModel;
use lora_ensemble::{HeadInit, LoraConfig, LoraEnsemble, LoraError, LowRank};
use train::{FitOptions, ImageData, TrainConfig, fit};

const N: usize = 3;
const RANK: usize = 2;

/// Burn's flex RNG is process-wide: tests that seed it must not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn vit_config() -> ViTConfig {
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_num_classes(3)
        .with_dropout(0.1)
}

fn backbone(device: &Device) -> VisionTransformer {
    device.seed(3);
    vit_config().init(device).unwrap()
}

fn lora_config() -> LoraConfig {
    LoraConfig::new(N).with_rank(RANK).with_scale(0.5)
}

/// Deterministic pseudo-random values in [-1, 1) (a small LCG; any fixed spread will do).
fn values(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

fn tensor<const D: usize>(shape: [usize; D], seed: u64, device: &Device) -> Tensor<D> {
    let len = shape.iter().product();
    Tensor::from_data(TensorData::new(values(len, seed), shape), device)
}

fn images(batch: usize, device: &Device) -> Tensor<4> {
    tensor([batch, 1, 8, 8], 7, device)
}

/// Gives every B_n non-zero values, so members differ and the adapters matter.
fn perturb(mut model: LoraEnsemble, device: &Device) -> LoraEnsemble {
    for (l, block) in model.adapters.blocks.iter_mut().enumerate() {
        for (p, adapter) in [
            &mut block.query,
            &mut block.key,
            &mut block.value,
            &mut block.output,
        ]
        .into_iter()
        .enumerate()
        {
            let shape = adapter.b.val().dims();
            adapter.b =
                Param::from_tensor(tensor(shape, (10 * l + p) as u64, device).mul_scalar(0.1));
        }
    }
    model
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_to_vec::<f32>().unwrap()
}

/// `max |actual - expected| / max |expected|`.
fn relative_error(actual: &[f32], expected: &[f32]) -> f32 {
    assert_eq!(actual.len(), expected.len());
    let scale = expected.iter().fold(0f32, |m, v| m.max(v.abs()));
    let diff = actual
        .iter()
        .zip(expected)
        .fold(0f32, |m, (a, e)| m.max((a - e).abs()));
    diff / scale
}

/// Every float parameter's values, in visiting order.
#[derive(Default)]
struct Values(Vec<Vec<f32>>);

impl ModuleVisitor for Values {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        self.0.push(to_vec(param.val()));
    }
}

fn param_values(module: &impl Module) -> Vec<Vec<f32>> {
    let mut values = Values::default();
    module.visit(&mut values);
    values.0
}

/// Member n as a model of its own: the backbone with `W0 + s·A_n B_n` merged into each adapted
/// Linear weight and member n's classifier as its head.
fn merged_member(model: &LoraEnsemble, n: usize) -> VisionTransformer {
    let merge = |adapter: &LowRank, weight: &mut Param<Tensor<2>>| {
        let a = adapter.a.val().narrow(0, n, 1).squeeze_dim::<2>(0);
        let b = adapter.b.val().narrow(0, n, 1).squeeze_dim::<2>(0);
        let merged = weight.val() + a.matmul(b).mul_scalar(model.scale);
        *weight = Param::from_tensor(merged);
    };
    let mut member = model.backbone.clone();
    for (block, adapters) in member.encoder.layer.iter_mut().zip(&model.adapters.blocks) {
        let attention = &mut block.attention;
        merge(&adapters.query, &mut attention.query.weight);
        merge(&adapters.key, &mut attention.key.weight);
        merge(&adapters.value, &mut attention.value.weight);
        merge(&adapters.output, &mut attention.output.weight);
    }
    let heads = &model.adapters.heads;
    member.head.weight = Param::from_tensor(heads.weight.val().narrow(0, n, 1).squeeze_dim(0));
    member.head.bias = Some(Param::from_tensor(
        heads.bias.val().narrow(0, n, 1).squeeze_dim(0),
    ));
    member
}

#[test]
fn vectorised_forward_equals_looping_over_merged_members() {
    let _guard = serial();
    let device = Device::flex();
    let model = perturb(lora_config().init(backbone(&device), 5).unwrap(), &device);
    let x = images(4, &device);
    let logits = model.member_logits(x.clone());
    assert_eq!(logits.dims(), [N, 4, 3]);
    let base = to_vec(
        model
            .backbone
            .forward(x.clone(), &Gates::none(), Mode::Deterministic),
    );
    let mut seen: Vec<Vec<f32>> = Vec::new();
    for n in 0..N {
        let vectorised = to_vec(logits.clone().narrow(0, n, 1).squeeze_dim::<2>(0));
        let looped = to_vec(merged_member(&model, n).forward(
            x.clone(),
            &Gates::none(),
            Mode::Deterministic,
        ));
        let error = relative_error(&vectorised, &looped);
        assert!(error <= 1e-5, "member {n}: relative error {error}");
        // Not a vacuous match: members differ from the base model and from each other.
        assert!(
            relative_error(&vectorised, &base) > 1e-2,
            "member {n} equals the base"
        );
        for (m, other) in seen.iter().enumerate() {
            assert!(
                relative_error(&vectorised, other) > 1e-2,
                "members {m} and {n} coincide"
            );
        }
        seen.push(vectorised);
    }
}

#[test]
fn members_start_with_the_base_features() {
    let _guard = serial();
    let device = Device::flex();
    let x = images(5, &device);
    let model = lora_config().init(backbone(&device), 1).unwrap();
    let base = to_vec(
        model
            .backbone
            .features(x.clone(), &Gates::none(), Mode::Deterministic),
    );
    let features = model.member_features(x.clone(), Mode::Deterministic);
    assert_eq!(features.dims(), [N, 5, 16]);
    for n in 0..N {
        let member = to_vec(features.clone().narrow(0, n, 1).squeeze_dim::<2>(0));
        let error = relative_error(&member, &base);
        assert!(error <= 1e-6, "member {n}: relative error {error}");
    }
    // Members differ in their A_n draws (B_n = 0 hides them at initialisation).
    let a = model.adapters.blocks[0].query.a.val();
    let first = to_vec(a.clone().narrow(0, 0, 1));
    let second = to_vec(a.narrow(0, 1, 1));
    assert_ne!(first, second);

    // Copied heads: every member's logits are then the base model's.
    let copied = lora_config()
        .with_head_init(HeadInit::Copy)
        .init(model.backbone.clone(), 1)
        .unwrap();
    let base_logits = to_vec(model.backbone.forward(
        x.clone(),
        &Gates::none(),
        Mode::Deterministic,
    ));
    let logits = copied.member_logits(x);
    for n in 0..N {
        let member = to_vec(logits.clone().narrow(0, n, 1).squeeze_dim::<2>(0));
        let error = relative_error(&member, &base_logits);
        assert!(error <= 1e-6, "member {n}: relative error {error}");
    }
}

/// Two classes of 8x8 images: a bright top half (class 0) or a bright bottom half (class 1).
fn halves(n: usize) -> ImageDataset {
    let noise = values(n * 64, 11);
    let pixels = (0..n * 64)
        .map(|i| {
            let (image, row) = (i / 64, i % 64 / 8);
            let bright = (row < 4) == (image % 2 == 0);
            (if bright { 0.7 } else { 0.2 }) + 0.2 * noise[i]
        })
        .collect();
    ImageDataset {
        name: "halves".into(),
        pixels: Pixels::F32(pixels),
        labels: (0..n).map(|i| (i % 2) as u32).collect(),
        dims: [1, 8, 8],
        num_classes: 2,
    }
}

#[test]
fn training_moves_adapters_and_heads_but_not_the_backbone() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let model = lora_config().init(backbone(&device), 2).unwrap();
    let backbone_before = param_values(&model.backbone);
    let adapters_before = param_values(&model.adapters);
    let set = halves(32);
    let norm = Normalization::new(vec![0.0], vec![1.0]).unwrap();
    // Weight decay on: it must not reach the frozen backbone either.
    let recipe = TrainConfig {
        epochs: 2,
        batch_size: 16,
        lr: 1e-2,
        weight_decay: 0.05,
        warmup_epochs: 0.0,
        ..Default::default()
    };
    let options = FitOptions {
        device: device.clone(),
        seed: 4,
        label: "lora".into(),
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill: None,
    };
    let data = ImageData {
        set: &set,
        norm: &norm,
    };
    let trained = fit(model, data, &recipe, &options).unwrap().valid();
    assert_eq!(
        param_values(&trained.backbone),
        backbone_before,
        "the frozen backbone changed"
    );
    let adapters_after = param_values(&trained.adapters);
    assert_eq!(adapters_after.len(), adapters_before.len());
    for (i, (after, before)) in adapters_after.iter().zip(&adapters_before).enumerate() {
        assert_ne!(after, before, "adapter tensor {i} did not move");
    }
}

#[test]
fn parameter_count_and_flops_match_their_closed_forms() {
    let _guard = serial();
    let device = Device::flex();
    let backbone = backbone(&device);
    let backbone_params = backbone.num_params();
    let model = lora_config().init(backbone, 0).unwrap();
    let c = vit_config();
    let (l, d, classes) = (c.n_layers, c.d_model, c.num_classes);
    assert_eq!(model.members(), N);
    assert_eq!(
        EnsembleModel::num_params(&model),
        4 * l * N * RANK * (d + d) + N * (d * classes + classes) + backbone_params
    );
    let tokens = c.num_tokens() as u64;
    let adapters = (l * 4 * RANK * 2 * d) as u64;
    assert_eq!(
        model.flops_per_sample(),
        N as u64 * (flops_per_sample(&c) + 2 * tokens * adapters)
    );
}

#[test]
fn adapters_round_trip_and_refuse_another_shape() {
    let _guard = serial();
    let device = Device::flex();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adapters.bpk");
    let backbone = backbone(&device);
    let model = perturb(lora_config().init(backbone.clone(), 9).unwrap(), &device);
    model.save_adapters(&path).unwrap();

    // Only adapters and heads are in the file: A and B for 4 projections per block, plus the
    // heads' weight and bias.
    let record = burn::store::ModuleRecord::load(&path).unwrap();
    assert_eq!(record.len(), vit_config().n_layers * 4 * 2 + 2);

    let loaded = LoraEnsemble::load_adapters(backbone.clone(), &lora_config(), &path).unwrap();
    let x = images(3, &device);
    assert_eq!(
        to_vec(loaded.member_logits(x.clone())),
        to_vec(model.member_logits(x))
    );

    for other in [
        LoraConfig::new(N + 1).with_rank(RANK),
        LoraConfig::new(N).with_rank(RANK + 1),
    ] {
        let e = LoraEnsemble::load_adapters(backbone.clone(), &other, &path).unwrap_err();
        assert!(
            matches!(&e, LoraError::AdapterFile { path: p, .. } if *p == path),
            "{e}"
        );
        assert!(e.to_string().contains("adapters.bpk"), "{e}");
    }
    let deeper = vit_config().with_n_layers(3).init(&device).unwrap();
    assert!(LoraEnsemble::load_adapters(deeper, &lora_config(), &path).is_err());
    let missing = dir.path().join("absent.bpk");
    let e = LoraEnsemble::load_adapters(backbone, &lora_config(), &missing).unwrap_err();
    assert!(e.to_string().contains("absent.bpk"), "{e}");
}

#[test]
fn invalid_configs_name_their_field() {
    let device = Device::flex();
    let backbone = vit_config().init(&device).unwrap();
    let cases = [
        (LoraConfig::new(0), "LoraConfig.members"),
        (LoraConfig::new(2).with_rank(0), "LoraConfig.rank"),
        (LoraConfig::new(2).with_scale(f64::NAN), "LoraConfig.scale"),
        (
            LoraConfig::new(2).with_init_gain(0.0),
            "LoraConfig.init_gain",
        ),
    ];
    for (config, field) in cases {
        let e = config.init(backbone.clone(), 0).unwrap_err();
        assert!(
            matches!(&e, LoraError::InvalidConfig { field: f, .. } if *f == field),
            "{e}"
        );
        assert!(e.to_string().contains(field), "{e}");
    }
    assert_eq!("random".parse::<HeadInit>(), Ok(HeadInit::Random));
    assert_eq!("copy".parse::<HeadInit>(), Ok(HeadInit::Copy));
    assert_eq!(HeadInit::Copy.to_string().parse(), Ok(HeadInit::Copy));
    let e = "Copy".parse::<HeadInit>().unwrap_err().to_string();
    assert!(
        e.contains("LoraConfig.head_init") && e.contains("\"Copy\""),
        "{e}"
    );
}
