//! Paired comparisons over seeds: every method against a reference method, per metric, as the
//! mean per-seed difference with its 95% Student-t interval. Seeds pair the runs because a seed
//! fixes the data split, the base model and every random choice, which all methods share.

use crate::results::{Comparison, MethodResult};

/// A compared metric: its name, whether higher is better, and how to read it from one run.
type Metric = (String, bool, Box<dyn Fn(&MethodResult) -> Option<f64>>);

/// The metrics compared: the ID ones, each OOD set's AUROC, and the shifted sets' mean accuracy,
/// NLL and ECE (when the runs have them).
fn metrics(runs: &[MethodResult]) -> Vec<Metric> {
    let mut out: Vec<Metric> = vec![
        (
            "id.accuracy".into(),
            true,
            Box::new(|r| Some(r.id.accuracy)),
        ),
        ("id.nll".into(), false, Box::new(|r| Some(r.id.nll))),
        ("id.brier".into(), false, Box::new(|r| Some(r.id.brier))),
        ("id.ece".into(), false, Box::new(|r| Some(r.id.ece))),
        ("id.aurc".into(), false, Box::new(|r| Some(r.id.aurc))),
    ];
    let sets: std::collections::BTreeSet<&String> =
        runs.iter().flat_map(|r| r.ood.keys()).collect();
    for set in sets {
        let key = set.clone();
        out.push((
            format!("ood.{set}.auroc"),
            true,
            Box::new(move |r| r.ood.get(&key).map(|m| m.auroc)),
        ));
    }
    if runs.iter().any(|r| !r.shift.is_empty()) {
        out.push((
            "shift.mean.accuracy".into(),
            true,
            Box::new(|r| r.mean_shift(|m| m.accuracy)),
        ));
        out.push((
            "shift.mean.nll".into(),
            false,
            Box::new(|r| r.mean_shift(|m| m.nll)),
        ));
        out.push((
            "shift.mean.ece".into(),
            false,
            Box::new(|r| r.mean_shift(|m| m.ece)),
        ));
    }
    out
}

/// Every method (by name, in order of appearance) other than `reference` against it, on the
/// seeds both have; nothing when no method is called `reference`.
pub fn compare(runs: &[MethodResult], reference: &str) -> Vec<Comparison> {
    let reference_runs: Vec<&MethodResult> = runs.iter().filter(|r| r.name == reference).collect();
    if reference_runs.is_empty() {
        return Vec::new();
    }
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        if r.name != reference && !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    let metrics = metrics(runs);
    let mut out = Vec::new();
    for name in names {
        // Seed-paired runs of the method and the reference.
        let pairs: Vec<(&MethodResult, &MethodResult)> = (runs.iter())
            .filter(|r| r.name == name)
            .filter_map(|r| {
                (reference_runs.iter())
                    .find(|b| b.seed == r.seed)
                    .map(|b| (r, *b))
            })
            .collect();
        for (metric, higher_is_better, value) in &metrics {
            let (method, base): (Vec<f64>, Vec<f64>) = (pairs.iter())
                .filter_map(|(r, base)| Some((value(r)?, value(base)?)))
                .unzip();
            if method.is_empty() {
                continue;
            }
            let interval = uq_metrics::paired(&method, &base).expect("one value per pair");
            out.push(Comparison {
                method: name.to_string(),
                reference: reference.to_string(),
                metric: metric.clone(),
                mean_diff: interval.mean,
                ci_low: interval.ci_low,
                ci_high: interval.ci_high,
                n_seeds: interval.n,
                higher_is_better: *higher_is_better,
            });
        }
    }
    out
}

/// `win` when the interval lies on the better side of 0, `loss` on the worse side, `tie` when it
/// contains 0, `n/a` when it is undefined (one seed).
pub fn verdict(c: &Comparison) -> &'static str {
    if !(c.ci_low.is_finite() && c.ci_high.is_finite()) {
        return "n/a";
    }
    let better = if c.higher_is_better {
        c.ci_low > 0.0
    } else {
        c.ci_high < 0.0
    };
    let worse = if c.higher_is_better {
        c.ci_high < 0.0
    } else {
        c.ci_low > 0.0
    };
    match (better, worse) {
        (true, _) => "win",
        (_, true) => "loss",
        _ => "tie",
    }
}
