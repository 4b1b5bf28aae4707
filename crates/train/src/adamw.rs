//! AdamW with one fused pass per parameter.
//!
//! Burn's AdamW steps each parameter through about fifteen tensor ops (two moment averages,
//! two bias corrections, a square root, a division, the decay and the update), each a pass over
//! the parameter's size on one thread: on `minilm_l6`'s 22.7 M parameters a twelfth of a
//! training step's time (docs/performance.md). [`FusedAdamW`] computes the same f32 operations
//! in the same order in one pass ([`kernels::adamw_step`]), and keeps Burn's `AdamWState`, so a
//! checkpoint's optimizer state reads the same either way.

use burn::optim::{AdamWState, AdaptiveMomentumState, LearningRate, Optimizer};
use burn::tensor::{Device, Tensor};

use kernels::AdamWStep;

/// AdamW as Burn's `AdamWConfig` builds it without AMSGrad or cautious decay (its β₁ 0.9, β₂
/// 0.999 and ε 1e-5 by default), with the given decoupled weight decay.
#[derive(Clone, Debug)]
pub struct FusedAdamW {
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    weight_decay: f32,
}

impl FusedAdamW {
    /// Burn's defaults for β₁, β₂ and ε, and `weight_decay`.
    pub fn new(weight_decay: f32) -> Self {
        Self {
            beta_1: 0.9,
            beta_2: 0.999,
            epsilon: 1e-5,
            weight_decay,
        }
    }
}

impl Optimizer for FusedAdamW {
    type State<const D: usize> = AdamWState<D>;

    fn step<const D: usize>(
        &self,
        lr: LearningRate,
        tensor: Tensor<D>,
        grad: Tensor<D>,
        state: Option<Self::State<D>>,
    ) -> (Tensor<D>, Option<Self::State<D>>) {
        let (time, moments) = match state {
            Some(AdamWState { momentum: m }) => (m.time + 1, [m.moment_1, m.moment_2]),
            None => (1, [grad.zeros_like(), grad.zeros_like()]),
        };
        let t = time as i32;
        let step = AdamWStep {
            beta_1: self.beta_1,
            beta_2: self.beta_2,
            epsilon: self.epsilon,
            correction_1: 1.0 - self.beta_1.powi(t),
            correction_2: 1.0 - self.beta_2.powi(t),
            keep: (1.0 - lr * self.weight_decay as f64) as f32,
            lr: lr as f32,
        };
        let [tensor, moment_1, moment_2] = kernels::adamw_step(tensor, grad, moments, step);
        let momentum = AdaptiveMomentumState::new(time, moment_1, moment_2);
        (tensor, Some(AdamWState::new(momentum)))
    }

    fn to_device<const D: usize>(mut state: Self::State<D>, device: &Device) -> Self::State<D> {
        state.momentum = state.momentum.to_device(device);
        state
    }
}

#[cfg(test)]
mod tests {
    use burn::nn::{Linear, LinearConfig};
    use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
    use burn::tensor::{Device, Tensor, TensorData};

    use super::FusedAdamW;

    /// Eight steps of a Linear under a changing loss and learning rate: the fused step gives
    /// Burn's AdamW's parameters bit for bit, with and without weight decay.
    #[test]
    fn matches_burns_adamw_bit_for_bit() {
        let device = Device::flex().autodiff();
        for decay in [0.0, 0.05] {
            let start = LinearConfig::new(40, 24).init(&device);
            let burn = AdamWConfig::new().with_weight_decay(decay).init();
            let ours = ModuleOptimizer::from(FusedAdamW::new(decay));
            let (a, b) = (
                train(start.clone(), burn, &device),
                train(start, ours, &device),
            );
            let (a, b) = (a.weight.val().into_data(), b.weight.val().into_data());
            a.assert_eq(&b, true);
        }
    }

    /// A checkpoint's optimizer state written by Burn's AdamW resumes in the fused one (and the
    /// other way round) with the same parameters as an uninterrupted run.
    #[test]
    fn either_resumes_the_others_saved_state() {
        let device = Device::flex().autodiff();
        let start = LinearConfig::new(40, 24).init(&device);
        let burns = || AdamWConfig::new().with_weight_decay(0.05).init();
        let ours = || ModuleOptimizer::from(FusedAdamW::new(0.05));
        let whole = train(start.clone(), burns(), &device);
        for (mut before, then) in [(burns(), ours()), (ours(), burns())] {
            let half = train_steps(start.clone(), &mut before, 0..4, &device);
            let bytes = before.into_bytes().unwrap();
            let mut after = then.from_bytes(bytes).unwrap();
            let resumed = train_steps(half, &mut after, 4..8, &device);
            let weight = |l: &Linear| l.weight.val().into_data();
            weight(&resumed).assert_eq(&weight(&whole), true);
        }
    }

    fn train(layer: Linear, mut optim: ModuleOptimizer, device: &Device) -> Linear {
        train_steps(layer, &mut optim, 0..8, device)
    }

    fn train_steps(
        mut layer: Linear,
        optim: &mut ModuleOptimizer,
        steps: std::ops::Range<usize>,
        device: &Device,
    ) -> Linear {
        for step in steps {
            // Inputs spread over signs and sizes, a different batch each step.
            let x: Vec<f32> = (0..5 * 40)
                .map(|i| ((i * 37 + step * 101) % 97) as f32 / 24.0 - 2.0)
                .collect();
            let x = Tensor::<2>::from_data(TensorData::new(x, [5, 40]), device);
            let y = layer.forward(x);
            let loss = (y.clone() * y).mean();
            let grads = GradientsParams::from_grads(loss.backward(), &layer);
            let lr = 1e-2 / (1.0 + step as f64);
            layer = optim.step(lr, layer, grads);
        }
        layer
    }
}
