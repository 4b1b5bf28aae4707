//! Paired comparisons over seeds: every method against a reference method, per metric, as the
//! mean per-seed difference with its 95% Student-t interval, decided at the metric's equivalence
//! margin (better, worse, equivalent, inconclusive), raw and after Holm's adjustment over every
//! test of the run. Seeds pair the runs because a seed fixes the data split, the base model and
//! every random choice, which all methods share.

use std::collections::BTreeMap;

use crate::summary::{Comparison, Decision, Family, MethodResult};

/// Equivalence margins by metric, in the metric's units: a difference within ± the margin is
/// too small to matter (docs/methods.md gives the reasons). `ood.auroc` covers every OOD set
/// and their mean (`ood.mean.auroc`);
/// `[eval] margins` overrides any of them, and `ood.<set>.auroc` one set.
pub const DEFAULT_MARGINS: [(&str, f64); 9] = [
    ("id.accuracy", 0.005),
    ("id.nll", 0.02),
    ("id.brier", 0.005),
    ("id.ece", 0.01),
    ("id.aurc", 0.005),
    ("ood.auroc", 0.01),
    ("shift.mean.accuracy", 0.005),
    ("shift.mean.nll", 0.02),
    ("shift.mean.ece", 0.01),
];

/// The margin of `metric`: its own entry in `margins`, else its family's (`ood.auroc` for
/// `ood.<set>.auroc`), else the default.
pub fn margin(margins: &BTreeMap<String, f64>, metric: &str) -> f64 {
    let family = match metric.strip_prefix("ood.") {
        Some(rest) if rest.ends_with(".auroc") => "ood.auroc",
        _ => metric,
    };
    (margins.get(metric).or_else(|| margins.get(family)).copied())
        .or_else(|| {
            (DEFAULT_MARGINS.iter())
                .find(|(k, _)| *k == family)
                .map(|(_, m)| *m)
        })
        .expect("every compared metric has a default margin")
}

/// A compared metric: its name, whether higher is better, and how to read it from one run.
pub(crate) type Metric = (String, bool, Box<dyn Fn(&MethodResult) -> Option<f64>>);

/// The metrics compared: the ID ones, each OOD set's AUROC and (with several sets) their mean, and the shifted sets' mean accuracy,
/// NLL and ECE (when the runs have them).
pub(crate) fn metrics(runs: &[MethodResult]) -> Vec<Metric> {
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
    // The mean over the sets only when there are several: one set's mean repeats its test.
    if sets.len() > 1 {
        out.push((
            "ood.mean.auroc".into(),
            true,
            Box::new(|r| {
                let n = r.ood.len() as f64;
                (n > 0.0).then(|| r.ood.values().map(|m| m.auroc).sum::<f64>() / n)
            }),
        ));
    }
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
/// seeds both have, each decided at its [`margin`]; nothing when no method is called
/// `reference`.
pub fn compare(
    runs: &[MethodResult],
    reference: &str,
    margins: &BTreeMap<String, f64>,
) -> Vec<Comparison> {
    if !runs.iter().any(|r| r.name == reference) {
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
        for (metric, higher_is_better, value) in &metrics {
            let [method, base] = aligned(runs, [name, reference], value);
            if method.is_empty() {
                continue;
            }
            let interval = uq_metrics::paired(&method, &base).expect("one value per pair");
            let diffs: Vec<f64> = method.iter().zip(&base).map(|(a, b)| a - b).collect();
            let margin = margin(margins, metric);
            let test = uq_metrics::paired_test(&diffs, margin).expect("margins are validated");
            out.push(Comparison {
                method: name.to_string(),
                reference: reference.to_string(),
                metric: metric.clone(),
                mean_diff: interval.mean,
                ci_low: interval.ci_low,
                ci_high: interval.ci_high,
                n_seeds: interval.n,
                higher_is_better: *higher_is_better,
                decision: Decision {
                    margin,
                    p_difference: test.p_difference,
                    p_equivalence: test.p_equivalence,
                    ci90_low: test.ci90_low,
                    ci90_high: test.ci90_high,
                    verdict: uq_metrics::decide(
                        interval.mean,
                        test.p_difference,
                        test.p_equivalence,
                        *higher_is_better,
                    ),
                    detectable: test.detectable,
                    seeds_needed: test.seeds_needed,
                    ..Decision::default()
                },
                family: Family::Exploratory,
            });
        }
    }
    adjust(&mut out);
    out
}

/// The values of the methods `names` on every seed all of them have a value on (in the
/// order of the first's runs), one list per method: paired by seed.
pub(crate) fn aligned<const N: usize>(
    runs: &[MethodResult],
    names: [&str; N],
    value: &dyn Fn(&MethodResult) -> Option<f64>,
) -> [Vec<f64>; N] {
    let mut out: [Vec<f64>; N] = std::array::from_fn(|_| Vec::new());
    for first in runs.iter().filter(|r| r.name == names[0]) {
        let on_seed = names.map(|n| {
            (runs.iter())
                .find(|r| r.name == n && r.seed == first.seed)
                .and_then(value)
        });
        if on_seed.iter().all(Option::is_some) {
            for (list, v) in out.iter_mut().zip(on_seed) {
                list.push(v.expect("checked above"));
            }
        }
    }
    out
}

/// Holm's adjustment over the family of every test in `comparisons` (two per comparison: the
/// difference and the equivalence), and the verdicts it leaves.
fn adjust(comparisons: &mut [Comparison]) {
    let p: Vec<f64> = (comparisons.iter())
        .flat_map(|c| [c.decision.p_difference, c.decision.p_equivalence])
        .collect();
    let adjusted = uq_metrics::holm(&p);
    for (c, pair) in comparisons.iter_mut().zip(adjusted.chunks(2)) {
        let d = &mut c.decision;
        (d.p_difference_holm, d.p_equivalence_holm) = (pair[0], pair[1]);
        d.verdict_holm = uq_metrics::decide(
            c.mean_diff,
            d.p_difference_holm,
            d.p_equivalence_holm,
            c.higher_is_better,
        );
    }
}
