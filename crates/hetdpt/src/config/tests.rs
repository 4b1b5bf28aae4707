use super::*;

fn field_of(e: HetDptError) -> String {
    match e {
        HetDptError::Config { field, .. } => field,
        // The seam's error, naming the criterion, is the source of the field's.
        HetDptError::Hydra {
            what,
            source: hydra::HydraError::Pruning(pruning::PruningError::Unknown(_)),
        } => what,
        other => panic!("expected a config error, got {other}"),
    }
}

#[test]
fn toml_with_defaults_and_budget_table() {
    let cfg: HetDptConfig = toml::from_str(
        "degree = 1\nspeed = \"flops\"\nbudget = { max_accuracy_drop = 0.02 }\n\
         [width]\nmlp_keep = 0.5\nheads = { strategy = \"magnitude\", keep = 2 }",
    )
    .unwrap();
    assert_eq!(cfg.degree, 1);
    assert_eq!(cfg.speed, Speed::Flops);
    assert_eq!(cfg.budget, Budget::MaxAccuracyDrop(0.02));
    let width = cfg.width.as_ref().unwrap();
    assert_eq!(width.mlp_keep, 0.5);
    let heads = width.heads.as_ref().unwrap();
    assert_eq!((heads.strategy.as_str(), heads.keep), ("magnitude", 2));
    assert_eq!(heads.calibration_images, 256);
    assert_eq!(
        cfg.check_heads(1)
            .unwrap_err()
            .to_string()
            .split(' ')
            .next(),
        Some("hetdpt.width.heads.keep")
    );
    assert_eq!(
        cfg.importance_steps,
        HetDptConfig::default().importance_steps
    );
    cfg.check().unwrap();
    let unknown = toml::from_str::<HetDptConfig>("degre = 2");
    assert!(unknown.unwrap_err().to_string().contains("degre"));
}

#[test]
fn check_names_the_field() {
    let bad = |f: fn(&mut HetDptConfig)| {
        let mut cfg = HetDptConfig::default();
        f(&mut cfg);
        field_of(cfg.check().unwrap_err())
    };
    assert_eq!(bad(|c| c.degree = 0), "hetdpt.degree");
    assert_eq!(bad(|c| c.lr = f64::NAN), "hetdpt.lr");
    assert_eq!(bad(|c| c.alpha = 1.5), "hetdpt.alpha");
    assert_eq!(bad(|c| c.importance_init = 0.0), "hetdpt.importance_init");
    assert_eq!(
        bad(|c| c.budget = Budget::MinSpeedup(0.5)),
        "hetdpt.budget.min_speedup"
    );
    fn width(mlp_keep: f64, strategy: &str) -> Option<WidthConfig> {
        Some(WidthConfig {
            mlp_keep,
            heads: Some(HeadWidth {
                strategy: strategy.into(),
                params: toml::Table::new(),
                keep: 1,
                calibration_images: 8,
            }),
        })
    }
    assert_eq!(
        bad(|c| c.width = width(0.0, "taylor")),
        "hetdpt.width.mlp_keep"
    );
    assert_eq!(
        bad(|c| c.width = width(0.5, "tayl0r")),
        "hetdpt.width.heads.strategy"
    );
}

#[test]
fn grid_defaults_to_half_depth_and_rejects_too_few_values() {
    let cfg = HetDptConfig::default();
    assert_eq!(cfg.grid(4).unwrap(), (2, 2));
    assert_eq!(cfg.grid(7).unwrap(), (3, 3));
    assert_eq!(field_of(cfg.grid(2).unwrap_err()), "hetdpt.max_attn");
    let cfg = HetDptConfig {
        max_act: Some(5),
        ..HetDptConfig::default()
    };
    assert_eq!(field_of(cfg.grid(4).unwrap_err()), "hetdpt.max_act");
}

#[test]
fn measured_values_spread_over_the_grid() {
    // Default degree 2: four values, or every value of a short axis.
    let cfg = HetDptConfig::default();
    assert_eq!(cfg.measured_values(6), [0, 2, 4, 6]);
    assert_eq!(cfg.measured_values(2), [0, 1, 2]);
    assert_eq!(cfg.measured_values(9), [0, 3, 6, 9]);
    let three = HetDptConfig {
        map_values: Some(3),
        ..HetDptConfig::default()
    };
    assert_eq!(three.measured_values(5), [0, 3, 5]);
    assert_eq!(three.measured_values(12), [0, 6, 12]);
    let two = HetDptConfig {
        map_values: Some(2),
        ..HetDptConfig::default()
    };
    assert_eq!(field_of(two.check().unwrap_err()), "hetdpt.map_values");
    assert!(HetDptConfig { degree: 1, ..two }.check().is_ok());
}
