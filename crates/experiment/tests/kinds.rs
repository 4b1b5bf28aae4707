//! Every registered method kind runs end to end through the runner on a very small model, and
//! the resolved config it writes parses back to the same methods.

#[macro_use]
mod common;

use std::path::Path;

use common::bundled;
use experiment::{ExperimentConfig, KINDS, run};
use report::Summary;
use report::outputs::{Frozen, LoraOutputs};
use report::{MethodOutputs, RunCurves};

const BASE: &str = concat!(
    r#"
[experiment]
name = "kinds"
seeds = [1]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.05
ood = ["mnist_small"]
# An output score and every feature-space detector: each method must give its features.
ood_score = ["msp", "mahalanobis", "relative_mahalanobis", "vim", "knn"]
shift = [{ corruption = "contrast", severities = [3] }]
train_limit = 200
test_limit = 60
eval_batch_size = 32

"#,
    tiny_vit!(2),
    r#"
[train]
epochs = 1
batch_size = 50
"#
);

/// The methods run here, as (kind, parameters); every registered kind must appear (the test
/// checks coverage).
const METHODS: &[(&str, &str)] = &[
    ("single", ""),
    ("deep_ensemble", "members = 2"),
    ("mc_dropout", "samples = 2"),
    ("lora_ensemble", "members = 2\nrank = 2"),
    ("batch_ensemble", "members = 2"),
    ("mimo", "members = 2"),
    ("packed_ensemble", "members = 2"),
    (
        "hydra",
        "name = \"hydra_taylor\"\nmembers = 2\nkeep = 1\nbootstrap = false\nanalysis = true\ntrain = { epochs = 1 }",
    ),
    (
        "hydra",
        "name = \"hydra_circuit\"\nmembers = 2\nimportance = \"circuit\"\nimportance_params = { objective = \"avg\", samples = 8 }\ncalibration_samples = 8\ntrain = { epochs = 0 }",
    ),
    // The worked example of docs/extending.md, used from TOML by its registry name.
    (
        "hydra",
        "name = \"hydra_activation\"\nmembers = 2\nimportance = \"activation\"\ntrain = { epochs = 0 }",
    ),
    (
        "pruned",
        "name = \"pruned_heads\"\ncriterion = \"magnitude\"\nunit = \"head\"\nratio = 0.5\nsweep = [0.5]",
    ),
    (
        "hetdpt",
        "importance_steps = 2\nimportance_images = 50\nmap_images = 50\ndegree = 1\nspeed = \"flops\"\nbudget = { min_speedup = 1.1 }\nfinetune_epochs = 1\nfinetune_images = 50",
    ),
];

#[test]
fn every_kind_runs_and_its_resolved_config_parses_back() {
    for kind in KINDS.entries() {
        assert!(
            METHODS.iter().any(|(k, _)| *k == kind.name),
            "kind `{}` is not exercised by this test: add it to METHODS",
            kind.name
        );
    }
    let mut text = BASE.to_string();
    for (kind, params) in METHODS {
        text += &format!("\n[[method]]\nkind = \"{kind}\"\n{params}\n");
    }
    let config = ExperimentConfig::parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config, &bundled(dir.path())).unwrap();
    let names: Vec<_> = out
        .summary
        .methods
        .iter()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(names.len(), METHODS.len(), "{names:?}");
    for (result, spec) in out.summary.methods.iter().zip(&config.methods) {
        assert_eq!(result.kind, spec.kind);
        assert_eq!(result.members, spec.members(), "{}", spec.name);
        let id = &result.id;
        assert!(
            (0.0..=1.0).contains(&id.accuracy) && id.nll.is_finite() && id.ece.is_finite(),
            "{}: {id:?}",
            spec.name
        );
        assert!(
            result.cost.params > 0 && result.cost.flops > 0,
            "{}",
            spec.name
        );
        assert_eq!(result.ood_scores.len(), 5, "{}", spec.name);
        for (score, per_set) in &result.ood_scores {
            let auroc = per_set["mnist_small"].auroc;
            assert!(
                (0.0..=1.0).contains(&auroc),
                "{} {score}: {auroc}",
                spec.name
            );
        }
    }
    // Training cost: the ensembles trained from scratch stand on their own training alone (one,
    // of the base recipe's 4 steps here); Hydra on the base model and its members' fine-tunes.
    let cost = |name: &str| {
        (out.summary.methods.iter())
            .find(|m| m.name == name)
            .and_then(|m| m.train_cost)
            .unwrap()
    };
    let single = cost("single");
    for name in ["batch_ensemble", "mimo", "packed_ensemble"] {
        let c = cost(name);
        assert_eq!((c.trainings, c.steps), (1, single.steps), "{name}: {c:?}");
    }
    assert_eq!(
        cost("hydra_taylor").trainings,
        1 + 2,
        "base model and two members"
    );
    // HetDPT: the base model and its own trainings (gate scores, MAP fine-tunes, the final
    // fine-tune), as its report counts them.
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.dir.join("hetdpt-seed1-hetdpt.json")).unwrap(),
    )
    .unwrap();
    let own = &report["training"];
    let (hetdpt, own_trainings) = (cost("hetdpt"), own["trainings"].as_u64().unwrap());
    assert!(
        own_trainings >= 3,
        "gates, a MAP point or more, the fine-tune: {own}"
    );
    assert_eq!(hetdpt.trainings as u64, 1 + own_trainings);
    assert_eq!(hetdpt.steps, single.steps + own["steps"].as_u64().unwrap());
    assert_eq!(
        hetdpt.samples,
        single.samples + own["samples"].as_u64().unwrap()
    );
    // HetDPT's typed outputs are its report's choice and budget.
    let het = (out.summary.methods.iter())
        .find(|m| m.name == "hetdpt")
        .unwrap();
    let Some(MethodOutputs::HetDpt(h)) = &het.extra.outputs else {
        panic!("hetdpt hands back HetDPT's outputs");
    };
    assert_eq!(
        (h.choice.n_attn as u64, h.choice.n_act as u64, h.budget_met),
        (
            report["choice"]["n_attn"].as_u64().unwrap(),
            report["choice"]["n_act"].as_u64().unwrap(),
            report["budget_met"].as_bool()
        )
    );
    // On a ViT trained from scratch LoRA-Ensemble can only freeze the seed's base model.
    let lora = (out.summary.methods.iter()).find(|m| m.kind == "lora_ensemble");
    assert_eq!(
        lora.unwrap().extra.outputs,
        Some(MethodOutputs::LoraEnsemble(LoraOutputs {
            frozen: Frozen::Base
        }))
    );
    // Method-specific results: head scores, the pruning analysis, the HetDPT report.
    let Some(MethodOutputs::Hydra(hydra)) = &out.summary.methods[7].extra.outputs else {
        panic!("hydra_taylor hands back Hydra's outputs");
    };
    assert_eq!((hydra.head_scores.len(), hydra.kept_heads.len()), (2, 2));
    // Temperature 0 (the default) keeps each block's top heads: a top-k share of exactly 1.
    assert_eq!(hydra.topk_share, Some(1.0));
    // Without bootstrap the whole-set ranking is the members' own, and Taylor is the criterion:
    // both shares 1 for each member; the two members keep the same heads (Jaccard 1).
    assert_eq!(hydra.topk_share_whole, Some(vec![1.0, 1.0]));
    assert_eq!(hydra.topk_share_taylor, Some(vec![1.0, 1.0]));
    assert_eq!(hydra.head_jaccard, Some(vec![1.0]));
    let analysis = std::fs::read_to_string(out.dir.join("hydra_taylor-seed1-pruning.csv")).unwrap();
    assert_eq!(
        analysis.lines().count(),
        11,
        "a header and ratios 0.0 to 0.9"
    );
    assert!(out.dir.join("hetdpt-seed1-hetdpt.json").is_file());
    figures_match_the_summary(&out.dir, &out.summary);
    let written = std::fs::read_to_string(out.dir.join("config.toml")).unwrap();
    let again = ExperimentConfig::parse(&written).unwrap();
    let names = |c: &ExperimentConfig| {
        c.methods
            .iter()
            .map(|m| (m.name.clone(), m.kind, m.params.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&again), names(&config));
}

/// The run's figures are valid SVG, linked from report.md and inline in report.html, and the
/// curves they are drawn from agree with the summary's metrics, recomputed from the curves.
fn figures_match_the_summary(dir: &Path, summary: &Summary) {
    let figures = [
        "fig-reliability.svg",
        "fig-risk-coverage.svg",
        "fig-ood-histograms.svg",
        "fig-roc.svg",
        "fig-ood-scores.svg",
        "fig-pareto.svg",
        "fig-pruning.svg",
        "fig-pruned.svg",
        "fig-hetdpt-map.svg",
        "fig-training.svg",
    ];
    let markdown = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for file in figures {
        let svg = std::fs::read_to_string(dir.join(file)).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{file}: {e}"));
        let texts: Vec<&str> = (doc.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::trim))
            .collect();
        assert!(
            !texts.iter().any(|t| t.starts_with("no data")),
            "{file}: {texts:?}"
        );
        assert!(
            markdown.contains(&format!("]({file})")),
            "report.md does not link {file}"
        );
        if file == "fig-roc.svg" {
            // One legend entry per method (none is calibrated here), with its AUROC.
            let legend = texts.iter().filter(|t| t.contains("(AUROC ")).count();
            assert_eq!(legend, summary.methods.len(), "{texts:?}");
            assert!(texts.contains(&"false-positive rate (% of ID flagged as OOD)"));
        }
        if file == "fig-ood-scores.svg" {
            // Each score named above its bars (detectors by their short names), each method in
            // the legend.
            for label in ["msp", "MDS", "RMDS", "ViM", "KNN"] {
                assert!(texts.contains(&label), "{label}: {texts:?}");
            }
            for m in &summary.methods {
                assert!(texts.contains(&m.name.as_str()), "{}: {texts:?}", m.name);
            }
        }
        if file == "fig-pruned.svg" {
            assert!(
                texts.contains(&"parameters kept (% of the base model)"),
                "{texts:?}"
            );
        }
        if file == "fig-hetdpt-map.svg" {
            for legend in ["measured (fitted to)", "fit without the point", "unpruned"] {
                assert!(texts.contains(&legend), "{texts:?}");
            }
            assert!(texts.iter().any(|t| t.starts_with("chosen (")), "{texts:?}");
        }
        if file == "fig-reliability.svg" {
            for m in &summary.methods {
                assert!(texts.contains(&format!("{}: ECE {:.4}", m.name, m.id.ece).as_str()));
            }
        }
    }
    assert_eq!(html.matches("<svg").count(), figures.len());
    assert!(html.contains("<table>") && !html.contains("<img"));

    let curves = RunCurves::read(dir).unwrap();
    assert_eq!(curves.methods.len(), summary.methods.len());
    for (m, c) in summary.methods.iter().zip(&curves.methods) {
        assert_eq!((c.name.as_str(), c.seed), (m.name.as_str(), m.seed));
        // ECE from the stored bins.
        let n: usize = c.reliability.iter().map(|b| b.count).sum();
        let ece: f64 = (c.reliability.iter())
            .filter(|b| b.count > 0)
            .map(|b| {
                b.count as f64 / n as f64 * (b.accuracy.unwrap() - b.confidence.unwrap()).abs()
            })
            .sum();
        assert!(
            (ece - m.id.ece).abs() < 1e-9,
            "{}: {ece} vs {}",
            m.name,
            m.id.ece
        );
        // Keeping every sample, the risk is the error rate.
        let (coverage, risk) = *c.risk_coverage.last().unwrap();
        assert_eq!(coverage, 1.0);
        assert!((risk - (1.0 - m.id.accuracy)).abs() < 1e-12);
        // The ROC curve is short enough here to be stored whole: its area is the AUROC.
        let roc = &c.ood["mnist_small"].roc;
        assert!(roc.len() < experiment::eval::MAX_POINTS);
        let area: f64 = roc
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * (w[1].1 + w[0].1) / 2.0)
            .sum();
        assert!(
            (area - m.ood["mnist_small"].auroc).abs() < 1e-12,
            "{}",
            m.name
        );
        let hist = &c.ood["mnist_small"];
        assert_eq!(hist.id_counts.iter().sum::<u64>() as usize, n);
        assert_eq!(hist.edges.len(), hist.id_counts.len() + 1);
    }
    // Every training's epochs (one here), the base model's among them.
    let base = curves
        .training
        .iter()
        .find(|l| l.label == "seed 1 model 1")
        .unwrap();
    assert_eq!(base.epochs.len(), 1);
    // Measured on the validation split after the epoch (this cache is fresh).
    let val = base.epochs[0];
    assert!(
        val.val_loss.is_some_and(|l| l.is_finite() && l > 0.0),
        "{val:?}"
    );
    assert!(
        val.val_accuracy.is_some_and(|a| (0.0..=1.0).contains(&a)),
        "{val:?}"
    );
    assert!(
        curves
            .training
            .iter()
            .all(|l| l.epochs.iter().all(|e| e.loss.is_finite()))
    );
    // The pruning sweep: ratios 0.0 to 0.9 in the stored table, as in pruning.csv.
    let sweep = &curves.sweeps[0];
    assert_eq!(
        (sweep.method.as_str(), sweep.name.as_str()),
        ("hydra_taylor", "pruning")
    );
    let ratios = sweep.column("ratio").unwrap();
    assert_eq!(ratios, (0..10).map(|k| k as f64 / 10.0).collect::<Vec<_>>());
    predictor_matches_the_hetdpt_report(dir, &curves);
}

/// The MAP figure's numbers are hetdpt.json's: the measured points, the choice, and
/// predictions equal to the stored polynomial evaluated here at (n_a / L, n_g / L).
fn predictor_matches_the_hetdpt_report(dir: &Path, curves: &RunCurves) {
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("hetdpt-seed1-hetdpt.json")).unwrap(),
    )
    .unwrap();
    let [grid] = curves.predictors.as_slice() else {
        panic!("one HetDPT method and seed: {:?}", curves.predictors);
    };
    assert_eq!((grid.method.as_str(), grid.seed), ("hetdpt", 1));
    let l = report["layers"].as_f64().unwrap();
    let poly = &report["fit"]["polynomial"];
    let predict = |a: usize, g: usize| -> f64 {
        let terms = poly["terms"].as_array().unwrap();
        let coefficients = poly["coefficients"].as_array().unwrap();
        (terms.iter().zip(coefficients))
            .map(|(t, c)| {
                let (i, j) = (t[0].as_i64().unwrap() as i32, t[1].as_i64().unwrap() as i32);
                c.as_f64().unwrap() * (a as f64 / l).powi(i) * (g as f64 / l).powi(j)
            })
            .sum()
    };
    let layers = l as usize;
    assert!(!grid.predicted.is_empty() && grid.predicted.len() <= (layers + 1) * (layers + 1));
    // The grid's predictions are the polynomial's, capped at the unpruned model's accuracy.
    let cap = report["prediction_cap"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&cap));
    for &(a, g, p) in &grid.predicted {
        assert!((p - predict(a, g).min(cap)).abs() < 1e-12, "({a}, {g})");
    }
    let points = report["points"].as_array().unwrap();
    assert_eq!(grid.measured.len(), points.len());
    for (m, p) in grid.measured.iter().zip(points) {
        assert_eq!(m.0 as u64, p["n_attn"].as_u64().unwrap());
        assert_eq!(m.1 as u64, p["n_act"].as_u64().unwrap());
        assert_eq!(m.2, p["accuracy"].as_f64().unwrap());
        assert!((m.3 - predict(m.0, m.1).min(cap)).abs() < 1e-12);
        assert!(m.4.is_finite() || report["fit"]["loo_r_squared"].is_null());
    }
    let choice = &report["choice"];
    assert_eq!(grid.chosen.0 as u64, choice["n_attn"].as_u64().unwrap());
    assert_eq!(grid.chosen.1 as u64, choice["n_act"].as_u64().unwrap());
    assert_eq!(
        grid.chosen.3,
        report["pruned"]["accuracy"].as_f64().unwrap()
    );
}
