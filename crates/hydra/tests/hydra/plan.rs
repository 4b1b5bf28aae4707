//! Member selection: seeding, diversity, budgets, the global pruning ranking.

use hydra::{HeadSet, Keep, SelectConfig, mean_topk_share, plan_members, prune_ratio};
use pruning::Scores;

use crate::{Head, strategy};

use crate::{HEADS, calibration, edit, tiny};

fn build(name: &str) -> Head {
    strategy(name, &toml::Table::new()).unwrap()
}

fn cfg(members: usize, keep: Keep, temperature: f64, bootstrap: bool) -> SelectConfig {
    SelectConfig {
        members,
        keep,
        temperature,
        bootstrap,
    }
}

fn kept(plans: &[hydra::MemberPlan]) -> Vec<HeadSet> {
    plans.iter().map(|p| p.kept.clone()).collect()
}

#[test]
fn same_seed_same_plan() {
    let (model, data) = (tiny(41), calibration(2, 4));
    let taylor = build("taylor");
    let c = cfg(3, Keep::PerBlock(2), 0.5, true);
    let a = plan_members(&model, taylor.criterion(), &data, &c, 9).unwrap();
    let b = plan_members(&model, taylor.criterion(), &data, &c, 9).unwrap();
    assert_eq!(a, b);
    let other = plan_members(&model, taylor.criterion(), &data, &c, 10).unwrap();
    assert_ne!(a, other);
}

#[test]
fn temperature_zero_without_bootstrap_is_plain_top_k() {
    let (model, data) = (tiny(42), calibration(1, 4));
    let magnitude = build("magnitude");
    let plans = plan_members(
        &model,
        magnitude.criterion(),
        &data,
        &cfg(3, Keep::PerBlock(2), 0.0, false),
        1,
    )
    .unwrap();
    let scores = &plans[0].scores.0;
    let top2 = |row: &Vec<f64>| {
        let mut idx: Vec<usize> = (0..row.len()).collect();
        idx.sort_by(|&a, &b| row[b].partial_cmp(&row[a]).unwrap());
        let mut best = idx[..2].to_vec();
        best.sort();
        best
    };
    let expected = HeadSet(scores.iter().map(top2).collect());
    assert!(
        plans
            .iter()
            .all(|p| p.kept == expected && &p.scores.0 == scores)
    );
    assert_eq!(mean_topk_share(&plans).unwrap(), 1.0);
}

#[test]
fn temperature_makes_members_differ() {
    let (model, data) = (tiny(43), calibration(1, 4));
    let magnitude = build("magnitude");
    for keep in [Keep::PerBlock(2), Keep::Global(5)] {
        let plans = plan_members(
            &model,
            magnitude.criterion(),
            &data,
            &cfg(4, keep, 1.0, false),
            3,
        )
        .unwrap();
        let sets = kept(&plans);
        for i in 0..sets.len() {
            for j in 0..i {
                assert_ne!(sets[i], sets[j], "{keep:?}: members {i} and {j}");
            }
        }
    }
}

#[test]
fn bootstrap_rescores_each_member_on_its_own_resample() {
    let (model, data) = (tiny(44), calibration(3, 4));
    let activation = build("activation");
    let plans = plan_members(
        &model,
        activation.criterion(),
        &data,
        &cfg(3, Keep::PerBlock(2), 0.0, true),
        5,
    )
    .unwrap();
    let full = activation
        .scores(&model, &data, &pruning::ScoreContext { seed: 5, member: 0 })
        .unwrap();
    for (i, p) in plans.iter().enumerate() {
        assert_ne!(p.scores, full, "member {i} scored the original data");
        for q in &plans[..i] {
            assert_ne!(p.scores, q.scores);
        }
    }
}

#[test]
fn global_budget_keeps_one_head_per_block_at_least() {
    let mut model = tiny(45);
    // Block 1's heads are tiny in magnitude: a global ranking would drop them all.
    let a = &mut model.encoder_mut().layer[1].attention;
    for linear in [&mut a.query, &mut a.key, &mut a.value, &mut a.output] {
        edit(&mut linear.weight, |w| w.mul_scalar(0.01));
    }
    let data = calibration(1, 2);
    let magnitude = build("magnitude");
    for (budget, temperature) in [(3, 0.0), (5, 0.0), (6, 2.0)] {
        let plans = plan_members(
            &model,
            magnitude.criterion(),
            &data,
            &cfg(2, Keep::Global(budget), temperature, false),
            8,
        )
        .unwrap();
        for p in &plans {
            let counts: Vec<usize> = p.kept.0.iter().map(Vec::len).collect();
            assert_eq!(counts.iter().sum::<usize>(), budget, "{:?}", p.kept);
            assert!(counts.iter().all(|&c| c >= 1), "{:?}", p.kept);
            if temperature == 0.0 {
                assert_eq!(counts[1], budget - HEADS.min(budget - 1), "{:?}", p.kept);
            }
        }
    }
}

#[test]
fn rejects_bad_configs() {
    let (model, data) = (tiny(46), calibration(1, 2));
    let magnitude = build("magnitude");
    for (c, needle) in [
        (
            cfg(0, Keep::PerBlock(2), 0.0, false),
            "SelectConfig.members = 0",
        ),
        (
            cfg(2, Keep::PerBlock(5), 0.0, false),
            "SelectConfig.keep (per block) = 5",
        ),
        (
            cfg(2, Keep::PerBlock(0), 0.0, false),
            "SelectConfig.keep (per block) = 0",
        ),
        (
            cfg(2, Keep::Global(1), 0.0, false),
            "SelectConfig.keep (global) = 1",
        ),
        (
            cfg(2, Keep::Global(9), 0.0, false),
            "SelectConfig.keep (global) = 9",
        ),
        (
            cfg(2, Keep::PerBlock(2), -1.0, false),
            "SelectConfig.temperature = -1",
        ),
        (
            cfg(2, Keep::PerBlock(2), f64::NAN, false),
            "SelectConfig.temperature = NaN",
        ),
    ] {
        let err = plan_members(&model, magnitude.criterion(), &data, &c, 0)
            .unwrap_err()
            .to_string();
        assert!(err.contains(needle), "{c:?}: {err}");
    }
    let empty = pruning::Calibration {
        batches: vec![],
        ood: vec![],
    };
    let err = plan_members(
        &model,
        build("taylor").criterion(),
        &empty,
        &cfg(1, Keep::PerBlock(1), 0.0, false),
        0,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("Calibration.batches"), "{err}");
}

#[test]
fn prune_ratio_drops_the_lowest_scores_globally() {
    let scores = Scores(vec![vec![0.1, 0.5, 0.4], vec![0.3, 0.2, 0.6]]);
    let cases = [
        (0.0, vec![vec![0, 1, 2], vec![0, 1, 2]]),
        (0.2, vec![vec![1, 2], vec![0, 1, 2]]), // round(1.2) = 1
        (0.5, vec![vec![1, 2], vec![2]]),
        (0.9, vec![vec![], vec![2]]), // round(5.4) = 5
        (1.0, vec![vec![], vec![]]),
    ];
    for (ratio, expected) in cases {
        assert_eq!(
            prune_ratio(&scores, ratio).unwrap(),
            HeadSet(expected),
            "ratio {ratio}"
        );
    }
    assert!(
        prune_ratio(&scores, 1.5)
            .unwrap_err()
            .to_string()
            .contains("ratio = 1.5")
    );
    let bad = Scores(vec![vec![0.1, f64::NAN]]);
    assert!(
        prune_ratio(&bad, 0.5)
            .unwrap_err()
            .to_string()
            .contains("Scores[0][1]")
    );
}
