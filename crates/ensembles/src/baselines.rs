//! Single model, Deep Ensemble and MC Dropout on any [`Classifier`] (ViT or BERT).

use backbone::{Classifier, Gates, Input, Mode};
use burn::module::Module;
use burn::tensor::FloatDType;

use seam::precision::{InPrecision, cast_floats};
use seam::{EnsembleModel, MemberOutputs};

/// The base model alone: M = 1.
#[derive(Debug, Clone)]
pub struct Single {
    pub model: Classifier,
    flops: u64,
}

impl Single {
    /// `flops` is the model's cost per sample (from its config; modules do not keep it).
    pub fn new(model: impl Into<Classifier>, flops: u64) -> Self {
        Self {
            model: model.into(),
            flops,
        }
    }
}

impl EnsembleModel for Single {
    fn members(&self) -> usize {
        1
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        MemberOutputs::single(
            self.model
                .outputs(input, &Gates::none(), Mode::Deterministic),
        )
    }

    fn num_params(&self) -> usize {
        self.model.num_params()
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops
    }

    fn in_precision(&self, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        let model = cast_floats(self.model.clone(), dtype);
        InPrecision::boxed(Self { model, ..*self }, dtype)
    }
}

/// M independently trained models, each run on the batch; cost is M times one model's.
#[derive(Debug, Clone)]
pub struct DeepEnsemble {
    pub members: Vec<Classifier>,
    flops_each: u64,
}

impl DeepEnsemble {
    /// # Panics
    /// If `members` is empty (an ensemble needs at least one model).
    pub fn new<M: Into<Classifier>>(members: Vec<M>, flops_each: u64) -> Self {
        let members: Vec<Classifier> = members.into_iter().map(Into::into).collect();
        assert!(
            !members.is_empty(),
            "a Deep Ensemble needs at least one member"
        );
        Self {
            members,
            flops_each,
        }
    }
}

impl EnsembleModel for DeepEnsemble {
    fn members(&self) -> usize {
        self.members.len()
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        let each = |m: &Classifier| m.outputs(input.clone(), &Gates::none(), Mode::Deterministic);
        MemberOutputs::stack(self.members.iter().map(each).collect())
    }

    fn num_params(&self) -> usize {
        self.members.iter().map(Module::num_params).sum()
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops_each * self.members.len() as u64
    }

    fn in_precision(&self, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        let members = (self.members.iter()).map(|m| cast_floats(m.clone(), dtype));
        InPrecision::boxed(Self::new(members.collect(), self.flops_each), dtype)
    }
}

/// One model with dropout kept on at test time; each of the S samples is one stochastic pass.
/// The masks come from the device RNG: seed the device before evaluating for reproducibility.
#[derive(Debug, Clone)]
pub struct McDropout {
    pub model: Classifier,
    pub samples: usize,
    flops_each: u64,
}

impl McDropout {
    pub fn new(model: impl Into<Classifier>, samples: usize, flops_each: u64) -> Self {
        Self {
            model: model.into(),
            samples,
            flops_each,
        }
    }
}

impl EnsembleModel for McDropout {
    fn members(&self) -> usize {
        self.samples
    }

    /// Each sample's logits and features come from one stochastic pass (its own masks).
    fn member_outputs(&self, input: Input) -> MemberOutputs {
        let pass = |_| (self.model).outputs(input.clone(), &Gates::none(), Mode::Stochastic);
        MemberOutputs::stack((0..self.samples).map(pass).collect())
    }

    fn num_params(&self) -> usize {
        self.model.num_params()
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops_each * self.samples as u64
    }

    fn in_precision(&self, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        let model = cast_floats(self.model.clone(), dtype);
        InPrecision::boxed(Self { model, ..*self }, dtype)
    }
}
