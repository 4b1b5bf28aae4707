//! LoRA-Ensemble on a tiny ViT and a tiny BERT: the vectorised pass equals N merged models,
//! members start at the base model, training moves only adapters and heads, closed-form counts,
//! and adapter files. The checks shared by both modalities live here.

mod bert;
mod vit;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use backbone::{Classifier, Gates, Input, Mode};
use burn::module::{Module, ModuleVisitor, Param};
use burn::nn::Linear;
use burn::tensor::{Device, Tensor, TensorData};
use lora_ensemble::{HeadInit, LoraConfig, LoraEnsemble, LoraError, LowRank};
use seam::EnsembleModel;
use train::{FitOptions, TrainConfig};

const N: usize = 3;
const RANK: usize = 2;

/// Burn's flex RNG is process-wide: tests that seed it must not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn lora_config() -> LoraConfig {
    LoraConfig {
        rank: RANK,
        scale: 0.5,
        ..LoraConfig::new(N)
    }
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

/// Member n's slice of `[N, B, X]`.
fn member(t: &Tensor<3>, n: usize) -> Vec<f32> {
    to_vec(t.clone().narrow(0, n, 1).squeeze_dim::<2>(0))
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
fn merged_member(model: &LoraEnsemble, n: usize) -> Classifier {
    let merge = |adapter: &LowRank, weight: &mut Param<Tensor<2>>| {
        let a = adapter.a.val().narrow(0, n, 1).squeeze_dim::<2>(0);
        let b = adapter.b.val().narrow(0, n, 1).squeeze_dim::<2>(0);
        let merged = weight.val() + a.matmul(b).mul_scalar(model.scale);
        *weight = Param::from_tensor(merged);
    };
    let mut member = model.backbone.clone();
    let blocks = member.encoder_mut().layer.iter_mut();
    for (block, adapters) in blocks.zip(&model.adapters.blocks) {
        let attention = &mut block.attention;
        merge(&adapters.query, &mut attention.query.weight);
        merge(&adapters.key, &mut attention.key.weight);
        merge(&adapters.value, &mut attention.value.weight);
        merge(&adapters.output, &mut attention.output.weight);
    }
    let heads = &model.adapters.heads;
    *member.head_mut() = Linear {
        weight: Param::from_tensor(heads.weight.val().narrow(0, n, 1).squeeze_dim(0)),
        bias: Some(Param::from_tensor(
            heads.bias.val().narrow(0, n, 1).squeeze_dim(0),
        )),
    };
    member
}

/// The plain backbone's logits `[B, C]`.
fn base_logits(backbone: &Classifier, input: &Input) -> Vec<f32> {
    to_vec(backbone.forward(input.clone(), &Gates::none(), Mode::Deterministic))
}

/// The plain backbone's features `[B, D]`, through its own (unadapted) encoder.
fn base_features(backbone: &Classifier, input: &Input) -> Vec<f32> {
    let mode = Mode::Deterministic;
    let tokens = backbone.encoder().forward(
        backbone.embed(input, mode),
        &Gates::none(),
        input.key_padding(),
        mode,
    );
    to_vec(backbone.features(tokens, input, mode))
}

/// The vectorised member logits (adapter path) and the evaluation path (merged weights, members
/// in groups of every size from 1 to N) equal each merged member run alone (1e-5 relative),
/// and are not a vacuous match: members differ from the base model and from each other.
fn assert_vectorised_equals_merged(model: &LoraEnsemble, input: &Input, classes: usize) {
    let batch = input.batch_size();
    let logits = model.forward(input.clone(), Mode::Deterministic);
    assert_eq!(logits.dims(), [N, batch, classes]);
    let looped: Vec<_> = (0..N)
        .map(|n| base_logits(&merged_member(model, n), input))
        .collect();
    for group in 1..=N {
        let mut grouped = model.clone();
        grouped.eval_rows = group * batch;
        let merged = grouped.member_logits(input.clone());
        assert_eq!(merged.dims(), [N, batch, classes]);
        for (n, looped) in looped.iter().enumerate() {
            let error = relative_error(&member(&merged, n), looped);
            assert!(
                error <= 1e-5,
                "groups of {group}, member {n}: relative error {error}"
            );
        }
    }
    let base = base_logits(&model.backbone, input);
    let mut seen: Vec<Vec<f32>> = Vec::new();
    for (n, looped) in looped.iter().enumerate() {
        let vectorised = member(&logits, n);
        let error = relative_error(&vectorised, looped);
        assert!(error <= 1e-5, "member {n}: relative error {error}");
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

/// At initialisation (B_n = 0) every member's features are the backbone's; with copied heads
/// every member's logits are the backbone's too.
fn assert_members_start_at_base(backbone: Classifier, input: &Input, width: usize) {
    let model = lora_config().init(backbone, 1).unwrap();
    let base = base_features(&model.backbone, input);
    let features = model.member_features(input.clone(), Mode::Deterministic);
    assert_eq!(features.dims(), [N, input.batch_size(), width]);
    for n in 0..N {
        let error = relative_error(&member(&features, n), &base);
        assert!(error <= 1e-6, "member {n}: relative error {error}");
    }
    // Members differ in their A_n draws (B_n = 0 hides them at initialisation).
    let a = model.adapters.blocks[0].query.a.val();
    assert_ne!(to_vec(a.clone().narrow(0, 0, 1)), to_vec(a.narrow(0, 1, 1)));

    let copied = LoraConfig {
        head_init: HeadInit::Copy,
        ..lora_config()
    }
    .init(model.backbone.clone(), 1)
    .unwrap();
    let base_logits = base_logits(&model.backbone, input);
    let logits = copied.member_logits(input.clone());
    for n in 0..N {
        let error = relative_error(&member(&logits, n), &base_logits);
        assert!(error <= 1e-6, "member {n}: relative error {error}");
    }
}

/// A training recipe with weight decay on: it must not reach the frozen backbone either.
fn recipe(batch_size: usize) -> TrainConfig {
    TrainConfig {
        epochs: 2,
        batch_size,
        lr: 1e-2,
        weight_decay: 0.05,
        warmup_epochs: 0.0,
        ..Default::default()
    }
}

fn fit_options(device: &Device) -> FitOptions<'static> {
    FitOptions {
        device: device.clone(),
        seed: 4,
        label: "lora".into(),
        checkpoint: None,
        quiet: true,
        stop_after: None,
        distill: None,
        validation: None,
    }
}

/// `train` (a `train::fit` call) leaves the backbone bit-for-bit unchanged and moves every
/// adapter and head tensor.
fn assert_training_moves_only_adapters(
    model: LoraEnsemble,
    train: impl FnOnce(LoraEnsemble) -> LoraEnsemble,
) {
    let backbone_before = param_values(&model.backbone);
    let adapters_before = param_values(&model.adapters);
    let trained = train(model);
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

/// Saves `model`'s adapters to `path` (made with `lora_config()`), loads them around the same
/// backbone (identical logits on `input`), and refuses configs of another shape, naming the
/// file.
fn assert_adapters_round_trip(model: &LoraEnsemble, input: &Input, path: &Path) {
    model.save_adapters(path).unwrap();
    // Only adapters and heads are in the file: A and B for 4 projections per block, plus the
    // heads' weight and bias.
    let record = burn::store::ModuleRecord::load(path).unwrap();
    assert_eq!(record.len(), model.adapters.blocks.len() * 4 * 2 + 2);

    let backbone = || model.backbone.clone();
    let loaded = LoraEnsemble::load_adapters(backbone(), &lora_config(), path).unwrap();
    assert_eq!(
        to_vec(loaded.member_logits(input.clone())),
        to_vec(model.member_logits(input.clone()))
    );

    for other in [
        LoraConfig {
            rank: RANK,
            ..LoraConfig::new(N + 1)
        },
        LoraConfig {
            rank: RANK + 1,
            ..LoraConfig::new(N)
        },
    ] {
        let e = LoraEnsemble::load_adapters(backbone(), &other, path).unwrap_err();
        assert!(
            matches!(&e, LoraError::AdapterFile { path: p, .. } if p == path),
            "{e}"
        );
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(e.to_string().contains(name), "{e}");
        // Burn's reason is the source, and the file is named once along the chain.
        let chain: Vec<String> =
            std::iter::successors(Some(&e as &dyn std::error::Error), |&e| e.source())
                .map(ToString::to_string)
                .collect();
        assert!(chain.len() >= 2, "{chain:?}");
        assert_eq!(chain.join(": ").matches(name).count(), 1, "{chain:?}");
    }
    let missing = path.with_file_name("absent.bpk");
    let e = LoraEnsemble::load_adapters(backbone(), &lora_config(), &missing).unwrap_err();
    assert!(e.to_string().contains("absent.bpk"), "{e}");
}
