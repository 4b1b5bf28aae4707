//! The training seam: a model `train::fit` can train, and the backbones that are trainable as
//! they are.

use backbone::{Classifier, Gates, Input, Mode, VisionTransformer};
use burn::module::Module;
use burn::tensor::Tensor;

/// A model the training loop can train: member logits `[M, B, C]` with dropout on. Every
/// member is trained on the batch's labels (a single model has M = 1).
pub trait Trainable: Module + Clone {
    fn train_logits(&self, input: Input) -> Tensor<3>;

    /// Member logits `[M, B, C]` in evaluation mode, for the validation pass between epochs:
    /// no dropout, and nothing drawn from any random stream (the training's draws must not
    /// depend on whether it is validated).
    fn eval_logits(&self, input: Input) -> Tensor<3>;
}

impl Trainable for VisionTransformer {
    fn train_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input.images(), &Gates::none(), Mode::Stochastic)
            .unsqueeze_dim(0)
    }

    fn eval_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input.images(), &Gates::none(), Mode::Deterministic)
            .unsqueeze_dim(0)
    }
}

impl Trainable for Classifier {
    fn train_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input, &Gates::none(), Mode::Stochastic)
            .unsqueeze_dim(0)
    }

    fn eval_logits(&self, input: Input) -> Tensor<3> {
        self.forward(input, &Gates::none(), Mode::Deterministic)
            .unsqueeze_dim(0)
    }
}
