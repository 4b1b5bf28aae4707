use super::*;
use crate::config::{Budget, HeadWidth, WidthConfig};
use crate::finetune::finetune;
use crate::pruned::PrunedMlp;
use crate::search::EXTRA_POINTS;
use crate::testutil::{max_rel_diff, quadrants, serial, tiny_vit};
use data::Normalization;
use train::{Distill, TrainConfig};

fn small_config() -> HetDptConfig {
    HetDptConfig {
        importance_steps: 3,
        importance_images: 60,
        map_images: 60,
        degree: 1,
        speed: Speed::Flops,
        latency_batch: Some(8),
        budget: Budget::MinSpeedup(1.1),
        batch_size: 20,
        finetune_epochs: 1,
        finetune_images: Some(60),
        ..HetDptConfig::default()
    }
}

#[test]
fn pipeline_is_consistent_and_deterministic() {
    let _rng = serial();
    let device = Device::flex();
    let (vit, base) = tiny_vit(&device, 41);
    let (train_set, val_set) = (quadrants(90, 1), quadrants(30, 2));
    let norm = Normalization::fit(&train_set).unwrap();
    let train = ImageData {
        set: &train_set,
        norm: &norm,
    };
    let val = ImageData {
        set: &val_set,
        norm: &norm,
    };
    // HetDPT+: one head of two per block, half the MLP channels. The grid 0..=2 of each kind,
    // of which the MAP measures the values 0 and 2.
    let cfg = HetDptConfig {
        max_attn: Some(2),
        max_act: Some(2),
        map_values: Some(2),
        width: Some(WidthConfig {
            mlp_keep: 0.5,
            heads: Some(HeadWidth {
                strategy: "magnitude".into(),
                params: toml::Table::new(),
                keep: 1,
                calibration_images: 16,
            }),
        }),
        ..small_config()
    };
    let Outcome { model, report } =
        compress(&task(&base, &vit, train, val, &device, 7), &cfg).unwrap();

    // Measured points n_a major; the search scores all 3 x 3 points of the grid, measuring the
    // speed (here FLOPs) of only those it checks.
    let grid: Vec<_> = report.points.iter().map(|p| (p.n_attn, p.n_act)).collect();
    assert_eq!(grid[..4], [(0, 0), (0, 2), (2, 0), (2, 2)]);
    // Points past the grid are the ones the search was about to choose unmeasured.
    assert!(report.points[..4].iter().all(|p| !p.added_by_search));
    assert!(report.points[4..].iter().all(|p| p.added_by_search));
    assert!(grid.len() <= 4 + EXTRA_POINTS);
    // No prediction above the unpruned model's measured accuracy.
    assert_eq!(report.prediction_cap, report.base.accuracy);
    assert!(
        report
            .grid
            .iter()
            .all(|c| c.predicted_accuracy <= report.prediction_cap)
    );
    // Every training counted: one of the 2L = 6 gate scores (4 rounds of 3 steps of 20 of the
    // 60 images), each point's MAP fine-tune (60 images in 3 batches per epoch), the final
    // fine-tune (1 epoch of the 60-image subset).
    let t = &report.training;
    let per_point = 3 * cfg.map_epochs as u64;
    let points = report.points.len() as u64;
    assert_eq!(t.trainings, 1 + report.points.len() + 1);
    assert_eq!(t.steps, 12 + points * per_point + 3);
    assert_eq!(t.samples, 20 * t.steps);
    let point_params: u64 = report.points.iter().map(|p| p.params as u64).sum();
    assert_eq!(
        t.trainable_params,
        6 + point_params + model.num_params() as u64
    );
    assert!(t.wall_seconds > 0.0);
    // The budget is judged by FLOPs here, as the search was.
    let flop_speedup = report.base.flops as f64 / report.pruned.flops as f64;
    assert_eq!(report.achieved_speedup, flop_speedup);
    assert_eq!(report.budget_met, flop_speedup >= 1.1);
    assert_eq!(report.importance.attn.len(), 2);
    assert_eq!(report.importance.act.len(), 2);
    for p in &report.points {
        assert_eq!(p.speedup, report.points[0].flops as f64 / p.flops as f64);
        assert!((0.0..=1.0).contains(&p.accuracy));
    }
    let c = &report.choice;
    assert_eq!(c.searched, 9);
    assert!(!c.checked.is_empty() && c.checked.len() < 9, "{c:?}");
    assert!(c.checked.iter().all(|k| k.speedup == Some(k.flop_speedup)));
    assert!(
        c.checked
            .iter()
            .any(|k| (k.n_attn, k.n_act) == (c.n_attn, c.n_act))
    );
    assert_eq!(c.measured_point, grid.contains(&(c.n_attn, c.n_act)));
    // The search measures its choice before deciding, unless it ran out of extra points.
    assert!(c.measured_point || grid.len() == 4 + EXTRA_POINTS);
    if !c.reason.contains("no point reaches") {
        assert!(c.speedup >= 1.1, "{c:?}");
    }
    assert_eq!(model.attention_kept(), 3 - c.n_attn);
    assert_eq!(model.activations_kept(), 3 - c.n_act);
    let expected = Removal::first(
        3,
        &report.importance.attn,
        c.n_attn,
        &report.importance.act,
        c.n_act,
    );
    assert_eq!(report.removal, expected);
    for block in &model.blocks {
        if let Some(branch) = &block.attention {
            assert_eq!(branch.attention.n_heads, 1);
        }
        if let PrunedMlp::Gelu(mlp) = &block.mlp {
            assert_eq!(mlp.fc1.weight.dims(), [vit.d_model, vit.d_mlp / 2]);
        }
    }
    assert!(report.width.as_ref().unwrap().heads_kept.is_some());
    assert_eq!(report.pruned.flops, model.flops());
    assert_eq!(report.pruned.params, model.num_params());
    assert_eq!(report.base.flops, vit.flops_per_sample());
    assert_eq!(report.base.params, base.num_params());
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["choice"]["n_attn"], c.n_attn);

    let again = compress(&task(&base, &vit, train, val, &device, 7), &cfg)
        .unwrap()
        .report;
    assert_eq!(again.importance, report.importance);
    assert_eq!(again.points, report.points);
}

#[test]
fn a_criterions_order_drives_the_search_and_the_merge() {
    let _rng = serial();
    let device = Device::flex();
    let (vit, base) = tiny_vit(&device, 41);
    let (train_set, val_set) = (quadrants(90, 1), quadrants(30, 2));
    let norm = Normalization::fit(&train_set).unwrap();
    let (train, val) = (
        ImageData {
            set: &train_set,
            norm: &norm,
        },
        ImageData {
            set: &val_set,
            norm: &norm,
        },
    );
    let cfg = HetDptConfig {
        max_attn: Some(2),
        max_act: Some(3),
        map_values: Some(2),
        order: Some(crate::config::OrderConfig {
            criterion: "learnable".into(),
            params: toml::from_str("steps = 4").unwrap(),
        }),
        ..small_config()
    };
    let report = compress(&task(&base, &vit, train, val, &device, 7), &cfg)
        .unwrap()
        .report;
    let order = &report.importance;
    let ranked = order.ranked.as_ref().expect("the criterion's scores");
    assert_eq!(ranked.criterion, "learnable");
    assert!(order.rounds.is_empty());
    // Each kind's blocks in ascending score, as many as its grid removes.
    let ascending =
        |scores: &[f64], blocks: &[usize]| blocks.windows(2).all(|w| scores[w[0]] <= scores[w[1]]);
    assert_eq!((order.attn.len(), order.act.len()), (2, 3));
    assert!(ascending(&ranked.attn, &order.attn), "{ranked:?} {order:?}");
    assert!(ascending(&ranked.act, &order.act), "{ranked:?} {order:?}");
    let c = &report.choice;
    let expected = Removal::first(3, &order.attn, c.n_attn, &order.act, c.n_act);
    assert_eq!(report.removal, expected);
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["importance"]["ranked"]["criterion"], "learnable");
}

#[test]
fn bad_inputs_are_errors() {
    let _rng = serial();
    let device = Device::flex();
    let (vit, base) = tiny_vit(&device, 42);
    let set = quadrants(30, 1);
    let empty = set.subset(&[]);
    let norm = Normalization::fit(&set).unwrap();
    let data = ImageData {
        set: &set,
        norm: &norm,
    };
    let none = ImageData {
        set: &empty,
        norm: &norm,
    };
    let cfg = small_config();
    let err = compress(&task(&base, &vit, data, none, &device, 1), &cfg).unwrap_err();
    assert!(err.to_string().contains("validation set"), "{err}");
    let deeper = vit.clone().with_n_layers(4);
    let err = compress(&task(&base, &deeper, data, data, &device, 1), &cfg).unwrap_err();
    assert!(err.to_string().contains("n_layers = 4"), "{err}");
    let bad = HetDptConfig { degree: 2, ..cfg };
    let err = compress(&task(&base, &vit, data, data, &device, 1), &bad).unwrap_err();
    assert!(err.to_string().contains("hetdpt.max_attn"), "{err}");
}

#[test]
fn finetune_trains_the_merged_model() {
    let _rng = serial();
    let device = Device::flex();
    let (_, base) = tiny_vit(&device, 43);
    let set = quadrants(40, 3);
    let norm = Normalization::fit(&set).unwrap();
    let data = ImageData {
        set: &set,
        norm: &norm,
    };
    let model = merge(
        &base,
        &Removal {
            attn: vec![true, false, false],
            act: vec![false, true, false],
        },
    )
    .unwrap();
    let before = model.shell.head.weight.val();
    let recipe = TrainConfig {
        epochs: 1,
        batch_size: 20,
        lr: 1e-2,
        warmup_epochs: 0.0,
        ..TrainConfig::default()
    };
    let distill = Distill {
        teacher: base.clone().into(),
        alpha: 0.5,
        temperature: 2.0,
    };
    let (tuned, totals) = finetune(
        model,
        data,
        &recipe,
        Some(distill),
        &device,
        5,
        "test".into(),
    )
    .unwrap();
    // The cost it reports: one epoch of the batches of 20 (drop-last, as the trainer plans).
    let n = data.set.len() as u64;
    assert_eq!((totals.steps, totals.samples), (n / 20, 20 * (n / 20)));
    let after = tuned.shell.head.weight.val();
    assert!(!after.device().is_autodiff());
    assert!(max_rel_diff(&after, &before) > 1e-3);
}

fn task<'a>(
    base: &'a VisionTransformer,
    vit: &'a ViTConfig,
    train: ImageData<'a>,
    val: ImageData<'a>,
    device: &'a Device,
    seed: u64,
) -> Task<'a> {
    Task {
        base,
        vit,
        train,
        val,
        device,
        seed,
    }
}
