//! Cross-entropy over ensemble members, with optional label smoothing.

use burn::tensor::activation::log_softmax;
use burn::tensor::{Int, Tensor};

/// Mean cross-entropy of member logits `[M, B, C]` against labels `[B]`, averaged over members
/// and samples. With smoothing ε the target is `(1 - ε)·onehot + ε/C`.
pub fn cross_entropy(logits: Tensor<3>, labels: Tensor<1, Int>, smoothing: f64) -> Tensor<1> {
    let [m, b, c] = logits.dims();
    let logp = log_softmax(logits.reshape([m * b, c]), 1);
    let targets = labels
        .unsqueeze_dim::<2>(0)
        .expand([m, b])
        .reshape([m * b, 1]);
    let nll = -logp.clone().gather(1, targets).mean();
    if smoothing == 0.0 {
        return nll;
    }
    let uniform = -logp.mean();
    nll.mul_scalar(1.0 - smoothing) + uniform.mul_scalar(smoothing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::tensor::Device;

    #[test]
    fn matches_hand_computed_values() {
        let device = Device::flex();
        // One member, logits [ln 3, 0] against class 0: p = 3/4, loss = ln(4/3).
        let logits = Tensor::<3>::from_floats([[[3f32.ln(), 0.0]]], &device);
        let labels = Tensor::<1, Int>::from_ints([0], &device);
        let plain: f32 = cross_entropy(logits.clone(), labels.clone(), 0.0).into_scalar();
        assert!((plain - (4.0f32 / 3.0).ln()).abs() < 1e-6);
        // Smoothing 0.2: 0.8·ln(4/3) + 0.2·mean(-ln 3/4, -ln 1/4).
        let smooth: f32 = cross_entropy(logits, labels, 0.2).into_scalar();
        let expected = 0.8 * (4.0f32 / 3.0).ln() + 0.2 * 0.5 * ((4.0f32 / 3.0).ln() + 4f32.ln());
        assert!((smooth - expected).abs() < 1e-6, "{smooth} vs {expected}");
    }

    #[test]
    fn averages_over_members() {
        let device = Device::flex();
        let logits = Tensor::<3>::from_floats([[[0.0, 0.0]], [[3f32.ln(), 0.0]]], &device);
        let labels = Tensor::<1, Int>::from_ints([0], &device);
        let loss: f32 = cross_entropy(logits, labels, 0.0).into_scalar();
        let expected = 0.5 * (2f32.ln() + (4.0f32 / 3.0).ln());
        assert!((loss - expected).abs() < 1e-6);
    }
}
