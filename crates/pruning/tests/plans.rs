//! Selection and plans: how many units each selection removes, the lowest scores first; the
//! physical models equal the gated ones; budgets are met or refused.

mod common;

use backbone::{Classifier, Gates, Input, Mode};
use burn::module::Module;
use burn::tensor::{Device, Tensor};
use pruning::{Applied, Measure, Plan, Scores, Selection, UnitKind, select, unit_costs};

use common::{LAYERS, data, tiny};

fn logits(model: &Classifier, gates: &Gates, input: &Input) -> Vec<f32> {
    let out = model.forward(input.clone(), gates, Mode::Deterministic);
    out.into_data().try_to_vec::<f32>().unwrap()
}

fn assert_close(a: &[f32], b: &[f32]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() < 1e-5, "{x} vs {y}");
    }
}

/// Scores `[L][U]` equal to `l·U + u` (block 0's first unit lowest).
fn counting(model: &Classifier, kind: UnitKind) -> Scores {
    let counts = kind.per_block(model);
    Scores(
        (counts.iter().enumerate())
            .map(|(l, &n)| (0..n).map(|u| (l * n + u) as f64).collect())
            .collect(),
    )
}

#[test]
fn selections_remove_the_lowest_scores_globally_or_per_block() {
    let model = tiny(1);
    let scores = counting(&model, UnitKind::Head); // 3 blocks x 4 heads
    let global = select(&model, UnitKind::Head, &scores, Selection::Global(0.5), 0).unwrap();
    // The 6 lowest are block 0's four and block 1's first two.
    assert_eq!(global.kept, vec![vec![], vec![2, 3], vec![0, 1, 2, 3]]);
    let per_block = select(&model, UnitKind::Head, &scores, Selection::PerBlock(0.5), 0).unwrap();
    assert_eq!(per_block.kept, vec![vec![2, 3]; LAYERS]);
    let err = select(&model, UnitKind::Head, &scores, Selection::Global(1.5), 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "ratio = 1.5 is invalid: expected a number in [0, 1]"
    );
}

#[test]
fn a_budget_removes_units_until_it_is_met_and_an_impossible_one_is_refused() {
    let model = tiny(2);
    let kind = UnitKind::Neuron;
    // Interleaved over blocks (unit u of block l scores u·L + l), so no block empties first.
    let counts = kind.per_block(&model);
    let interleaved = |l: usize, n: usize| (0..n).map(|u| (u * LAYERS + l) as f64).collect();
    let scores = Scores(
        counts
            .iter()
            .enumerate()
            .map(|(l, &n)| interleaved(l, n))
            .collect(),
    );
    let keep = 0.8;
    let budget = Selection::Budget {
        measure: Measure::Params,
        keep,
    };
    let plan = select(&model, kind, &scores, budget, 0).unwrap();
    let Applied::Physical(pruned) = plan.apply(&model, &Device::flex()).unwrap() else {
        panic!("neurons kept in every block prune physically");
    };
    let (base, now) = (model.num_params() as f64, pruned.num_params() as f64);
    assert!(now <= keep * base, "{now} of {base}");
    // One neuron fewer would have been enough: the last one removed was needed.
    let each = unit_costs(&model, kind, Measure::Params, 0)[0][0] as f64;
    assert!(now + each > keep * base, "{now} + {each} of {base}");
    // MLP neurons hold well under half the parameters: keeping 10% cannot be met.
    let impossible = Selection::Budget {
        measure: Measure::Flops,
        keep: 0.1,
    };
    let err = select(&model, kind, &scores, impossible, 0)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("budget.keep = 0.1 is invalid"), "{err}");
}

/// The physical forms compute what the gated model computes.
#[test]
fn physical_plans_equal_the_gated_model() {
    let model = tiny(3);
    let input = data(&model, 4).batches[0].0.clone();
    let device = Device::flex();
    for (kind, kept) in [
        (UnitKind::Head, vec![vec![0, 2], vec![1], vec![0, 1, 3]]),
        (
            UnitKind::Neuron,
            vec![(0..16).step_by(3).collect(), vec![5], (2..9).collect()],
        ),
        (UnitKind::Block, vec![vec![0], vec![], vec![0]]),
    ] {
        let plan = Plan { kind, kept };
        let gates = kind.gates(plan.mask(&model, &device).unwrap());
        let Applied::Physical(pruned) = plan.apply(&model, &device).unwrap() else {
            panic!("{kind}: not physical");
        };
        assert!(pruned.num_params() < model.num_params(), "{kind}");
        let expected = logits(&model, &gates, &input);
        assert_close(&logits(&pruned, &Gates::none(), &input), &expected);
    }
    // A branch has no physical form here: the plan is applied through its gate.
    let plan = Plan {
        kind: UnitKind::Mlp,
        kept: vec![vec![0], vec![], vec![0]],
    };
    let Applied::Gated(_, gates) = plan.apply(&model, &device).unwrap() else {
        panic!("an MLP branch is gated");
    };
    let by_hand = Gates {
        mlp: Some(Tensor::from_floats([1.0, 0.0, 1.0], &device)),
        ..Gates::none()
    };
    assert_close(
        &logits(&model, &gates, &input),
        &logits(&model, &by_hand, &input),
    );
}
