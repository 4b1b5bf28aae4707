//! The figures as the report draws them, read back from the SVG: categorical axes, legends
//! outside the data, rates in percent, the Pareto front, small multiples.

mod common;

use std::collections::BTreeMap;

use common::{summary, with_hetdpt};
use report::{OodMetrics, Summary};

/// The figure `file` of `s` as drawn by the report (no curves).
fn figure_svg(s: &Summary, file: &str) -> String {
    let rendered = report::render(s, &report::RunCurves::default(), "msp").unwrap();
    let f = rendered.figures.into_iter().find(|f| f.file == file);
    f.unwrap_or_else(|| panic!("no {file}")).svg
}

fn svg_texts(svg: &str) -> Vec<(f64, String)> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    (doc.descendants())
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| {
            let x = n.attribute("x")?.parse().ok()?;
            Some((x, n.text()?.trim().to_string()))
        })
        .collect()
}

/// The right ends of the figure's x axes (horizontal black lines of two points, the longest
/// of each panel).
fn axis_ends(svg: &str) -> Vec<f64> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    (doc.descendants())
        .filter(|n| n.has_tag_name("polyline") && n.attribute("stroke") == Some("#000000"))
        .filter_map(|n| {
            let xy: Vec<(f64, f64)> = (n.attribute("points")?.split_whitespace())
                .filter_map(|p| p.split_once(','))
                .map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap()))
                .collect();
            match xy[..] {
                [a, b] if a.1 == b.1 && (b.0 - a.0).abs() > 100.0 => Some(a.0.max(b.0)),
                _ => None,
            }
        })
        .collect()
}

/// `summary()` scored by msp and energy on `sets`, each method's AUROC per set and score
/// distinct; the `far` group is the mean over the sets.
fn scored(sets: &[&str]) -> Summary {
    let mut s = summary();
    s.ood_scores = vec!["msp".into(), "relative_mahalanobis".into()];
    for (k, r) in s.methods.iter_mut().enumerate() {
        let base = r.ood["kmnist"].clone();
        let mut far = BTreeMap::new();
        for (i, score) in ["msp", "relative_mahalanobis"].iter().enumerate() {
            let by_set: BTreeMap<String, OodMetrics> = (sets.iter().enumerate())
                .map(|(j, set)| {
                    let auroc = 0.7 + 0.01 * (k + 3 * i + 7 * j) as f64;
                    (
                        set.to_string(),
                        OodMetrics {
                            auroc,
                            ..base.clone()
                        },
                    )
                })
                .collect();
            let names: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let metrics: Vec<&OodMetrics> = by_set.values().collect();
            let group = report::summary::GroupMetrics::mean(&names, &metrics);
            far.insert(
                score.to_string(),
                BTreeMap::from([("far".to_string(), group)]),
            );
            r.ood_scores.insert(score.to_string(), by_set);
        }
        r.ood_groups = far;
    }
    s
}

#[test]
fn ood_scores_are_categories_in_percent_with_the_legend_outside() {
    let svg = figure_svg(&scored(&["kmnist"]), "fig-ood-scores.svg");
    let texts = svg_texts(&svg);
    let words: Vec<&str> = (texts.iter())
        .map(|(_, t)| t.as_str())
        .filter(|t| t.parse::<f64>().is_err())
        .collect();
    // One panel: the `far` group of one set is that set. The x axis names the scores, and
    // the only other words are the axis titles and the methods' legend entries.
    assert_eq!(
        words,
        [
            "test vs kmnist = far OOD (mean)",
            "AUROC (%) ↑",
            "OOD score",
            "msp",
            "RMDS",
            "single",
            "ens",
            "mcd"
        ]
    );
    // Values from 70 to 79 %: the axis starts near them, not at 0, and reads in %.
    let ticks: Vec<f64> = texts.iter().filter_map(|(_, t)| t.parse().ok()).collect();
    let (lo, hi) = ticks
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    assert!(lo >= 60.0 && hi <= 90.0, "y ticks {ticks:?}");
    let right = axis_ends(&svg)[0];
    for method in ["single", "ens", "mcd"] {
        let (x, _) = texts.iter().find(|(_, t)| t == method).unwrap();
        assert!(
            *x > right,
            "{method}'s entry at {x}, the plot area ends at {right}"
        );
    }
}

#[test]
fn ood_score_panels_that_differ_are_all_drawn() {
    let svg = figure_svg(&scored(&["kmnist", "mnist"]), "fig-ood-scores.svg");
    let titles: Vec<String> = (svg_texts(&svg).into_iter())
        .map(|(_, t)| t)
        .filter(|t| t.starts_with("test vs") || t.contains("OOD (mean)"))
        .collect();
    assert_eq!(
        titles,
        ["test vs kmnist", "test vs mnist", "far OOD (mean)"]
    );
    // One legend for the three panels.
    let entries = svg_texts(&svg)
        .into_iter()
        .filter(|(_, t)| t == "ens")
        .count();
    assert_eq!(entries, 1);
}

#[test]
fn the_pareto_plot_names_its_points_in_percent_beside_a_legend() {
    let svg = figure_svg(&summary(), "fig-pareto.svg");
    let texts = svg_texts(&svg);
    // Each method is named beside its point in both panels, and once in the legend.
    for method in ["single", "ens", "mcd"] {
        let n = texts.iter().filter(|(_, t)| t == method).count();
        assert_eq!(n, 3, "{method}");
    }
    let right = axis_ends(&svg).into_iter().fold(0.0, f64::max);
    let legend = texts.iter().find(|(_, t)| t == "Pareto front").unwrap().0;
    assert!(
        legend > right,
        "the legend at {legend}, the plot areas end by {right}"
    );
    // OOD AUROC (mean of 80-95 % and 70-85 %) on a % axis: its ticks, left of the first
    // panel's y axis (at x 65; the x axis' 0 sits under it), read 60-100.
    let left_ticks: Vec<f64> = (texts.iter())
        .filter(|(x, _)| *x < 60.0)
        .filter_map(|(_, t)| t.parse().ok())
        .collect();
    assert!(
        !left_ticks.is_empty() && left_ticks.iter().all(|v| (60.0..=100.0).contains(v)),
        "{left_ticks:?}"
    );
}

/// Curves holding a pruning sweep of `single` (ratio 0 to 0.9, accuracy and AUROC falling)
/// and a HetDPT predictor grid per seed in `seeds`.
fn swept(seeds: &[u64]) -> report::RunCurves {
    let rows: Vec<serde_json::Value> = (0..10)
        .map(|i| {
            let r = i as f64 / 10.0;
            serde_json::json!([
                r,
                16.0 - i as f64,
                0.9 - r / 2.0,
                0.4 + r,
                0.03 + r / 10.0,
                0.8 - r / 4.0
            ])
        })
        .collect();
    let predictors: Vec<serde_json::Value> = (seeds.iter())
        .map(|&seed| {
            serde_json::json!({
                "method": "hetdpt", "seed": seed,
                "predicted": [[0, 0, 0.85], [1, 0, 0.84], [0, 1, 0.83], [1, 1, 0.8]],
                "measured": [[0, 0, 0.85, 0.85, 0.84], [1, 1, 0.79, 0.8, 0.81]],
                "chosen": [1, 0, 0.84, 0.845], "base_accuracy": 0.86,
                "loo_r_squared": 0.7, "loo_max_abs_error": 0.02,
            })
        })
        .collect();
    serde_json::from_value(serde_json::json!({
        "methods": [],
        "sweeps": [{
            "method": "single", "seed": 1, "name": "pruning", "places": 2,
            "columns": ["ratio", "heads_kept", "clean_acc", "clean_nll", "clean_ece",
                        "kmnist_auroc"],
            "rows": rows,
        }],
        "predictors": predictors,
    }))
    .unwrap()
}

#[test]
fn the_pruning_sweep_says_what_is_pruned_in_percent() {
    let rendered = report::render(&summary(), &swept(&[1]), "msp").unwrap();
    let svg = &rendered
        .figures
        .iter()
        .find(|f| f.file == "fig-pruning.svg")
        .unwrap()
        .svg;
    let texts = svg_texts(svg);
    let label = "attention heads pruned (%)";
    assert!(texts.iter().filter(|(_, t)| t == label).count() >= 4);
    assert!(!texts.iter().any(|(_, t)| t == "ratio"));
    // The x ticks run to 80 (ratios to 0.9), accuracy (90 % down to 45 %) and AUROC in %.
    let numbers: Vec<f64> = texts.iter().filter_map(|(_, t)| t.parse().ok()).collect();
    let eighty = numbers.iter().filter(|&&v| v == 80.0).count();
    assert!(
        eighty >= 4,
        "an x tick at 80 in each of 4 panels: {numbers:?}"
    );
    assert!(texts.iter().any(|(_, t)| t == "accuracy (%) ↑"));
    // One legend, right of every panel.
    let right = axis_ends(svg).into_iter().fold(0.0, f64::max);
    let entries: Vec<f64> = (texts.iter())
        .filter(|(_, t)| t == "single")
        .map(|t| t.0)
        .collect();
    assert_eq!(entries.len(), 1);
    assert!(entries[0] > right, "{} inside {right}", entries[0]);
}

#[test]
fn ten_predictor_seeds_are_small_multiples() {
    let seeds: Vec<u64> = (0..10).collect();
    let rendered = report::render(&with_hetdpt(&seeds), &swept(&seeds), "msp").unwrap();
    let svg = &rendered
        .figures
        .iter()
        .find(|f| f.file == "fig-hetdpt-map.svg")
        .unwrap()
        .svg;
    let doc = roxmltree::Document::parse(svg).unwrap();
    let height: f64 = doc
        .root_element()
        .attribute("height")
        .unwrap()
        .parse()
        .unwrap();
    // Ten seed panels and one held-out panel, five to a row: three rows, not twenty panels.
    assert!(height <= 3.0 * 240.0, "{height} px tall");
    let texts = svg_texts(svg);
    let titles = |prefix: &str| texts.iter().filter(|(_, t)| t.starts_with(prefix)).count();
    assert_eq!(titles("hetdpt, seed "), 10);
    assert_eq!(titles("held out: R² 0.70"), 1);
    assert!(texts.iter().any(|(_, t)| t == "validation accuracy (%)"));
    assert_eq!(
        texts.iter().filter(|(_, t)| t == "unpruned").count(),
        1,
        "one legend"
    );
}

/// Curves of every method of `summary()`: two filled reliability bins, a risk-coverage curve
/// and a ROC curve against `kmnist`.
fn rated() -> report::RunCurves {
    let method = |name: &str, seed: u64| {
        serde_json::json!({
            "name": name, "seed": seed,
            "reliability": [
                {"lo": 0.5, "hi": 0.75, "count": 10, "confidence": 0.6, "accuracy": 0.55},
                {"lo": 0.75, "hi": 1.0, "count": 30, "confidence": 0.9, "accuracy": 0.85},
            ],
            "risk_coverage": [[0.1, 0.02], [0.5, 0.08], [1.0, 0.15]],
            "ood": {"kmnist": {"roc": [[0.0, 0.0], [0.1, 0.6], [1.0, 1.0]],
                               "edges": [0.0, 0.5, 1.0], "id_counts": [8, 2],
                               "ood_counts": [3, 7]}},
        })
    };
    let methods: Vec<serde_json::Value> = ["single", "ens", "mcd"]
        .iter()
        .flat_map(|m| [method(m, 1), method(m, 2)])
        .collect();
    serde_json::from_value(serde_json::json!({"methods": methods})).unwrap()
}

#[test]
fn rates_are_drawn_in_percent() {
    let rendered = report::render(&summary(), &rated(), "msp").unwrap();
    for (file, label) in [
        ("fig-reliability.svg", "confidence (%)"),
        ("fig-risk-coverage.svg", "risk (error rate among kept, %)"),
        ("fig-roc.svg", "true-positive rate (% of OOD flagged)"),
    ] {
        let svg = &rendered
            .figures
            .iter()
            .find(|f| f.file == file)
            .unwrap()
            .svg;
        let texts = svg_texts(svg);
        assert!(texts.iter().any(|(_, t)| t == label), "{file}");
        let numbers: Vec<f64> = texts.iter().filter_map(|(_, t)| t.parse().ok()).collect();
        // Axes from 0 to 100, ticks every 20: no tick a fraction.
        assert!(
            numbers.contains(&100.0) || numbers.contains(&80.0),
            "{file}: {numbers:?}"
        );
        assert!(
            numbers.iter().all(|v| *v == v.round()),
            "{file}: {numbers:?}"
        );
    }
    // One legend for the reliability panels, right of them all.
    let svg = &(rendered.figures.iter())
        .find(|f| f.file == "fig-reliability.svg")
        .unwrap()
        .svg;
    let texts = svg_texts(svg);
    let entries: Vec<f64> = (texts.iter())
        .filter(|(_, t)| t == "gap to confidence")
        .map(|t| t.0)
        .collect();
    let right = axis_ends(svg).into_iter().fold(0.0, f64::max);
    assert!(
        entries.len() == 1 && entries[0] > right,
        "{entries:?} vs {right}"
    );
}
