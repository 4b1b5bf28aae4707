//! What the report's tests share: a two-seed summary whose numbers are easy to check by hand,
//! and readers for the tables of a rendered report.

#![allow(dead_code)] // each test binary uses a part

use std::collections::BTreeMap;

use report::{Cost, IdMetrics, MethodResult, OodMetrics, ShiftMetrics, Summary};

/// One run; the metrics not under test are derived from `acc` so each is distinct.
pub fn run(
    name: &str,
    kind: &str,
    members: usize,
    seed: u64,
    acc: f64,
    nll: f64,
    params: u64,
) -> MethodResult {
    let ood = |auroc: f64| OodMetrics {
        auroc,
        aupr_in: auroc - 0.05,
        aupr_out: auroc - 0.1,
        fpr95: 1.0 - auroc,
        // A sampling spread that differs by run: a tenth of the NLL.
        auroc_bootstrap: Some(uq_metrics::AurocBootstrap {
            std: nll / 10.0,
            ci_low: auroc - nll / 5.0,
            ci_high: auroc + nll / 5.0,
            resamples: 200,
        }),
    };
    let shift = |accuracy: f64| ShiftMetrics {
        accuracy,
        nll: nll + 0.5,
        ece: 0.1,
    };
    MethodResult {
        name: name.into(),
        method: name.into(),
        variant: None,
        kind: kind.into(),
        members,
        seed,
        id: IdMetrics {
            accuracy: acc,
            nll,
            brier: 0.2,
            ece: 0.03,
            aece: 0.04,
            classwise_ece: 0.02,
            aurc: 0.05,
            augrc: 0.01,
        },
        ood: BTreeMap::from([
            ("kmnist".into(), ood(acc)),
            ("mnist".into(), ood(acc - 0.1)),
        ]),
        ood_scores: BTreeMap::new(),
        ood_groups: BTreeMap::new(),
        shift: BTreeMap::from([
            ("gaussian_noise-1".into(), shift(acc - 0.2)),
            ("gaussian_noise-3".into(), shift(acc - 0.4)),
        ]),
        cost: Cost {
            params,
            flops: 10 * params,
            latency_ms_b1: params as f64 / 100.0,
            latency_ms: params as f64 / 10.0,
            latency_ms_b1_q1: params as f64 / 110.0,
            latency_ms_b1_q3: params as f64 / 90.0,
            latency_ms_q1: params as f64 / 11.0,
            latency_ms_q3: params as f64 / 9.0,
            peak_mem_bytes: Some(params << 20),
            latency_x_single: None,
            latency_b1_x_single: None,
        },
        extra: report::Extra::default(),
        temperature: None,
        diversity: None,
        conformal: None,
        train_cost: Some(report::TrainCost {
            wall_seconds: params as f64 / 50.0,
            steps: params,
            samples: 32 * params,
            stored_bytes: 4 * params,
            trainings: members,
            trainable_params: params,
            ..Default::default()
        }),
    }
}

/// 2 seeds × 3 methods; seed 2 lists them in another order.
pub fn summary() -> Summary {
    let mut ens = run("ens", "deep_ensemble", 3, 1, 0.85, 0.4, 300);
    ens.extra.build_seconds = Some(12.5);
    Summary {
        experiment: "exp".into(),
        seeds: vec![1, 2],
        methods: vec![
            run("single", "single", 1, 1, 0.80, 0.5, 100),
            ens,
            run("mcd", "mc_dropout", 4, 1, 0.82, 0.45, 100),
            run("mcd", "mc_dropout", 4, 2, 0.84, 0.47, 100),
            run("ens", "deep_ensemble", 3, 2, 0.95, 0.3, 300),
            run("single", "single", 1, 2, 0.90, 0.7, 100),
        ],
        comparisons: vec![],
        retained: Vec::new(),
        claims: Vec::new(),
        ood_scores: vec![],
        provenance: None,
        baseline: None,
        reference: None,
    }
}

/// The lines of a markdown section, from its heading to the next heading of any level.
pub fn section<'a>(md: &'a str, heading: &str) -> Vec<&'a str> {
    let start = md
        .find(&format!("{heading}\n"))
        .unwrap_or_else(|| panic!("no section {heading:?} in\n{md}"));
    md[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .collect()
}

/// The cells of the row of `method` in a section's table, name included.
pub fn row(md: &str, heading: &str, method: &str) -> Vec<String> {
    let prefix = format!("| {method} |");
    let line = section(md, heading)
        .into_iter()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no row {method:?} under {heading:?} in\n{md}"));
    line.trim_matches('|')
        .split(" | ")
        .map(|c| c.trim().to_string())
        .collect()
}

/// `summary()` with a HetDPT entry on each of `seeds`, its outputs the fewest fields a run has
/// written (the predictor figure draws the grids of such entries).
pub fn with_hetdpt(seeds: &[u64]) -> Summary {
    let mut s = summary();
    for &seed in seeds {
        let mut r = run("hetdpt", "hetdpt", 1, seed, 0.8, 0.5, 60);
        r.extra = serde_json::from_value(serde_json::json!({"hetdpt": {
            "choice": {"n_attn": 1, "n_act": 1, "predicted_accuracy": 0.7, "speedup": 1.2,
                       "reason": "r"},
            "r_squared": 0.9, "speedup": 1.2, "removal": {"attn": [true], "act": [true]},
        }}))
        .unwrap();
        s.methods.push(r);
    }
    s
}
