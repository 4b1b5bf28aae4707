//! The efficient-ensemble baselines Hydra is compared with, each trained from scratch with
//! `[train]` (plus the method's `train = { ... }` overrides): `batch_ensemble` (shared weights
//! with per-member rank-1 fast weights, Wen et al. 2020), `mimo` (M inputs and M outputs
//! through one network, Havasi et al. 2021) and `packed_ensemble` (M narrow members packed in
//! one wide grouped network, Laurent et al. 2023). Each kind's keys are its `ensembles` config's
//! (`members` required).

use std::fmt::Debug;

use backbone::ViTConfig;
use burn::tensor::Device;
use ensembles::{BatchEnsembleConfig, MimoConfig, PackedConfig};
use seam::{EnsembleModel, Trainable};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::context::{Built, Context, Setting};
use super::method::{Method, Needs, at_least_two};
use super::params::LibraryParams;
use crate::error::{ExperimentError, Result};
use crate::workload::{ModelShape, Sizing, Work};

/// The library config of an ensemble trained from scratch on the base model's shape.
pub trait ScratchConfig:
    Serialize + DeserializeOwned + Debug + Clone + Send + Sync + 'static
{
    type Model: Trainable + EnsembleModel + 'static;
    /// The library's defaults.
    fn defaults() -> Self;
    fn members(&self) -> usize;
    /// Checks the parameters beyond the member count.
    fn check(&self) -> Result<()> {
        Ok(())
    }
    /// What its model runs per sample for the ViT `vit` (FLOPs as the library counts them),
    /// and the activation bytes per sample of a training step.
    fn work(&self, vit: &ViTConfig) -> (Work, u64);
    /// A freshly initialised model for the ViT `vit`.
    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model>;
}

/// A kind trained from scratch: the config `C` read from the method table.
#[derive(Debug, Clone)]
pub struct FromScratch<C>(pub C);

impl<C: ScratchConfig> LibraryParams for FromScratch<C> {
    type Config = C;

    fn defaults() -> C {
        C::defaults()
    }

    fn new(config: C) -> Self {
        Self(config)
    }
}

impl<C: ScratchConfig> Method for FromScratch<C> {
    fn members(&self) -> usize {
        self.0.members()
    }

    fn needs(&self) -> Needs {
        Needs::Vit
    }

    fn trains(&self) -> bool {
        true
    }

    fn base_models_trained_from(&self, _setting: &Setting) -> usize {
        0
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        at_least_two(self.0.members())?;
        self.0.check()
    }

    /// One training of its model from scratch with the method's recipe, every weight trained.
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        let ModelShape::Vit(vit) = sizing.base else {
            // `check` refuses these kinds on a text backbone.
            return Work::passes(sizing.base, 1, 1);
        };
        let (mut work, activation) = self.0.work(vit);
        let (flops, params) = (work.eval_flops, work.eval_params);
        let training = sizing.training("from scratch", flops, (params, params), activation);
        work.trainings.push(training);
        work
    }

    /// Trains a freshly initialised model with the method's recipe (cached like every model).
    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let model = self
            .0
            .model(ctx.vit()?, ctx.seed_for("init"), &ctx.autodiff())?;
        ctx.fit_method(model, "model")
    }
}

impl ScratchConfig for BatchEnsembleConfig {
    type Model = ensembles::BatchEnsemble;

    fn defaults() -> Self {
        Self::new()
    }

    fn members(&self) -> usize {
        self.members
    }

    /// Every sample through the shared weights once per member; every linear map (the patch
    /// embedding, Q, K, V, O, the MLP's two, the head) adds per member its rank-1 fast weights
    /// and a bias of its own.
    fn work(&self, vit: &ViTConfig) -> (Work, u64) {
        let (base, m) = (ModelShape::Vit(vit.clone()), self.members as u64);
        let (d, f) = (vit.d_model as u64, vit.d_mlp as u64);
        let patch = (vit.channels * vit.patch_size * vit.patch_size) as u64;
        let block = [(d, d), (d, d), (d, d), (d, d), (d, f), (f, d)];
        let ends = [(patch, d), (d, vit.num_classes as u64)];
        let linears = (block.iter().cycle().take(6 * vit.n_layers)).chain(&ends);
        let own: u64 = linears.map(|&(i, o)| m * (i + o) + (m - 1) * o).sum();
        let mut work = Work::passes(&base, m, 1);
        work.eval_params += own;
        work.eval_activation_bytes *= m;
        (work, m * base.train_activation_bytes())
    }

    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model> {
        Ok(self.init(vit, seed, device)?)
    }
}

impl ScratchConfig for MimoConfig {
    type Model = ensembles::Mimo;

    fn defaults() -> Self {
        Self::new()
    }

    fn members(&self) -> usize {
        self.members
    }

    fn check(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.input_repetition) {
            return Err(ExperimentError::invalid(format!(
                "input_repetition = {} must be in [0, 1]",
                self.input_repetition
            )));
        }
        Ok(())
    }

    /// One pass of the network with M·C input channels and M·classes outputs.
    fn work(&self, vit: &ViTConfig) -> (Work, u64) {
        let network = ModelShape::Vit(self.network(vit));
        (
            Work::passes(&network, 1, 1),
            network.train_activation_bytes(),
        )
    }

    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model> {
        Ok(self.init(vit, seed, device)?)
    }
}

impl ScratchConfig for PackedConfig {
    type Model = ensembles::PackedEnsemble;

    fn defaults() -> Self {
        Self::new()
    }

    fn members(&self) -> usize {
        self.members
    }

    fn check(&self) -> Result<()> {
        if !(self.alpha > 0.0 && self.alpha.is_finite()) || self.gamma == 0 {
            return Err(ExperimentError::invalid(format!(
                "alpha = {} must be > 0 and gamma = {} at least 1",
                self.alpha, self.gamma
            )));
        }
        Ok(())
    }

    /// One pass of the packed network, its FLOPs the library's block-diagonal count; its
    /// parameters those of M·γ groups over the members' joint width (Q, K, V, O and the MLP
    /// grouped, the patch embedding dense, each member's classifier on its own width);
    /// activations those of a ViT as wide as all members together.
    fn work(&self, vit: &ViTConfig) -> (Work, u64) {
        let (w, f) = (
            self.members * self.member_width(vit),
            self.members * self.member_mlp_width(vit),
        );
        let wide = ModelShape::Vit(vit.clone().with_d_model(w).with_d_mlp(f));
        let (w, f, g) = (w as u64, f as u64, (self.members * self.gamma) as u64);
        let (c, t) = (vit.num_classes as u64, vit.num_tokens() as u64);
        let patch = (vit.channels * vit.patch_size * vit.patch_size) as u64;
        let block = (4 * w * w + 2 * w * f) / g + 4 * w + f + w + 4 * w;
        let embedding = patch * w + w + w + t * w;
        let head = 2 * w + w * c + self.members as u64 * c;
        let work = Work {
            trainings: Vec::new(),
            eval_flops: self.flops(vit),
            eval_params: embedding + vit.n_layers as u64 * block + head,
            eval_activation_bytes: wide.eval_activation_bytes(),
        };
        (work, wide.train_activation_bytes())
    }

    fn model(&self, vit: &ViTConfig, seed: u64, device: &Device) -> Result<Self::Model> {
        Ok(self.init(vit, seed, device)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The estimate of each kind against the model the library builds: its FLOPs and its
    /// parameters, exactly.
    #[test]
    fn estimates_match_the_models_built() {
        let vit = ViTConfig::new()
            .with_d_model(16)
            .with_d_mlp(32)
            .with_n_layers(2)
            .with_n_heads(2);
        let device = Device::flex();
        fn check<C: ScratchConfig>(config: C, vit: &ViTConfig, device: &Device) {
            let model = config.model(vit, 0, device).unwrap();
            let (work, _) = config.work(vit);
            assert_eq!(work.eval_flops, model.flops_per_sample(), "{config:?}");
            assert_eq!(work.eval_params, model.num_params() as u64, "{config:?}");
        }
        let mut batch = BatchEnsembleConfig::new();
        batch.members = 3;
        check(batch, &vit, &device);
        let mut mimo = MimoConfig::new();
        mimo.members = 3;
        check(mimo, &vit, &device);
        for gamma in [1, 2] {
            let mut packed = PackedConfig::new();
            (packed.members, packed.gamma) = (3, gamma);
            check(packed, &vit, &device);
        }
    }
}
