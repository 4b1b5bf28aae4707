//! Evaluation in a lower floating-point precision (bf16): the model's float parameters cast once,
//! its input images cast on the way in and its logits back to f32 on the way out, so that the
//! metrics see f32 as always.

use backbone::Input;
use burn::module::{Module, ModuleMapper, Param};
use burn::tensor::{FloatDType, Tensor};

use crate::ensemble::{EnsembleModel, MemberOutputs};

/// `module` with every float parameter cast to `dtype`.
pub fn cast_floats<M: Module>(module: M, dtype: FloatDType) -> M {
    module.map(&mut Cast(dtype))
}

struct Cast(FloatDType);

impl ModuleMapper for Cast {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        param.map(|t| t.cast(self.0))
    }
}

/// A model whose parameters are already in `dtype` (see [`cast_floats`]), evaluated in it.
pub struct InPrecision<M> {
    model: M,
    dtype: FloatDType,
}

impl<M: EnsembleModel + 'static> InPrecision<M> {
    /// `model`, its parameters already cast to `dtype`, evaluated in `dtype`.
    pub fn boxed(model: M, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        Box::new(Self { model, dtype })
    }
}

impl<M: EnsembleModel + Module + 'static> InPrecision<M> {
    /// A model that is one module: its parameters cast, then [`Self::boxed`].
    pub fn cast(model: M, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        Self::boxed(cast_floats(model, dtype), dtype)
    }
}

impl<M: EnsembleModel> EnsembleModel for InPrecision<M> {
    fn members(&self) -> usize {
        self.model.members()
    }

    fn member_outputs(&self, input: Input) -> MemberOutputs {
        let input = match input {
            Input::Images(x) => Input::Images(x.cast(self.dtype)),
            tokens => tokens,
        };
        let out = self.model.member_outputs(input);
        MemberOutputs {
            logits: out.logits.cast(FloatDType::F32),
            features: out.features.cast(FloatDType::F32),
        }
    }

    fn num_params(&self) -> usize {
        self.model.num_params()
    }

    fn flops_per_sample(&self) -> u64 {
        self.model.flops_per_sample()
    }

    fn in_precision(&self, dtype: FloatDType) -> Box<dyn EnsembleModel> {
        self.model.in_precision(dtype)
    }
}
