//! `lora_ensemble`: LoRA-Ensemble: the seed's base model frozen, N members that
//! differ only by low-rank adapters on Q/K/V/O and their classifiers, trained together and run in
//! one vectorised pass. The recipe is `[train]` with the method's `train = { ... }` overrides
//! (the reference: AdamW lr 1e-4, no weight decay, clip 1.0).

use burn::module::Module;
use lora_ensemble::{HeadInit, LoraConfig};
use serde::{Deserialize, Serialize};

use super::{Built, Context, Method, Setting};
use crate::error::Result;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoraEnsemble {
    pub members: usize,
    #[serde(default = "default_rank")]
    pub rank: usize,
    #[serde(default = "one")]
    pub scale: f64,
    /// Xavier-uniform gain of the A matrices (the official code uses 10).
    #[serde(default = "default_gain")]
    pub init_gain: f64,
    /// `random` (a fresh classifier per member) or `copy` (each starts from the base's).
    #[serde(default = "default_head_init")]
    pub head_init: String,
}

fn default_rank() -> usize {
    8
}
fn one() -> f64 {
    1.0
}
fn default_gain() -> f64 {
    10.0
}
fn default_head_init() -> String {
    "random".into()
}

impl LoraEnsemble {
    fn config(&self) -> Result<LoraConfig> {
        let head_init: HeadInit = self.head_init.parse()?;
        let config = LoraConfig::new(self.members)
            .with_rank(self.rank)
            .with_scale(self.scale)
            .with_init_gain(self.init_gain)
            .with_head_init(head_init);
        config.check()?;
        Ok(config)
    }
}

impl Method for LoraEnsemble {
    fn members(&self) -> usize {
        self.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn supports_text(&self) -> bool {
        true
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        self.config().map(|_| ())
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        // The frozen backbone lives on the training device; only adapters and heads get gradients.
        let backbone = ctx.base[0].clone().train();
        let model = self
            .config()?
            .with_text_tokens(ctx.text_tokens.max(1))
            .init(backbone, ctx.seed_for("adapters"))?;
        let trained = ctx.fit(
            model,
            ctx.train,
            &ctx.train_config()?,
            "adapters",
            ctx.seed_for("fit"),
            None,
        )?;
        Ok(Built::new(trained.valid()))
    }
}
