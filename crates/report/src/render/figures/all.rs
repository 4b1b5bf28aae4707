//! Every figure of the run, in report order.

use plots::PlotError;

use super::file::FigureFile;
use super::inputs::Inputs;
use super::{calibration, cost, ood, predictor, scores, sweep, training};

/// Every figure of the run, in report order.
pub fn figures(inputs: &Inputs<'_>) -> Result<Vec<FigureFile>, PlotError> {
    let mut out = vec![
        calibration::reliability(inputs)?,
        calibration::risk_coverage(inputs)?,
        ood::histograms(inputs)?,
        ood::roc(inputs)?,
    ];
    out.extend(scores::auroc_by_score(inputs)?);
    out.push(cost::pareto(inputs)?);
    out.extend(sweep::sweeps(inputs)?);
    out.extend(predictor::predictor(inputs)?);
    out.push(training::training(inputs)?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::inputs::KNOWN;
    use super::super::notes::NO_CURVES;
    use super::*;
    use crate::curves::RunCurves;
    use crate::summary::{MethodResult, Summary};

    /// An entry with no OOD sets and, when `latency` is `None`, no timing (`null` reads NaN).
    fn entry(name: &str, seed: u64, latency: Option<f64>) -> MethodResult {
        serde_json::from_value(serde_json::json!({
            "name": name, "kind": "single", "members": 1, "seed": seed,
            "id": {"accuracy": 0.8, "nll": 0.5, "brier": 0.3, "ece": 0.05, "aece": 0.06,
                   "aurc": 0.1},
            "ood": {}, "shift": {},
            "cost": {"params": 10, "flops": 100, "latency_ms_b1": null, "latency_ms": latency,
                     "peak_mem_bytes": null},
        }))
        .unwrap()
    }

    fn notes(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        (doc.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .filter(|t| t.starts_with("no data: "))
            .collect()
    }

    #[test]
    fn missing_curves_and_values_are_said_not_failed() {
        let summary = Summary {
            experiment: "x".into(),
            seeds: vec![0, 1],
            methods: vec![
                entry("a", 0, None),
                entry("a", 1, Some(2.0)),
                entry("b", 0, None),
            ],
            comparisons: Vec::new(),
            retained: Vec::new(),
            claims: Vec::new(),
            ood_scores: Vec::new(),
            provenance: None,
            baseline: None,
            reference: None,
        };
        let curves = RunCurves::default();
        let out = figures(&Inputs {
            summary: &summary,
            curves: &curves,
            score: "msp",
        })
        .unwrap();
        let files: Vec<&str> = out.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "fig-reliability.svg",
                "fig-risk-coverage.svg",
                "fig-ood-histograms.svg",
                "fig-roc.svg",
                "fig-pareto.svg",
                "fig-training.svg"
            ]
        );
        let by = |file: &str| notes(&out.iter().find(|f| f.file == file).unwrap().svg);
        assert_eq!(
            by("fig-reliability.svg"),
            vec![format!("no data: {NO_CURVES}"); 2]
        );
        assert_eq!(
            by("fig-ood-histograms.svg"),
            vec![format!("no data: {NO_CURVES}"); 2]
        );
        assert_eq!(by("fig-roc.svg"), ["no data: no OOD set in this run"]);
        // No OOD set, and a latency missing in some seed of each entry: nothing to place.
        assert_eq!(by("fig-pareto.svg").len(), 2);
        assert_eq!(by("fig-training.svg").len(), 2);
    }

    #[test]
    fn every_method_has_its_own_colour_and_keeps_it() {
        let mut names: Vec<String> = KNOWN.iter().map(|s| s.to_string()).collect();
        names.extend(["my_method".to_string(), "other".to_string()]);
        let mut methods: Vec<MethodResult> = Vec::new();
        for name in &names {
            methods.push(entry(name, 0, Some(1.0)));
            let mut ts = entry(&format!("{name}+ts"), 0, Some(1.0));
            ts.method = name.clone();
            ts.variant = Some(serde_json::from_value(serde_json::json!("ts")).unwrap());
            methods.push(ts);
        }
        let summary = |methods: Vec<MethodResult>| Summary {
            experiment: "x".into(),
            seeds: vec![0],
            methods,
            comparisons: Vec::new(),
            retained: Vec::new(),
            claims: Vec::new(),
            ood_scores: Vec::new(),
            provenance: None,
            baseline: None,
            reference: None,
        };
        let curves = RunCurves::default();
        let all = summary(methods.clone());
        let inputs = Inputs {
            summary: &all,
            curves: &curves,
            score: "msp",
        };
        let entries = inputs.entries();
        let colour = |name: &str| entries.iter().find(|e| e.name == name).unwrap().colour;
        let mut distinct: Vec<usize> = names.iter().map(|n| colour(n)).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 13, "13 methods, 13 colours");
        assert!(
            names
                .iter()
                .all(|n| colour(&format!("{n}+ts")) == colour(n))
        );
        // A run of a few of them gives each the colour it has above.
        let few = summary(
            (methods.into_iter())
                .filter(|r| ["hetdpt", "other", "single"].contains(&r.name.as_str()))
                .collect(),
        );
        let inputs = Inputs {
            summary: &few,
            ..inputs
        };
        for e in inputs.entries() {
            if e.name != "other" {
                assert_eq!(e.colour, colour(&e.name), "{}", e.name);
            }
        }
    }
}
