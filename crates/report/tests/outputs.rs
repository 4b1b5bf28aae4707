//! A method's own outputs, typed: HetDPT's through `summary.json` and back into the report (its
//! missed-budget line and its predictor figure, both chosen by the variant); summaries written
//! while `extra` was free-form and entries carried `calibration` / `precision` read into the new
//! types with every value; the baseline the summary records moves the headline's gains.

mod common;

use std::path::PathBuf;

use common::{run, summary};
use report::curves::PredictorGrid;
use report::outputs::{
    Frozen, HetDptBudget, HetDptChoice, HetDptOutputs, HetDptRemoval, LoraOutputs,
};
use report::{MethodOutputs, MethodResult, RunCurves, Summary, Variant, render_markdown};
use serde_json::Value;

/// A fresh, empty directory per test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uqformer-outputs-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn hetdpt_outputs(met: bool, achieved: f64) -> HetDptOutputs {
    HetDptOutputs {
        choice: HetDptChoice {
            n_attn: 3,
            n_act: 2,
            predicted_accuracy: 0.78,
            speedup: achieved,
            reason: "highest predicted accuracy".into(),
            searched: Some(16),
            measured_point: Some(true),
            checked: Vec::new(),
        },
        r_squared: 0.97,
        loo_r_squared: Some(0.94),
        loo_max_abs_error: Some(0.08),
        speedup: 1.25,
        budget: Some(HetDptBudget::MinSpeedup(1.3)),
        budget_met: Some(met),
        achieved_speedup: Some(achieved),
        prediction_cap: Some(0.8),
        added_points: Some(1),
        removal: HetDptRemoval {
            attn: vec![false, true],
            act: vec![true, false],
        },
    }
}

fn hetdpt_entry(seed: u64, outputs: Option<HetDptOutputs>) -> MethodResult {
    let mut r = run("hetdpt", "hetdpt", 1, seed, 0.8, 0.5, 60);
    r.extra.outputs = outputs.map(MethodOutputs::HetDpt);
    r
}

fn grid(seed: u64) -> PredictorGrid {
    PredictorGrid {
        method: "hetdpt".into(),
        seed,
        predicted: vec![(0, 0, 0.8), (1, 0, 0.79), (0, 1, 0.78), (1, 1, 0.7)],
        measured: vec![(0, 0, 0.8, 0.8, 0.79), (1, 1, 0.71, 0.7, 0.69)],
        chosen: (1, 1, 0.7, 0.72),
        base_accuracy: 0.8,
        loo_r_squared: 0.9,
        loo_max_abs_error: 0.02,
    }
}

/// `summary` and `curves` written as a run, then read back and drawn (`uqformer report`).
fn written_and_redrawn(test: &str, s: &Summary, curves: &RunCurves) -> (Summary, report::Rendered) {
    let root = temp_dir(test);
    let files = [(report::CURVES_FILE.to_string(), curves.to_json().unwrap())];
    let dir = report::write_run(&root, "[experiment]\nname = \"exp\"\n", s, "", &files).unwrap();
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let back: Summary = serde_json::from_str(&text).unwrap();
    let rendered = report::redraw(&dir).unwrap();
    let _ = std::fs::remove_dir_all(&root);
    (back, rendered)
}

#[test]
fn hetdpt_outputs_round_trip_and_draw_their_line_and_figure() {
    let mut s = summary();
    s.methods
        .push(hetdpt_entry(1, Some(hetdpt_outputs(false, 1.2))));
    s.methods
        .push(hetdpt_entry(2, Some(hetdpt_outputs(true, 1.35))));
    let curves = RunCurves {
        predictors: vec![grid(1), grid(2)],
        ..RunCurves::default()
    };
    let (back, rendered) = written_and_redrawn("hetdpt", &s, &curves);
    let extras = |s: &Summary| {
        s.methods
            .iter()
            .map(|r| r.extra.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(extras(&back), extras(&s));
    let lines: Vec<&str> = (rendered.markdown.lines())
        .filter(|l| l.contains("missed its budget"))
        .collect();
    assert_eq!(
        lines,
        ["**hetdpt missed its budget on seed 1**: `min_speedup = 1.3`, achieved speed-up 1.20x."]
    );
    let figure = rendered
        .figures
        .iter()
        .find(|f| f.file == "fig-hetdpt-map.svg");
    assert!(figure.is_some_and(|f| f.svg.contains("held out")));
}

/// The grids alone draw nothing: the figure is HetDPT's, chosen by its entries' outputs.
#[test]
fn predictor_grids_without_hetdpt_outputs_draw_no_figure() {
    let mut s = summary();
    s.methods.push(hetdpt_entry(1, None));
    let curves = RunCurves {
        predictors: vec![grid(1)],
        ..RunCurves::default()
    };
    let rendered = report::render(&s, &curves, "msp").unwrap();
    assert!(
        rendered
            .figures
            .iter()
            .all(|f| f.file != "fig-hetdpt-map.svg")
    );
}

/// Every number of `old`'s entries, by its path.
fn leaves(v: &Value, path: String, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Object(m) => m
            .iter()
            .for_each(|(k, v)| leaves(v, format!("{path}/{k}"), out)),
        Value::Array(a) => {
            (a.iter().enumerate()).for_each(|(i, v)| leaves(v, format!("{path}/{i}"), out))
        }
        Value::Number(n) => out.push((path, n.as_f64().unwrap())),
        _ => {}
    }
}

/// Entries of `results/quickstart/20261204-022237` (one seed: `single`, `single+ts`,
/// `lora_ensemble`, `hydra_taylor` with its head lists cut to two members, `hetdpt`) and the
/// `single+bf16` of `results/bf16_fashion_mnist/20261202-151346`, as those builds wrote them.
const OLD: &str = include_str!("fixtures/old_summary.json");

#[test]
fn an_old_summary_reads_into_the_typed_outputs_with_every_value() {
    let raw: Value = serde_json::from_str(OLD).unwrap();
    let s: Summary = serde_json::from_str(OLD).unwrap();
    let by_name = |n: &str| s.methods.iter().find(|r| r.name == n).unwrap();
    // `calibration` and `precision` became the variant.
    let ts = by_name("single+ts");
    assert_eq!(
        (ts.method.as_str(), ts.variant),
        ("single", Some(Variant::Ts))
    );
    let low = by_name("single+bf16");
    assert_eq!(
        (low.method.as_str(), low.variant),
        ("single", Some(Variant::Bf16))
    );
    // Each method's outputs are its variant, with the values written.
    let raw_of = |n: &str| {
        (raw["methods"].as_array().unwrap().iter())
            .find(|m| m["name"] == n)
            .unwrap()
    };
    assert_eq!(raw_of("lora_ensemble")["extra"]["frozen"], "base");
    assert_eq!(
        by_name("lora_ensemble").extra.outputs,
        Some(MethodOutputs::LoraEnsemble(LoraOutputs {
            frozen: Frozen::Base
        }))
    );
    let Some(MethodOutputs::Hydra(h)) = &by_name("hydra_taylor").extra.outputs else {
        panic!("hydra_taylor reads as Hydra's outputs");
    };
    let hydra = &raw_of("hydra_taylor")["extra"];
    assert_eq!(
        Some(h.head_jaccard_mean.unwrap()),
        hydra["head_jaccard_mean"].as_f64()
    );
    assert_eq!(
        serde_json::to_value(&h.kept_heads).unwrap(),
        hydra["kept_heads"]
    );
    let Some(MethodOutputs::HetDpt(d)) = &by_name("hetdpt").extra.outputs else {
        panic!("hetdpt reads as HetDPT's outputs");
    };
    let het = &raw_of("hetdpt")["extra"]["hetdpt"];
    assert_eq!(
        d.choice.n_attn as u64,
        het["choice"]["n_attn"].as_u64().unwrap()
    );
    assert_eq!(Some(d.r_squared), het["r_squared"].as_f64());
    assert_eq!(d.achieved_speedup, het["achieved_speedup"].as_f64());
    assert_eq!(
        by_name("single").extra.build_seconds,
        raw_of("single")["extra"]["build_seconds"].as_f64()
    );
    assert!(
        s.methods
            .iter()
            .all(|r| r.extra.outputs.is_some() == (r.kind != "single"))
    );
    // Written again, every number of every entry is where it was, unchanged.
    let mut before = Vec::new();
    leaves(&raw["methods"], String::new(), &mut before);
    let mut after = Vec::new();
    leaves(
        &serde_json::to_value(&s).unwrap()["methods"],
        String::new(),
        &mut after,
    );
    let after: std::collections::BTreeMap<String, f64> = after.into_iter().collect();
    let moved: Vec<&(String, f64)> = before
        .iter()
        .filter(|(p, v)| after.get(p) != Some(v))
        .collect();
    assert!(moved.is_empty(), "{moved:?}");
    assert_eq!(
        before.len(),
        431,
        "the fixture's numbers, every one checked"
    );
}

#[test]
fn an_unknown_or_mixed_extra_is_refused_not_dropped() {
    let entry = |extra: Value| {
        let mut m: Value = serde_json::from_str::<Value>(OLD).unwrap()["methods"][0].clone();
        m["extra"] = extra;
        serde_json::from_value::<Summary>(serde_json::json!({
            "experiment": "x", "seeds": [0], "methods": [m],
        }))
        .unwrap_err()
        .to_string()
    };
    let renamed = entry(serde_json::json!({"build_secs": 1.0}));
    assert!(renamed.contains("build_secs"), "{renamed}");
    let mixed = entry(serde_json::json!({"frozen": "base", "head_scores": [], "kept_heads": []}));
    assert!(mixed.contains("more than one method"), "{mixed}");
}

/// The headline's sentence on the reference: its gains against the baseline.
fn gains(s: &Summary) -> String {
    let md = render_markdown(s);
    let line = md.lines().find(|l| l.contains("The reference, `ens`"));
    let line = line.unwrap_or_else(|| panic!("{md}"));
    line[line.find("The reference").unwrap()..].to_string()
}

#[test]
fn the_recorded_baseline_moves_the_headline_gains() {
    let mut s = summary();
    s.reference = Some("ens".into());
    // single: accuracy 80% and 90% over the seeds, mcd 82% and 84%, ens 85% and 95%.
    assert!(
        gains(&s).contains("+5.00 points of accuracy"),
        "{}",
        gains(&s)
    );
    assert!(gains(&s).contains("against `single`"), "{}", gains(&s));
    s.baseline = Some("mcd".into());
    assert!(
        gains(&s).contains("+7.00 points of accuracy"),
        "{}",
        gains(&s)
    );
    assert!(gains(&s).contains("against `mcd`"), "{}", gains(&s));
    // The cost columns follow it too.
    assert!(render_markdown(&s).contains("×mcd"));
}
