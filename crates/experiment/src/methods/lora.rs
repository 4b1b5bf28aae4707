//! `lora_ensemble`: LoRA-Ensemble: a frozen backbone, N members that differ only by low-rank
//! adapters on Q/K/V/O and their classifiers, trained together and run in one vectorised pass.
//! What is frozen is `backbone`: the pretrained weights as loaded (`"pretrained"`, never trained
//! on the task: the default on a pretrained backbone) or the seed's task-trained base model
//! (`"base"`, this project's variant, and the only one on a backbone trained from scratch).
//! The recipe is `[train]` with the method's `train = { ... }` overrides (the reference: AdamW
//! lr 1e-4, no weight decay, clip 1.0).

use burn::module::Module;
use lora_ensemble::LoraConfig;
use report::outputs::{LoraOutputs, MethodOutputs};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use super::context::{Built, Context, Setting};
use super::method::{Method, Needs};
use crate::error::{ExperimentError, Result};
use crate::workload::{Sizing, Work};

/// Which weights the members' adapters are learnt on: the type the report records, so the
/// `backbone` key and the stored `frozen` are one set of names.
pub use report::outputs::Frozen;

/// Every key `lora_ensemble::LoraConfig` reads (`members` required, the rest with the library's
/// defaults), and `backbone`.
#[derive(Debug, Clone, Serialize)]
pub struct LoraEnsemble {
    #[serde(flatten)]
    pub config: LoraConfig,
    /// `None`: pretrained when the experiment's backbone is, else base (so an absent key stays
    /// absent in the resolved config).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backbone: Option<Frozen>,
}

/// The library's config from the table less `backbone`: serde's `flatten` would let unknown
/// keys through silently.
impl<'de> Deserialize<'de> for LoraEnsemble {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut table = toml::Table::deserialize(deserializer)?;
        let backbone = (table.remove("backbone"))
            .map(Frozen::deserialize)
            .transpose()
            .map_err(|e| D::Error::custom(format!("backbone: {}", e.message())))?;
        let config = LoraConfig::deserialize(toml::Value::Table(table)).map_err(|e| {
            // The library lists its own keys; `backbone` is this method's.
            let own = if e.message().starts_with("unknown field") {
                ", or `backbone`"
            } else {
                ""
            };
            D::Error::custom(format!("{}{own}", e.message()))
        })?;
        Ok(Self { config, backbone })
    }
}

impl LoraEnsemble {
    /// What is frozen in an experiment with `setting`.
    fn frozen(&self, setting: &Setting) -> Frozen {
        self.backbone.unwrap_or(if setting.pretrained {
            Frozen::Pretrained
        } else {
            Frozen::Base
        })
    }
}

impl Method for LoraEnsemble {
    fn members(&self) -> usize {
        self.config.members
    }

    fn base_models_trained_from(&self, setting: &Setting) -> usize {
        match self.frozen(setting) {
            Frozen::Pretrained => 0,
            Frozen::Base => 1,
        }
    }

    fn trains(&self) -> bool {
        true
    }

    fn needs(&self) -> Needs {
        Needs::AnyClassifier
    }

    fn builds_on_models(&self, setting: &Setting) -> std::result::Result<(), String> {
        match self.frozen(setting) {
            Frozen::Base => Ok(()),
            Frozen::Pretrained => Err(
                "it freezes the pretrained weights; set backbone = \"base\" \
                 to freeze the base method's model"
                    .into(),
            ),
        }
    }

    fn check(&self, setting: &Setting) -> Result<()> {
        if self.backbone == Some(Frozen::Pretrained) && !setting.pretrained {
            return Err(ExperimentError::invalid(
                "backbone = \"pretrained\": the experiment's backbone is trained from scratch \
                 (no `[backbone] pretrained`), so there are no pretrained weights to freeze; \
                 only \"base\" (the seed's trained model) exists here",
            ));
        }
        Ok(self.config.check()?)
    }

    /// One training of N members over the frozen backbone, each through its rank-r adapters on
    /// Q, K, V and O (gradients reach the adapters and heads only); evaluation runs the N
    /// members with their adapters merged into the weights, N forwards of the backbone.
    fn work(&self, sizing: &Sizing<'_>) -> Work {
        let base = sizing.base;
        let n = self.config.members as u64;
        let (l, d, r) = (
            base.layers() as u64,
            base.d_model() as u64,
            self.config.rank as u64,
        );
        // Four adapters a block, D -> r -> D each: 2 FLOPs a multiply-accumulate.
        let adapter_flops = l * 4 * 2 * (2 * d * r) * base.tokens() as u64;
        let trainable = n * (l * 4 * 2 * d * r + base.head_params());
        let training = sizing.training(
            format!("{n} members' adapters"),
            n * (base.forward_flops() + adapter_flops),
            (base.params() + trainable, trainable),
            n * base.train_activation_bytes(),
        );
        Work {
            trainings: vec![training],
            eval_flops: n * base.forward_flops(),
            eval_params: base.params() + trainable,
            eval_activation_bytes: n * base.eval_activation_bytes(),
        }
    }

    fn build(&self, ctx: &Context<'_>) -> Result<Built> {
        let frozen = self.frozen(&ctx.setting);
        // The frozen backbone lives on the training device; only adapters and heads get
        // gradients. The tag keeps the two variants' trained adapters apart in the cache.
        let (backbone, tag) = match frozen {
            Frozen::Base => (ctx.base[0].clone().train(), "adapters"),
            Frozen::Pretrained => {
                let weights = ctx.pretrained(ctx.seed_for("pretrained head"))?;
                let weights = weights.ok_or_else(|| {
                    ExperimentError::invalid("lora_ensemble: no pretrained backbone to freeze")
                })?;
                (weights, "pretrained adapters")
            }
        };
        let config = LoraConfig {
            text_tokens: ctx.text_tokens.max(1),
            ..self.config.clone()
        };
        let model = config.init(backbone, ctx.seed_for("adapters"))?;
        let mut built = ctx.fit_method(model, tag)?;
        built.outputs = Some(MethodOutputs::LoraEnsemble(LoraOutputs { frozen }));
        Ok(built)
    }
}

#[cfg(test)]
mod tests {
    use backbone::{Classifier, ViTConfig};
    use burn::tensor::Device;
    use seam::EnsembleModel;

    use super::*;
    use crate::workload::{ModelShape, Sizing};

    /// The estimate against the model the library builds: its evaluation FLOPs and its
    /// parameters (the frozen backbone, whose own head stays unused, and N adapters and heads).
    #[test]
    fn the_estimate_counts_the_model_built() {
        let vit = (ViTConfig::new().with_d_model(16).with_d_mlp(32))
            .with_n_layers(2)
            .with_n_heads(2);
        let backbone = Classifier::from(vit.init(&Device::flex()).unwrap());
        let method = LoraEnsemble {
            config: LoraConfig {
                rank: 2,
                ..LoraConfig::new(3)
            },
            backbone: None,
        };
        let model = method.config.clone().init(backbone, 0).unwrap();
        let shape = ModelShape::Vit(vit);
        let work = method.work(&Sizing {
            base: &shape,
            train_samples: 10,
            epochs: 1,
            batch_size: 4,
        });
        assert_eq!(work.eval_flops, model.flops_per_sample());
        assert_eq!(work.eval_params, EnsembleModel::num_params(&model) as u64);
    }
}
