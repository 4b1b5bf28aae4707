//! A base model evaluated with fixed gates (heads or layers switched off), for analyses.

use backbone::{Classifier, Gates, Input, Mode};
use burn::module::Module;
use burn::tensor::{FloatDType, Tensor};
use seam::precision::{InPrecision, cast_floats};
use seam::{EnsembleModel, MemberOutputs};

/// The model with `gates` applied on every forward; cost figures are the ungated model's.
pub struct Gated {
    model: Classifier,
    gates: Gates,
    flops: u64,
}

impl Gated {
    /// Head gates `[L, H]` (0 = head off).
    pub fn heads(model: Classifier, heads: Tensor<2>, flops: u64) -> Self {
        let gates = Gates {
            heads: Some(heads),
            ..Gates::none()
        };
        Self {
            model,
            gates,
            flops,
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
        self.model.num_params()
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
        let flops = self.flops;
        InPrecision::boxed(
            Self {
                model,
                gates,
                flops,
            },
            dtype,
        )
    }
}
