//! Learnable importance: one real score θ per candidate gate of a kind, binarised in the
//! forward pass (`b = [θ > 0]`) with a straight-through gradient, trained against the task loss
//! plus a sparsity pressure `λ·Σ b`; each round removes the lowest-scoring candidate of one
//! kind, kinds alternating, so an attention score is never compared with an activation score.
//!
//! A round trains only its own kind's scores (the other kind's gates stay as they are: on, or
//! off where removed), with plain SGD so a score moves in proportion to its gradient. The
//! pressure pulls every score down at the same rate `lr·λ`, so on its own it ranks nothing; it
//! makes candidates cross zero, and a candidate that is off feels the task loss's gradient at
//! gate 0, which pushes a useful layer back on in proportion to how much it is missed. A layer
//! that is not missed keeps sinking. Scores restart every round from `importance_init` with a
//! seeded jitter (down to half of it), so candidates go off one at a time rather than all at
//! once. The model's weights stay frozen (only the scores learn): the scores rank the layers of
//! the given model, each round is cheap, and the short fine-tunes of the MAP points are where
//! the weights adapt to a removal.

use backbone::{Gates, Mode, VisionTransformer};
use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};
use data::mix;
use data::{BatchPlan, SubsetSize, stratified_subset};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use train::{ImageData, cross_entropy};

use crate::config::HetDptConfig;
use crate::error::HetDptError;
use crate::order::{Kind, RemovalOrder, Round};

/// One kind's candidates: scores, and which blocks have lost that layer.
struct Candidates {
    theta: Vec<f64>,
    removed: Vec<bool>,
}

impl Candidates {
    fn new(layers: usize) -> Self {
        Self {
            theta: vec![0.0; layers],
            removed: vec![false; layers],
        }
    }

    /// Fresh scores in `(init / 2, init]`.
    fn reset(&mut self, init: f64, rng: &mut StdRng) {
        for t in &mut self.theta {
            *t = init * (1.0 - 0.5 * rng.random::<f64>());
        }
    }

    /// The scores as a leaf that records gradients.
    fn leaf(&self, device: &Device) -> Tensor<1> {
        let values: Vec<f32> = self.theta.iter().map(|&t| t as f32).collect();
        Tensor::<1>::from_data(TensorData::new(values, [self.theta.len()]), device).require_grad()
    }

    /// 1 where the layer is kept, 0 where removed.
    fn kept(&self, device: &Device) -> Tensor<1> {
        let keep: Vec<f32> = self
            .removed
            .iter()
            .map(|&r| if r { 0.0 } else { 1.0 })
            .collect();
        Tensor::<1>::from_data(TensorData::new(keep, [self.removed.len()]), device)
    }

    /// Gate values: `b + θ - detach(θ)` with `b = [θ > 0]` (straight-through), 0 where removed.
    fn gates(&self, theta: &Tensor<1>, device: &Device) -> Tensor<1> {
        pruning::straight_through(theta) * self.kept(device)
    }

    fn step(&mut self, grad: Vec<f32>, lr: f64) {
        for ((t, g), removed) in self.theta.iter_mut().zip(grad).zip(&self.removed) {
            if !removed {
                *t -= lr * f64::from(g);
            }
        }
    }

    fn scores(&self) -> Vec<Option<f64>> {
        self.theta
            .iter()
            .zip(&self.removed)
            .map(|(&t, &r)| (!r).then_some(t))
            .collect()
    }

    /// Removes the live candidate with the lowest score (the first such block on ties).
    fn remove_lowest(&mut self) -> usize {
        let l = (0..self.theta.len())
            .filter(|&l| !self.removed[l])
            .min_by(|&a, &b| self.theta[a].total_cmp(&self.theta[b]))
            .expect("a round only runs while its kind has candidates left");
        self.removed[l] = true;
        l
    }
}

/// Runs removal rounds on `base` (plain device; trained on `device`'s autodiff twin) until
/// `max_attn` attention branches and `max_act` GELUs are removed, alternating kinds (attention
/// first) while both have rounds left.
pub(crate) fn removal_order(
    base: &VisionTransformer,
    data: ImageData<'_>,
    max_attn: usize,
    max_act: usize,
    cfg: &HetDptConfig,
    device: &Device,
    seed: u64,
) -> Result<RemovalOrder, HetDptError> {
    let layers = base.encoder.layer.len();
    let autodiff = device.clone().autodiff();
    let model = base.clone().fork(&autodiff).no_grad();
    let n = cfg.importance_images.min(data.set.len());
    let subset = stratified_subset(&data.set.labels, SubsetSize::Total(n), seed)
        .map_err(|e| HetDptError::data("importance subset", e))?;
    let plan = BatchPlan::new(subset.len(), cfg.batch_size, Some(seed), false)
        .map_err(|e| HetDptError::data("importance batches", e))?;
    let mut batches = (0..).flat_map(|epoch| plan.epoch(epoch));

    let mut attn = Candidates::new(layers);
    let mut act = Candidates::new(layers);
    let mut order = RemovalOrder {
        attn: Vec::new(),
        act: Vec::new(),
        rounds: Vec::new(),
        steps: 0,
        samples: 0,
        ranked: None,
    };
    while order.attn.len() < max_attn || order.act.len() < max_act {
        let kind = if order.attn.len() < max_attn
            && (order.act.len() >= max_act || order.attn.len() <= order.act.len())
        {
            Kind::Attention
        } else {
            Kind::Activation
        };
        let (active, other) = match kind {
            Kind::Attention => (&mut attn, &act),
            Kind::Activation => (&mut act, &attn),
        };
        let mut rng = StdRng::seed_from_u64(mix(seed, order.rounds.len() as u64));
        active.reset(cfg.importance_init, &mut rng);
        let initial = active.scores();
        let fixed = other.kept(&autodiff);
        let scorer = Scorer {
            model: &model,
            data,
            cfg,
            device: &autodiff,
        };
        for _ in 0..cfg.importance_steps {
            let positions = batches.next().expect("the batch stream is endless");
            let indices: Vec<usize> = positions.iter().map(|&i| subset[i]).collect();
            scorer.step(&indices, kind, active, &fixed, order.rounds.len() + 1)?;
            order.steps += 1;
            order.samples += indices.len() as u64;
        }
        let scores = active.scores();
        let removed = active.remove_lowest();
        match kind {
            Kind::Attention => order.attn.push(removed),
            Kind::Activation => order.act.push(removed),
        }
        order.rounds.push(Round {
            kind,
            removed,
            initial,
            scores,
        });
    }
    Ok(order)
}

/// What one gradient step of the gate scores reads.
struct Scorer<'a> {
    /// The base model on the autodiff device, its parameters frozen.
    model: &'a VisionTransformer,
    data: ImageData<'a>,
    cfg: &'a HetDptConfig,
    device: &'a Device,
}

impl Scorer<'_> {
    /// One step on the batch `indices` of the `kind` scores in `active`, the other kind's gates
    /// `fixed`: cross-entropy plus the sparsity pressure on the learned gates.
    fn step(
        &self,
        indices: &[usize],
        kind: Kind,
        active: &mut Candidates,
        fixed: &Tensor<1>,
        round: usize,
    ) -> Result<(), HetDptError> {
        let images = self.data.batch(indices, None, self.device)?;
        let labels = self.data.labels(indices, self.device);
        let theta = active.leaf(self.device);
        let learned = active.gates(&theta, self.device);
        let pressure = learned.clone().sum().mul_scalar(self.cfg.sparsity);
        let (attn_gate, act_gate) = match kind {
            Kind::Attention => (learned, fixed.clone()),
            Kind::Activation => (fixed.clone(), learned),
        };
        let gates = Gates {
            attn: Some(attn_gate),
            act: Some(act_gate),
            ..Gates::none()
        };
        let logits = self.model.forward(images, &gates, Mode::Deterministic);
        let loss = cross_entropy(logits.unsqueeze_dim(0), labels, 0.0) + pressure;
        let value: f32 = loss.clone().into_scalar();
        if !value.is_finite() {
            return Err(HetDptError::Invalid(format!(
                "the gate-score loss became {value} in removal round {round}"
            )));
        }
        let grad = theta
            .grad(&loss.backward())
            .expect("the scores are a leaf that requires gradients");
        active.step(host(grad)?, self.cfg.importance_lr);
        Ok(())
    }
}

fn host(t: Tensor<1>) -> Result<Vec<f32>, HetDptError> {
    t.into_data()
        .try_to_vec::<f32>()
        .map_err(|source| HetDptError::Tensor {
            what: "gate gradients",
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{quadrants, serial, tiny_vit};
    use backbone::Input;
    use burn::module::Param;
    use data::Normalization;
    use seam::Trainable;
    use train::{FitOptions, TrainConfig, fit};

    /// The tiny ViT trained with block `off`'s attention branch gated off throughout.
    #[derive(Module, Debug)]
    struct WithoutAttention {
        vit: VisionTransformer,
        off: usize,
    }

    impl WithoutAttention {
        fn logits(&self, input: Input, mode: Mode) -> Tensor<3> {
            let images = input.images();
            let layers = self.vit.encoder.layer.len();
            let g: Vec<f32> = (0..layers)
                .map(|l| if l == self.off { 0.0 } else { 1.0 })
                .collect();
            let gates = Gates {
                attn: Some(Tensor::from_data(
                    TensorData::new(g, [layers]),
                    &images.device(),
                )),
                ..Gates::none()
            };
            self.vit.forward(images, &gates, mode).unsqueeze_dim(0)
        }
    }

    impl Trainable for WithoutAttention {
        fn train_logits(&self, input: Input) -> Tensor<3> {
            self.logits(input, Mode::Stochastic)
        }

        fn eval_logits(&self, input: Input) -> Tensor<3> {
            self.logits(input, Mode::Deterministic)
        }
    }

    #[test]
    fn a_planted_useless_attention_branch_goes_before_the_useful_ones() {
        let _rng = serial();
        let device = Device::flex();
        let autodiff = device.clone().autodiff();
        let (_, vit) = tiny_vit(&autodiff, 21);
        let set = quadrants(240, 4);
        let norm = Normalization::fit(&set).unwrap();
        let data = ImageData {
            set: &set,
            norm: &norm,
        };
        let off = 1;
        let recipe = TrainConfig {
            epochs: 8,
            batch_size: 32,
            lr: 3e-3,
            warmup_epochs: 0.0,
            ..TrainConfig::default()
        };
        let opts = FitOptions {
            device: autodiff.clone(),
            seed: 2,
            label: "planted".into(),
            checkpoint: None,
            quiet: true,
            stop_after: None,
            distill: None,
            validation: None,
        };
        let trained = fit(WithoutAttention { vit, off }, data, &recipe, &opts).unwrap();
        let mut vit = trained.valid().vit;
        // Plant: block `off`'s attention now outputs exactly zero, so removing it costs nothing.
        let output = &mut vit.encoder.layer[off].attention.output;
        output.weight = Param::from_tensor(output.weight.val().zeros_like());
        output.bias = output
            .bias
            .take()
            .map(|b| Param::from_tensor(b.val().zeros_like()));

        let cfg = HetDptConfig::default();
        let order = removal_order(&vit, data, 2, 1, &cfg, &device, 3).unwrap();
        // Rounds alternate kinds, attention first, and never remove a block twice.
        let kinds: Vec<Kind> = order.rounds.iter().map(|r| r.kind).collect();
        assert_eq!(kinds, [Kind::Attention, Kind::Activation, Kind::Attention]);
        assert_ne!(order.attn[0], order.attn[1]);
        assert_eq!(order.act.len(), 1);
        // The planted gate feels only the sparsity pressure: θ = θ0 - steps·lr·λ exactly.
        let pressure = cfg.importance_steps as f64 * cfg.importance_lr * cfg.sparsity;
        let sank = |round: &Round, b: usize| round.initial[b].unwrap() - round.scores[b].unwrap();
        let first = &order.rounds[0];
        // (f32 gradients: λ = 0.05 is not exact in f32.)
        let planted = sank(first, off);
        assert!((planted - pressure).abs() < 1e-6, "{planted} vs {pressure}");
        // The planted block is removed, and any removed before it sank further than the pressure
        // alone takes a gate: the task loss pushed it off, so removing it lowers the loss (a
        // trained block may do so; which one, if any, depends on the training's last bits). A
        // block the loss holds up never goes before the planted one.
        let rounds = order.rounds.iter().filter(|r| r.kind == Kind::Attention);
        let before: Vec<(&Round, usize)> = rounds
            .take_while(|r| r.removed != off)
            .map(|r| (r, r.removed))
            .collect();
        assert!(
            before.len() < order.attn.len(),
            "the planted block stays: {order:#?}"
        );
        for (round, b) in before {
            assert!(
                sank(round, b) > pressure + 1e-3,
                "block {b} went first: {order:#?}"
            );
        }
        // Removed candidates carry no score in later rounds of their kind.
        assert_eq!(order.rounds[2].scores[order.attn[0]], None);
        assert!(order.rounds[1].scores.iter().all(Option::is_some));
    }
}
