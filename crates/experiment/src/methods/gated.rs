//! A base model evaluated with fixed gates (heads or layers switched off), for analyses.

use backbone::{Classifier, Gates, Input, Mode};
use burn::tensor::{FloatDType, Tensor};
use seam::precision::{InPrecision, cast_floats};
use seam::{EnsembleModel, MemberOutputs};

/// The model with `gates` applied on every forward, with the cost figures it is given (the
/// ungated model's for an analysis, the physical form's for a pruned model).
pub struct Gated {
    model: Classifier,
    gates: Gates,
    flops: u64,
    params: usize,
}

impl Gated {
    pub fn new(model: Classifier, gates: Gates, flops: u64, params: usize) -> Self {
        Self {
            model,
            gates,
            flops,
            params,
        }
    }
}

impl EnsembleModel for Gated {
    fn members(&self) -> usize {
        1
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        MemberOutputs::single(self.model.outputs(input, &self.gates, Mode::Deterministic))
    }

    fn num_params(&self) -> usize {
        self.params
    }

    fn flops_per_sample(&self) -> u64 {
        self.flops
    }

    fn in_precision(&self, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        fn cast<const D: usize>(g: &Option<Tensor<D>>, dtype: FloatDType) -> Option<Tensor<D>> {
            g.clone().map(|g| g.cast(dtype))
        }
        let gates = Gates {
            heads: cast(&self.gates.heads, dtype),
            attn: cast(&self.gates.attn, dtype),
            act: cast(&self.gates.act, dtype),
            mlp: cast(&self.gates.mlp, dtype),
            neurons: cast(&self.gates.neurons, dtype),
        };
        let model = cast_floats(self.model.clone(), dtype);
        InPrecision::boxed(Self::new(model, gates, self.flops, self.params), dtype)
    }
}
