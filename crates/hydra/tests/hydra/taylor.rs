//! Taylor importance against a central finite difference of the loss in each head gate.

use backbone::{Classifier, Gates, Input, Mode};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Tensor, TensorData};
use pruning::{Calibration, ScoreContext};

use crate::strategy;

use crate::{HEADS, LAYERS, calibration, device, tiny, values};

/// Mean cross-entropy of the model with head gates `gates`, computed on the host.
fn loss(model: &Classifier, x: &Input, y: &[i64], gates: &[f32]) -> f64 {
    let gates = Gates {
        heads: Some(Tensor::from_data(
            TensorData::new(gates.to_vec(), [LAYERS, HEADS]),
            &device(),
        )),
        ..Gates::none()
    };
    let logp = values(&log_softmax(
        model.forward(x.clone(), &gates, Mode::Deterministic),
        1,
    ));
    let classes = logp.len() / y.len();
    let nll: f64 = y
        .iter()
        .enumerate()
        .map(|(i, &c)| -(logp[i * classes + c as usize] as f64))
        .sum();
    nll / y.len() as f64
}

#[test]
fn scores_match_squared_finite_differences_summed_over_batches() {
    assert_matches_finite_differences(&tiny(21), &calibration(2, 4));
}

/// Taylor scores of `model` on `data` == the squared central differences of the loss in each
/// head gate, summed over batches.
pub fn assert_matches_finite_differences(model: &Classifier, data: &Calibration) {
    let ctx = ScoreContext { seed: 0, member: 0 };
    let taylor = strategy("taylor", &toml::Table::new()).unwrap();
    let scores = taylor.scores(model, data, &ctx).unwrap().0;
    assert_eq!((scores.len(), scores[0].len()), (LAYERS, HEADS));

    let eps = 1e-2;
    let mut expected = vec![vec![0.0; HEADS]; LAYERS];
    for (x, y) in &data.batches {
        let y: Vec<i64> = y.to_data().convert::<i64>().try_to_vec().unwrap();
        for (l, row) in expected.iter_mut().enumerate() {
            for (h, e) in row.iter_mut().enumerate() {
                let mut gates = vec![1.0f32; LAYERS * HEADS];
                gates[l * HEADS + h] = 1.0 + eps;
                let up = loss(model, x, &y, &gates);
                gates[l * HEADS + h] = 1.0 - eps;
                let down = loss(model, x, &y, &gates);
                *e += ((up - down) / (2.0 * eps as f64)).powi(2);
            }
        }
    }
    let largest = expected.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
    assert!(largest > 1e-4, "gradients too small to test: {expected:?}");
    for (l, (got, want)) in scores.iter().zip(&expected).enumerate() {
        for (h, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-3 * largest + 2e-2 * w,
                "head ({l}, {h}): taylor {g} vs finite difference {w}"
            );
        }
    }
}
