//! Cross-entropy over ensemble members, with optional label smoothing, and distillation from a
//! teacher's logits.

use burn::tensor::activation::{log_softmax, softmax};
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

/// Distillation loss of member logits `[M, B, C]` against a teacher's logits `[B, C]`, averaged
/// over members and samples. Temperature T > 0: `T²·KL(softmax(t/T) || softmax(s/T))` (the T²
/// keeps gradient sizes comparable across temperatures, Hinton et al.); T = 0: cross-entropy
/// against the teacher's argmax (hard distillation, as in DeiT).
pub fn distillation(student: Tensor<3>, teacher: Tensor<2>, temperature: f64) -> Tensor<1> {
    let [m, b, c] = student.dims();
    if temperature == 0.0 {
        return cross_entropy(student, teacher.argmax(1).squeeze_dim(1), 0.0);
    }
    let target = softmax(teacher.div_scalar(temperature), 1);
    let log_target = target.clone().clamp_min(1e-30).log();
    let log_student = log_softmax(student.reshape([m * b, c]).div_scalar(temperature), 1);
    let target = target
        .unsqueeze_dim::<3>(0)
        .expand([m, b, c])
        .reshape([m * b, c]);
    let log_target = log_target
        .unsqueeze_dim::<3>(0)
        .expand([m, b, c])
        .reshape([m * b, c]);
    (target * (log_target - log_student))
        .sum_dim(1)
        .mean()
        .mul_scalar(temperature * temperature)
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
    fn distillation_matches_hand_computed_kl() {
        let device = Device::flex();
        // T = 2: teacher [2 ln 3, 0]/2 -> p = [3/4, 1/4]; student [0, 0] -> q = [1/2, 1/2].
        let teacher = Tensor::<2>::from_floats([[2.0 * 3f32.ln(), 0.0]], &device);
        let student = Tensor::<3>::from_floats([[[0.0, 0.0]]], &device);
        let soft: f32 = distillation(student.clone(), teacher.clone(), 2.0).into_scalar();
        let kl = 0.75 * (0.75f32 / 0.5).ln() + 0.25 * (0.25f32 / 0.5).ln();
        assert!((soft - 4.0 * kl).abs() < 1e-6, "{soft} vs {}", 4.0 * kl);
        // Same logits: zero. Hard: cross-entropy against the teacher's class 0, ln 2.
        let same: f32 =
            distillation(teacher.clone().unsqueeze_dim(0), teacher.clone(), 2.0).into_scalar();
        assert!(same.abs() < 1e-6);
        let hard: f32 = distillation(student, teacher, 0.0).into_scalar();
        assert!((hard - 2f32.ln()).abs() < 1e-6);
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
