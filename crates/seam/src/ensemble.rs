//! The ensemble seam: what a built method gives for a batch, and the ensemble's prediction.

use backbone::Input;
use burn::tensor::activation::softmax;
use burn::tensor::{FloatDType, Tensor};

/// What the members give for a batch: their logits and the features their heads read.
pub struct MemberOutputs {
    /// `[M, B, C]`.
    pub logits: Tensor<3>,
    /// `[M, B, D]`: the representation each member's classifier reads (the class token after
    /// the final norm, or the pooled tokens), for the feature-space OOD detectors. Members that
    /// share one representation (MIMO) each give it.
    pub features: Tensor<3>,
}

/// A model whose prediction is an ensemble of members.
pub trait EnsembleModel {
    /// Number of members M (samples, for MC Dropout).
    fn members(&self) -> usize;

    /// Member logits `[M, B, C]` and features `[M, B, D]` for a batch of input (images, or
    /// tokens for text models), from one pass.
    fn member_outputs(&self, input: Input) -> MemberOutputs;

    /// Member logits `[M, B, C]` alone.
    fn member_logits(&self, input: Input) -> Tensor<3> {
        self.member_outputs(input).logits
    }

    /// Stored parameters (shared parameters counted once).
    fn num_params(&self) -> usize;

    /// Floating-point operations for one sample through the whole ensemble.
    fn flops_per_sample(&self) -> u64;

    /// The same model evaluated in `dtype`: parameters cast once, input images cast per call,
    /// logits returned in f32 ([`crate::precision::InPrecision`]).
    fn in_precision(&self, dtype: FloatDType) -> Box<dyn EnsembleModel>;
}

/// Member probabilities `[M, B, C]` averaged over members: the ensemble's prediction `[B, C]`.
pub fn mean_probs(member_logits: Tensor<3>) -> Tensor<2> {
    softmax(member_logits, 2).mean_dim(0).squeeze_dim(0)
}

impl MemberOutputs {
    /// One model's logits `[B, C]` and features `[B, D]` as a single member.
    pub fn single((logits, features): (Tensor<2>, Tensor<2>)) -> Self {
        Self {
            logits: logits.unsqueeze_dim(0),
            features: features.unsqueeze_dim(0),
        }
    }

    /// Members' logits and features, each `[B, ·]`, stacked member-major.
    pub fn stack(members: Vec<(Tensor<2>, Tensor<2>)>) -> Self {
        let (logits, features) = members.into_iter().unzip();
        Self {
            logits: Tensor::stack(logits, 0),
            features: Tensor::stack(features, 0),
        }
    }
}

#[cfg(test)]
mod tests {
    use burn::tensor::{Device, Tensor};

    #[test]
    fn mean_probs_is_the_average_of_member_softmax() {
        let device = Device::flex();
        let logits = Tensor::<3>::from_floats([[[0.0, 0.0]], [[2.0f32.ln(), 0.0]]], &device);
        // Members: [1/2, 1/2] and [2/3, 1/3]; mean [7/12, 5/12].
        let p = super::mean_probs(logits)
            .into_data()
            .try_to_vec::<f32>()
            .unwrap();
        assert!(
            (p[0] - 7.0 / 12.0).abs() < 1e-6 && (p[1] - 5.0 / 12.0).abs() < 1e-6,
            "{p:?}"
        );
    }
}
