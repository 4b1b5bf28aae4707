//! Circuit discovery finds a planted head; objectives and their data requirements.

use burn::tensor::Tensor;
use pruning::{Calibration, ScoreContext};

use crate::strategy;

use crate::{HEADS, LAYERS, calibration, edit, images, labels, logits, tiny};

/// A model in which only head 2 of block 0 writes to the residual stream (every other head's
/// output rows are zero), with labels = that model's own predictions.
fn planted() -> (backbone::Classifier, Calibration) {
    let mut model = tiny(31);
    for (l, block) in model.encoder_mut().layer.iter_mut().enumerate() {
        edit(&mut block.attention.output.weight, |w| {
            let [width, d] = w.dims();
            let head_dim = width / HEADS;
            let planted = (l == 0).then_some(2);
            let rows: Vec<f32> = (0..width)
                .map(|r| {
                    if Some(r / head_dim) == planted {
                        4.0
                    } else {
                        0.0
                    }
                })
                .collect();
            let scale = Tensor::<1>::from_floats(rows.as_slice(), &w.device());
            w * scale.reshape([width, 1]).expand([width, d])
        });
    }
    let x = images(24, 32);
    let predicted: Vec<i64> = logits(&model, &x)
        .argmax(1)
        .to_data()
        .convert::<i64>()
        .try_to_vec()
        .unwrap();
    let data = Calibration {
        batches: vec![(x, labels(&predicted))],
        ood: vec![],
    };
    (model, data)
}

fn params(text: &str) -> toml::Table {
    text.parse().unwrap()
}

#[test]
fn finds_the_planted_head() {
    let (model, data) = planted();
    let circuit = strategy("circuit", &params("objective = \"loss\"\nn = 1")).unwrap();
    let ctx = ScoreContext { seed: 0, member: 0 };
    let scores = circuit.scores(&model, &data, &ctx).unwrap().0;
    let best = (0..LAYERS)
        .flat_map(|l| (0..HEADS).map(move |h| (l, h)))
        .max_by(|a, b| scores[a.0][a.1].total_cmp(&scores[b.0][b.1]))
        .unwrap();
    assert_eq!(best, (0, 2), "{scores:?}");
    // Its masking is the largest harm (scaled to 1) and it is in the circuit (+2).
    assert_eq!(scores[0][2], 3.0);
    // One circuit head per block (n = 1); every other head of block 0 is harmless.
    for (l, row) in scores.iter().enumerate() {
        assert_eq!(
            row.iter().filter(|&&s| s >= 2.0).count(),
            1,
            "block {l}: {row:?}"
        );
    }
    assert!(
        scores[0]
            .iter()
            .enumerate()
            .all(|(h, &s)| h == 2 || s == 0.0)
    );
}

#[test]
fn ood_objectives_need_ood_data() {
    let (model, data) = planted();
    let ctx = ScoreContext { seed: 0, member: 0 };
    for objective in ["ood", "avg"] {
        let circuit =
            strategy("circuit", &params(&format!("objective = \"{objective}\""))).unwrap();
        let err = circuit.scores(&model, &data, &ctx).unwrap_err().to_string();
        assert!(
            err.contains("circuit.objective") && err.contains("OOD"),
            "{err}"
        );
    }
}

#[test]
fn per_member_objectives_cycle() {
    let model = tiny(33);
    let data = calibration(2, 6);
    let many = strategy(
        "circuit",
        &params("objectives = [\"loss\", \"ood\"]\nsamples = 8"),
    )
    .unwrap();
    assert!(many.criterion().varies_by_member());
    for (member, objective) in [(0, "loss"), (1, "ood"), (2, "loss"), (3, "ood")] {
        let one = strategy(
            "circuit",
            &params(&format!("objective = \"{objective}\"\nsamples = 8")),
        )
        .unwrap();
        let ctx = ScoreContext { seed: 0, member };
        let single = ScoreContext { seed: 0, member: 0 };
        assert_eq!(
            many.scores(&model, &data, &ctx).unwrap(),
            one.scores(&model, &data, &single).unwrap(),
            "member {member}"
        );
    }
    // Default n = H/2 heads per block join the circuit.
    let scores = many
        .scores(&model, &data, &ScoreContext { seed: 0, member: 1 })
        .unwrap();
    for row in &scores.0 {
        assert_eq!(row.iter().filter(|&&s| s >= 2.0).count(), HEADS / 2);
    }
}

#[test]
fn rejects_bad_parameters() {
    for (text, needle) in [
        (
            "objective = \"acc\"",
            "`acc`, expected one of `loss`, `ood`, `avg` in `objective`",
        ),
        ("objectives = []", "circuit.objectives"),
        ("objective = \"loss\"\nobjectives = [\"ood\"]", "not both"),
        ("n = 0", "integer `0`, expected a nonzero usize in `n`"),
        (
            "samples = -3",
            "integer `-3`, expected a nonzero usize in `samples`",
        ),
        ("samples = \"all\"", "in `samples`"),
    ] {
        // toml puts the key on a line of its own (`...\nin `n``).
        let err = data::error_chain(&strategy("circuit", &params(text)).err().unwrap())
            .replace('\n', " ");
        assert!(err.contains(needle), "{text}: {err}");
    }
    let too_many = strategy("circuit", &params("n = 5")).unwrap();
    let err = too_many
        .scores(
            &tiny(1),
            &calibration(1, 3),
            &ScoreContext { seed: 0, member: 0 },
        )
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("circuit.n = 5") && err.contains("4 heads"),
        "{err}"
    );
}
