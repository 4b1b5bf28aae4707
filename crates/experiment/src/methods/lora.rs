//! `lora_ensemble`: LoRA-Ensemble: the seed's base model frozen, N members that
//! differ only by low-rank adapters on Q/K/V/O and their classifiers, trained together and run in
//! one vectorised pass. The recipe is `[train]` with the method's `train = { ... }` overrides
//! (the reference: AdamW lr 1e-4, no weight decay, clip 1.0).

use burn::module::Module;
use lora_ensemble::LoraConfig;

use super::params::LibraryParams;
use super::{Built, Context, Method, Setting};
use crate::error::Result;

/// Every key of `lora_ensemble::LoraConfig` but `text_tokens` and `eval_rows` (set from the
/// experiment), with the library's defaults; `members` is required.
#[derive(Debug, Clone)]
pub struct LoraEnsemble(pub LoraConfig);

impl LibraryParams for LoraEnsemble {
    type Config = LoraConfig;
    const INTERNAL: &'static [&'static str] = &["text_tokens", "eval_rows"];

    fn defaults() -> LoraConfig {
        LoraConfig::new(0)
    }

    fn new(config: LoraConfig) -> Self {
        Self(config)
    }
}

impl Method for LoraEnsemble {
    fn members(&self) -> usize {
        self.0.members
    }

    fn trains(&self) -> bool {
        true
    }

    fn supports_text(&self) -> bool {
        true
    }

    fn check(&self, _setting: &Setting) -> Result<()> {
        Ok(self.0.check()?)
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        // The frozen backbone lives on the training device; only adapters and heads get gradients.
        let backbone = ctx.base[0].clone().train();
        let model = (self.0.clone())
            .with_text_tokens(ctx.text_tokens.max(1))
            .init(backbone, ctx.seed_for("adapters"))?;
        ctx.fit_method(model, "adapters")
    }
}
