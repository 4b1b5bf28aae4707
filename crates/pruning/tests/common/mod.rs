//! The tiny model and data the pruning tests share.

use backbone::{Classifier, Gates, Input, Mode, ViTConfig};
use burn::module::{Module, ModuleMapper, Param};
use burn::tensor::{Device, Tensor, TensorData};
use pruning::Calibration;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

pub const LAYERS: usize = 3;

/// 8x8 images, 4x4 patches, width 8, 3 blocks of 4 heads, MLP width 16, 3 classes; weights
/// uniform in [-0.5, 0.5) from `seed`.
pub fn tiny(seed: u64) -> Classifier {
    let vit = (ViTConfig::new().with_image_size(8).with_patch_size(4))
        .with_d_model(8)
        .with_n_layers(LAYERS)
        .with_n_heads(4)
        .with_d_mlp(16)
        .with_num_classes(3);
    let model = Classifier::from(vit.init(&Device::flex()).unwrap());
    model.map(&mut Fill(StdRng::seed_from_u64(seed)))
}

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

/// Two batches of 6 random images labelled by `model`'s own predictions (so that its units
/// serve the task they are scored on: removing one can only move the model off its labels),
/// and one OOD batch.
pub fn data(model: &Classifier, seed: u64) -> Calibration {
    let device = Device::flex();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut images = |n: usize| {
        let values: Vec<f32> = (0..n * 64).map(|_| rng.random_range(-1.0..1.0)).collect();
        Input::Images(Tensor::from_data(
            TensorData::new(values, [n, 1, 8, 8]),
            &device,
        ))
    };
    let labelled = |input: Input| {
        let logits = model.forward(input.clone(), &Gates::none(), Mode::Deterministic);
        (input, logits.argmax(1).reshape([6]))
    };
    Calibration {
        batches: vec![labelled(images(6)), labelled(images(6))],
        ood: vec![images(6)],
    }
}
