use burn::module::Module;
use burn::tensor::Tensor;

use kernels::dropout_mask;

/// Whether stochastic layers (dropout) are active in a forward pass.
///
/// An explicit argument rather than module state, because burn-nn's `Dropout` (0.22) is a no-op
/// on any device without autodiff, which would make MC Dropout (dropout at inference, on a plain
/// device) impossible. `Stochastic` works on every device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Dropout off: the forward pass is a deterministic function of its inputs (evaluation).
    Deterministic,
    /// Dropout on (training, or MC Dropout sampling at inference).
    Stochastic,
}

/// Inverted dropout driven by [`Mode`]: in `Stochastic` mode each element is zeroed with
/// probability `prob` and survivors are scaled by `1 / (1 - prob)`.
///
/// The masks come from the device's random generator, so a run is reproducible after
/// `device.seed(seed)`; on flex that generator is process-wide (one per process, shared by
/// all threads), so reproducibility needs a single thread drawing from it.
#[derive(Module, Debug)]
pub struct Dropout {
    /// Probability of zeroing an element, in [0, 1) (checked by the configs that build it).
    pub prob: f64,
}

impl Dropout {
    /// Applies dropout when `mode` is `Stochastic` and `prob > 0`; identity otherwise.
    pub fn forward<const D: usize>(&self, x: Tensor<D>, mode: Mode) -> Tensor<D> {
        if mode == Mode::Deterministic || self.prob == 0.0 {
            return x;
        }
        let mask = dropout_mask(&x, 1.0 - self.prob);
        x * mask
    }
}
