//! Integration tests of the hydra crate (one binary; one module per topic). Tiny f32 models
//! whose weights come from a seeded `StdRng`, so every test is deterministic even when tests
//! run in parallel (the device RNG is process-wide).

mod bert;
mod circuit;
mod clip;
mod fused;
mod plan;
mod prune;
mod registry;
mod select;
mod taylor;

use backbone::{BertConfig, Classifier, Gates, Input, Mode, Pooling, ViTConfig};
use burn::module::{Module, ModuleMapper, Param};
use burn::tensor::{Device, Int, Tensor, TensorData};
use pruning::{Calibration, Criterion, PruningError, ScoreContext, Scores, UnitKind};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

pub const LAYERS: usize = 2;
pub const HEADS: usize = 4;

pub fn device() -> Device {
    Device::flex()
}

/// 8x8 images, 4x4 patches (5 tokens), width 8, 2 blocks of 4 heads (d_h = 2), 3 classes.
pub fn config() -> ViTConfig {
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_layers(LAYERS)
        .with_n_heads(HEADS)
        .with_d_mlp(16)
        .with_num_classes(3)
}

/// Replaces every float parameter by values uniform in [-0.5, 0.5) from a seeded generator.
struct Fill(StdRng);

impl ModuleMapper for Fill {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        param.map(|t| {
            let shape = t.shape();
            let values: Vec<f32> = (0..shape.num_elements())
                .map(|_| self.0.random_range(-0.5..0.5))
                .collect();
            Tensor::from_data(TensorData::new(values, shape), &t.device())
        })
    }
}

/// The tiny model with weights drawn from `seed`.
pub fn tiny(seed: u64) -> Classifier {
    let model = config().init(&device()).expect("valid config");
    Classifier::from(model).map(&mut Fill(StdRng::seed_from_u64(seed)))
}

/// Vocabulary 50, width 8, 2 post-norm blocks of 4 heads (d_h = 2), positions up to 16.
pub fn bert_config() -> BertConfig {
    BertConfig::new()
        .with_vocab_size(50)
        .with_d_model(8)
        .with_n_layers(LAYERS)
        .with_n_heads(HEADS)
        .with_d_mlp(16)
        .with_max_position(16)
}

/// The tiny BERT classifier (3 classes) with weights drawn from `seed`.
pub fn tiny_bert(seed: u64) -> Classifier {
    let model = bert_config()
        .init_classifier(3, &device())
        .expect("valid config");
    Classifier::from(model).map(&mut Fill(StdRng::seed_from_u64(seed)))
}

/// As [`tiny_bert`], read out by BERT's `[CLS]` pooler (dense + tanh over the first token).
pub fn tiny_bert_cls(seed: u64) -> Classifier {
    let model = bert_config()
        .init_pooled_classifier(3, Pooling::Cls, &device())
        .expect("valid config");
    Classifier::from(model).map(&mut Fill(StdRng::seed_from_u64(seed)))
}

/// `batch` sequences of 6 token slots from `seed`: sequence i has `6 - i % 4` real tokens
/// (ids 1..50), then padding (id 0, mask 0).
pub fn tokens(batch: usize, seed: u64) -> Input {
    const SLOTS: usize = 6;
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut ids, mut mask) = (vec![], vec![]);
    for i in 0..batch {
        let len = SLOTS - i % 4;
        for t in 0..SLOTS {
            ids.push(if t < len {
                rng.random_range(1..50i64)
            } else {
                0
            });
            mask.push(i64::from(t < len));
        }
    }
    let ints = |v: Vec<i64>| Tensor::from_data(TensorData::new(v, [batch, SLOTS]), &device());
    Input::Tokens {
        ids: ints(ids),
        mask: ints(mask),
    }
}

/// A tensor of values uniform in [-1, 1) from `seed`.
pub fn uniform<const D: usize>(shape: [usize; D], seed: u64) -> Tensor<D> {
    let mut rng = StdRng::seed_from_u64(seed);
    let n = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    Tensor::from_data(TensorData::new(values, shape), &device())
}

pub fn images(batch: usize, seed: u64) -> Input {
    Input::Images(uniform([batch, 1, 8, 8], seed))
}

pub fn labels(values: &[i64]) -> Tensor<1, Int> {
    Tensor::from_data(TensorData::new(values.to_vec(), [values.len()]), &device())
}

/// `batches` batches of `size` images with labels cycling through the classes, and as many
/// OOD images (another seed, a shifted distribution).
pub fn calibration(batches: usize, size: usize) -> Calibration {
    let shifted = |b: usize| {
        Input::Images(
            uniform([size, 1, 8, 8], 200 + b as u64)
                .mul_scalar(3.0)
                .add_scalar(1.0),
        )
    };
    Calibration {
        batches: (0..batches)
            .map(|b| (images(size, 100 + b as u64), cycling(b, size)))
            .collect(),
        ood: (0..batches).map(shifted).collect(),
    }
}

/// As [`calibration`], with padded token batches; the OOD batches are other token draws.
pub fn text_calibration(batches: usize, size: usize) -> Calibration {
    Calibration {
        batches: (0..batches)
            .map(|b| (tokens(size, 100 + b as u64), cycling(b, size)))
            .collect(),
        ood: (0..batches).map(|b| tokens(size, 200 + b as u64)).collect(),
    }
}

/// Labels of batch `b` of `size`, cycling through the 3 classes.
fn cycling(b: usize, size: usize) -> Tensor<1, Int> {
    let y: Vec<i64> = (0..size).map(|i| ((b * size + i) % 3) as i64).collect();
    labels(&y)
}

pub fn logits(model: &Classifier, x: &Input) -> Tensor<2> {
    model.forward(x.clone(), &Gates::none(), Mode::Deterministic)
}

pub fn values<const D: usize>(t: &Tensor<D>) -> Vec<f32> {
    t.to_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .expect("f32 tensor")
}

/// Same shape, and every element within `tol · (1 + |expected|)`.
pub fn assert_close<const D: usize>(actual: &Tensor<D>, expected: &Tensor<D>, tol: f32) {
    assert_eq!(actual.dims(), expected.dims(), "shapes differ");
    for (i, (a, e)) in values(actual).iter().zip(values(expected)).enumerate() {
        assert!(
            (a - e).abs() <= tol * (1.0 + e.abs()),
            "element {i}: {a} vs {e} (tol {tol})"
        );
    }
}

/// Overwrites a Linear weight with `f(weight)`.
pub fn edit(param: &mut Param<Tensor<2>>, f: impl FnOnce(Tensor<2>) -> Tensor<2>) {
    *param = Param::from_tensor(f(param.val()));
}

/// A criterion of the pruning seam, scoring heads through `pruning::score` as Hydra does.
pub struct Head(Box<dyn Criterion>);

/// The criterion `name` with its parameters, as Hydra's `importance` builds it.
pub fn strategy(name: &str, params: &toml::Table) -> Result<Head, PruningError> {
    pruning::criterion_for(name, params, UnitKind::Head).map(Head)
}

impl Head {
    pub fn scores(
        &self,
        model: &Classifier,
        data: &Calibration,
        ctx: &ScoreContext,
    ) -> Result<Scores, PruningError> {
        pruning::score(self.0.as_ref(), model, UnitKind::Head, data, ctx)
    }

    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    pub fn criterion(&self) -> &dyn Criterion {
        self.0.as_ref()
    }
}

/// `kept`'s heads of `model`, physically, as Hydra prunes its members.
pub fn prune(model: &Classifier, kept: &hydra::HeadSet) -> Result<Classifier, PruningError> {
    pruning::prune_heads(model, &kept.0)
}
