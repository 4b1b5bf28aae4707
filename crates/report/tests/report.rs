//! Results writing: the run directory contract, `summary.json` keys and round trip, and the numbers
//! the markdown and terminal reports show (checked against values computed by hand).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

mod common;

use common::{row, run, section, summary};
use report::{Summary, render_markdown, render_terminal, write_run};
use serde_json::Value;

const CONFIG: &str = "[experiment]\nname = \"exp\"\nseeds = [1, 2]\n";

/// A fresh, empty directory per test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("uqformer-report-{test}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

fn run_id(dir: &Path) -> String {
    dir.file_name()
        .expect("run dir has a name")
        .to_string_lossy()
        .into_owned()
}

/// Every file below `dir` whose name contains `.tmp`.
fn leftover_tmp(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("dir entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().contains(".tmp"))
        {
            found.push(path.clone());
        }
        if path.is_dir() && !path.is_symlink() {
            found.extend(leftover_tmp(&path));
        }
    }
    found
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .expect("a JSON object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
    names.iter().copied().collect()
}

#[test]
fn write_run_writes_the_three_files_and_points_latest() {
    let root = temp_dir("files");
    let s = summary();
    let dir = write_run(&root, CONFIG, &s, &render_markdown(&s), &[]).expect("write_run");
    let id = run_id(&dir);
    assert_eq!(dir, root.join("exp").join(&id));
    let (date, time) = id.split_once('-').expect("YYYYMMDD-HHMMSS");
    assert!(date.len() == 8 && time.len() == 6, "run id {id}");
    assert!(
        id.chars().all(|c| c.is_ascii_digit() || c == '-'),
        "run id {id}"
    );

    assert_eq!(fs::read_to_string(dir.join("config.toml")).unwrap(), CONFIG);
    assert_eq!(
        fs::read_to_string(dir.join("report.md")).unwrap(),
        render_markdown(&s)
    );
    let back: Summary =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(back, s);

    let exp = root.join("exp");
    assert_eq!(
        fs::read_link(exp.join("latest")).unwrap(),
        PathBuf::from(&id)
    );
    assert_eq!(
        fs::read_to_string(exp.join("latest/config.toml")).unwrap(),
        CONFIG
    );
    assert_eq!(fs::read_to_string(exp.join("LATEST")).unwrap(), id);
    assert_eq!(leftover_tmp(&root), Vec::<PathBuf>::new());
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn second_run_gets_a_new_id_and_moves_latest() {
    let root = temp_dir("second");
    let first =
        run_id(&write_run(&root, CONFIG, &summary(), &render_markdown(&summary()), &[]).unwrap());
    let second = run_id(
        &write_run(
            &root,
            "# changed\n",
            &summary(),
            &render_markdown(&summary()),
            &[],
        )
        .unwrap(),
    );
    assert_ne!(first, second);
    let exp = root.join("exp");
    assert!(
        exp.join(&first).join("summary.json").is_file(),
        "first run kept"
    );
    assert_eq!(
        fs::read_link(exp.join("latest")).unwrap(),
        PathBuf::from(&second)
    );
    assert_eq!(
        fs::read_to_string(exp.join("latest/config.toml")).unwrap(),
        "# changed\n"
    );
    assert_eq!(fs::read_to_string(exp.join("LATEST")).unwrap(), second);
    assert_eq!(leftover_tmp(&root), Vec::<PathBuf>::new());
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn summary_json_has_exactly_the_contract_keys() {
    let root = temp_dir("keys");
    let mut s = summary();
    s.methods[2].cost.peak_mem_bytes = None;
    let dir = write_run(&root, CONFIG, &s, &render_markdown(&s), &[]).unwrap();
    let v: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();

    assert_eq!(keys(&v), set(&["experiment", "seeds", "methods"]));
    assert_eq!(v["experiment"], "exp");
    assert_eq!(v["seeds"], serde_json::json!([1, 2]));
    let methods = v["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 6);
    let base = [
        "name", "method", "kind", "members", "seed", "id", "ood", "shift", "cost",
    ];
    for (m, src) in methods.iter().zip(&s.methods) {
        let mut want = set(&base);
        if !src.extra.is_empty() {
            want.insert("extra");
        }
        if src.train_cost.is_some() {
            want.insert("train_cost");
            assert_eq!(
                keys(&m["train_cost"]),
                set(&[
                    "wall_seconds",
                    "steps",
                    "samples",
                    "stored_bytes",
                    "trainings",
                    "trainable_params"
                ])
            );
        }
        assert_eq!(keys(m), want);
        assert_eq!(
            keys(&m["id"]),
            set(&[
                "accuracy",
                "nll",
                "brier",
                "ece",
                "aece",
                "classwise_ece",
                "aurc",
                "augrc"
            ])
        );
        assert_eq!(keys(&m["ood"]), set(&["kmnist", "mnist"]));
        for o in m["ood"].as_object().unwrap().values() {
            let contract = ["auroc", "aupr_in", "aupr_out", "fpr95", "auroc_bootstrap"];
            assert_eq!(keys(o), set(&contract));
            assert_eq!(
                keys(&o["auroc_bootstrap"]),
                set(&["std", "ci_low", "ci_high", "resamples"])
            );
        }
        assert_eq!(
            keys(&m["shift"]),
            set(&["gaussian_noise-1", "gaussian_noise-3"])
        );
        for o in m["shift"].as_object().unwrap().values() {
            assert_eq!(keys(o), set(&["accuracy", "nll", "ece"]));
        }
        assert_eq!(
            keys(&m["cost"]),
            set(&[
                "params",
                "flops",
                "latency_ms_b1",
                "latency_ms",
                "latency_ms_b1_q1",
                "latency_ms_b1_q3",
                "latency_ms_q1",
                "latency_ms_q3",
                "peak_mem_bytes"
            ])
        );
    }
    assert_eq!(methods[1]["extra"]["build_seconds"], 12.5);
    assert_eq!(methods[1]["cost"]["params"], 300);
    assert!(
        methods[2]["cost"]["peak_mem_bytes"].is_null(),
        "unmeasured memory is null"
    );
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn non_finite_values_are_null_in_json_and_read_back_as_nan() {
    let root = temp_dir("nonfinite");
    let mut s = summary();
    s.methods[1].id.nll = f64::NAN;
    s.methods[1].cost.latency_ms = f64::INFINITY;
    let dir = write_run(&root, CONFIG, &s, &render_markdown(&s), &[]).unwrap();
    let text = fs::read_to_string(dir.join("summary.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v["methods"][1]["id"]["nll"].is_null());
    assert!(v["methods"][1]["cost"]["latency_ms"].is_null());

    let back: Summary = serde_json::from_str(&text).expect("nulls read back");
    assert!(back.methods[1].id.nll.is_nan());
    assert!(back.methods[1].cost.latency_ms.is_nan());
    assert_eq!(back.methods[1].id.accuracy, s.methods[1].id.accuracy);
    assert_eq!(back.methods[0], s.methods[0]);
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn markdown_cells_are_mean_and_sample_std_over_seeds() {
    let md = render_markdown(&summary());
    // single: accuracy 0.80, 0.90 -> mean 85.00 %, std sqrt(2 * 0.05^2 / 1) = 7.07 %;
    // NLL 0.5, 0.7 -> 0.6000 ± 0.1414.
    let single = row(&md, "## In-distribution", "single");
    assert_eq!(
        single,
        [
            "single",
            "85.00 ± 7.07",
            "0.6000 ± 0.1414",
            "0.2000 ± 0.0000",
            "0.0300 ± 0.0000",
            "0.0400 ± 0.0000",
            "0.0200 ± 0.0000",
            "0.0500 ± 0.0000",
            "0.0100 ± 0.0000"
        ]
    );
    // ens: accuracy 0.85, 0.95 -> 90.00 ± 7.07; mcd: 0.82, 0.84 -> 83.00 ± 1.41.
    assert_eq!(row(&md, "## In-distribution", "ens")[1], "90.00 ± 7.07");
    assert_eq!(row(&md, "## In-distribution", "mcd")[1], "83.00 ± 1.41");

    // OOD `mnist` for single: AUROC = acc - 0.1 -> 0.70, 0.80; FPR95 = 1 - AUROC -> 0.30, 0.20.
    assert_eq!(
        row(&md, "### mnist", "single"),
        [
            "single",
            "75.00 ± 7.07",
            "70.00 ± 7.07",
            "65.00 ± 7.07",
            "25.00 ± 7.07"
        ]
    );

    // Shift mean accuracy per seed for single: (0.6 + 0.4) / 2 = 0.5 and (0.7 + 0.5) / 2 = 0.6.
    let shift = section(&md, "## Distribution shift");
    assert!(
        shift.contains(&"| mean | single | 55.00 ± 7.07 | 1.1000 ± 0.1414 | 0.1000 ± 0.0000 |"),
        "{md}"
    );
    assert!(
        shift.contains(
            &"| gaussian_noise-3 | ens | 50.00 ± 7.07 | 0.8500 ± 0.0707 | 0.1000 ± 0.0000 |"
        ),
        "{md}"
    );
}

#[test]
fn cost_table_shows_ratios_to_the_single_method() {
    let md = render_markdown(&summary());
    // params, ×, FLOPs, ×, latency b1, ×, latency, ×, peak MiB, ×
    let ens = row(&md, "## Cost", "ens");
    assert_eq!(
        ens,
        [
            "ens",
            "300",
            "3.00×",
            "3.00k",
            "3.00×",
            "3.0000 ± 0.0000",
            "3.00×",
            "30.0000 ± 0.0000",
            "3.00×",
            "300.00 ± 0.00",
            "3.00×"
        ]
    );
    assert_eq!(row(&md, "## Cost", "single")[2], "1.00×");
    assert_eq!(row(&md, "## Cost", "mcd")[2], "1.00×");

    // Paired per-round ratios, where measured, are what the latency ×single shows: their mean
    // over seeds, not the ratio of mean latencies (3.00× here).
    let mut paired = summary();
    for m in paired.methods.iter_mut().filter(|m| m.name == "ens") {
        m.cost.latency_x_single = Some(if m.seed == 1 { 2.5 } else { 2.7 });
        m.cost.latency_b1_x_single = Some(2.0);
    }
    let md = render_markdown(&paired);
    let ens = row(&md, "## Cost", "ens");
    assert_eq!((ens[6].as_str(), ens[8].as_str()), ("2.00×", "2.60×"));
    assert!(
        render_terminal(&paired)
            .lines()
            .any(|l| l.starts_with("ens") && l.ends_with(" 2.00"))
    );

    let mut no_single = summary();
    no_single.methods.retain(|m| m.kind != "single");
    let md = render_markdown(&no_single);
    assert!(
        !md.contains("×single |"),
        "no ratio columns without a single method:\n{md}"
    );
    assert_eq!(
        row(&md, "## Cost", "ens"),
        [
            "ens",
            "300",
            "3.00k",
            "3.0000 ± 0.0000",
            "30.0000 ± 0.0000",
            "300.00 ± 0.00"
        ]
    );
}

#[test]
fn one_seed_shows_the_mean_alone() {
    let mut s = summary();
    s.seeds = vec![1];
    s.methods.retain(|m| m.seed == 1);
    let md = render_markdown(&s);
    assert_eq!(
        row(&md, "## In-distribution", "single")[1..3],
        ["80.00", "0.5000"]
    );
    assert!(
        md.lines()
            .filter(|l| l.starts_with('|'))
            .all(|l| !l.contains('±')),
        "{md}"
    );
    // With comparisons of one seed, the verdicts are one line saying how to get them, not
    // tables of n/a, and there is no paired-comparison section.
    s.comparisons = report::compare::compare(&s.methods, "ens", &BTreeMap::new());
    assert!(!s.comparisons.is_empty());
    let md = render_markdown(&s);
    let headline = section(&md, "## Headline").join("\n");
    assert!(
        headline.contains("One seed: no comparison can be decided") && headline.contains("--seeds"),
        "{headline}"
    );
    // No verdict marks, no n/a verdicts, no paired section.
    assert!(!headline.contains(['▲', '▼', '≈', '?']), "{headline}");
    assert!(
        !md.contains("n/a / n/a") && !md.contains("## Paired comparisons"),
        "{md}"
    );
}

#[test]
fn non_finite_or_missing_values_render_as_na() {
    let mut s = summary();
    s.methods[1].id.nll = f64::NAN; // ens, seed 1
    s.methods[4].cost.latency_ms_b1 = f64::INFINITY; // ens, seed 2
    s.methods[5].cost.peak_mem_bytes = None; // single, seed 2
    s.methods[3].ood.remove("mnist"); // mcd, seed 2
    let md = render_markdown(&s);
    assert_eq!(row(&md, "## In-distribution", "ens")[2], "n/a");
    assert_eq!(
        row(&md, "## In-distribution", "ens")[1],
        "90.00 ± 7.07",
        "other cells unaffected"
    );
    assert_eq!(
        row(&md, "### mnist", "mcd")[1..],
        ["n/a", "n/a", "n/a", "n/a"]
    );
    let ens = row(&md, "## Cost", "ens");
    assert_eq!(ens[5..7], ["n/a", "n/a"], "latency b1 and its ratio");
    assert_eq!(ens[10], "n/a", "ratio to an unmeasured baseline");
    assert_eq!(row(&md, "## Cost", "single")[9], "n/a");

    let term = render_terminal(&s);
    for text in [&md, &term] {
        let lower = text.to_lowercase();
        assert!(!lower.contains("nan") && !lower.contains("inf"), "{text}");
    }
    assert!(term.contains("n/a"), "{term}");
}

#[test]
fn methods_follow_the_first_seed_order() {
    let mut s = summary();
    s.methods
        .push(run("late", "mc_dropout", 2, 2, 0.5, 1.0, 100));
    let md = render_markdown(&s);
    let order: Vec<String> = section(&md, "## In-distribution")
        .iter()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Method"))
        .map(|l| {
            l.split(" | ")
                .next()
                .unwrap()
                .trim_start_matches("| ")
                .to_string()
        })
        .collect();
    assert_eq!(order, ["single", "ens", "mcd", "late"]);
    // `late` has one seed only: its mean alone.
    assert_eq!(row(&md, "## In-distribution", "late")[1], "50.00");
    // The Seeds column counts them (seed 2 alone is one seed, not "2").
    assert_eq!(
        row(&md, "## Methods", "late"),
        ["late", "mc_dropout", "2", "1", "none"]
    );
    assert_eq!(
        row(&md, "## Methods", "ens"),
        ["ens", "deep_ensemble", "3", "2", "none"]
    );
}

#[test]
fn terminal_table_is_fixed_width_with_headline_means() {
    let term = render_terminal(&summary());
    let lines: Vec<&str> = term.lines().collect();
    assert_eq!(lines[0], "exp: means over 2 seed(s)");
    let header: Vec<&str> = lines[1]
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        header,
        [
            "method",
            "acc%",
            "NLL",
            "ECE",
            "AUROC% kmnist",
            "AUROC% mnist",
            "shift acc%",
            "params xS",
            "lat b1 xS"
        ]
    );
    let cells = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    // ens: acc 90.00, NLL 0.35, ECE 0.03, AUROC kmnist = acc, mnist = acc - 0.1,
    // shift acc mean of (acc - 0.2, acc - 0.4) = acc - 0.3, params and latency 3x single.
    assert_eq!(
        cells(lines[3]),
        [
            "ens", "90.00", "0.3500", "0.0300", "90.00", "80.00", "60.00", "3.00", "3.00"
        ]
    );
    assert_eq!(cells(lines[2])[0], "single");
    assert_eq!(cells(lines[4])[0], "mcd");
    assert_eq!(lines.len(), 5);
    // Right-aligned columns end at the same place on every line.
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.chars().count() == lines[1].chars().count()),
        "{term}"
    );
}

/// Paired comparisons on the two-seed fixture, against intervals and p-values computed by hand
/// (Student's t with one degree of freedom is Cauchy: F(t) = 1/2 + atan(t)/π), and the
/// report's verdicts.
#[test]
fn comparisons_pair_seeds_and_the_report_counts_verdicts() {
    use report::compare::compare;
    use std::f64::consts::PI;
    use uq_metrics::Verdict;
    let mut s = summary();
    s.comparisons = compare(&s.methods, "single", &BTreeMap::new());
    let get = |method: &str, metric: &str| {
        (s.comparisons.iter())
            .find(|c| c.method == method && c.metric == metric)
            .unwrap_or_else(|| panic!("{method} {metric}"))
    };
    // ens − single, seeds 1 and 2: accuracy +0.05 both times (sd 0: a zero-width interval), ten
    // times the default margin: shown better, and no adjustment can undo a p-value of 0.
    let acc = get("ens", "id.accuracy");
    assert!((acc.mean_diff - 0.05).abs() < 1e-12 && (acc.ci_low - 0.05).abs() < 1e-12);
    assert_eq!(acc.n_seeds, 2);
    let d = &acc.decision;
    assert_eq!(
        (d.margin, d.p_difference, d.p_equivalence),
        (0.005, 0.0, 1.0)
    );
    assert_eq!(
        (d.verdict, d.verdict_holm),
        (Verdict::Better, Verdict::Better)
    );
    // NLL: −0.1 and −0.4; mean −0.25, sd 0.3/√2, half width t(0.975, 1) · sd/√2 = 12.7062 · 0.15.
    let nll = get("ens", "id.nll");
    assert!((nll.mean_diff + 0.25).abs() < 1e-12);
    assert!((nll.ci_low - (-0.25 - 12.706_204_736 * 0.15)).abs() < 1e-6);
    // t = −0.25 / 0.15; TOST at the NLL margin 0.02: the lower test's p is the larger.
    let cauchy = |t: f64| 0.5 + t.atan() / PI;
    let d = &nll.decision;
    assert!((d.p_difference - 2.0 * cauchy(-0.25 / 0.15)).abs() < 1e-12);
    assert!((d.p_equivalence - (1.0 - cauchy((-0.25 + 0.02) / 0.15))).abs() < 1e-12);
    assert_eq!(d.verdict, Verdict::Inconclusive);
    assert!(d.p_difference_holm >= d.p_difference && d.p_equivalence_holm >= d.p_equivalence);
    // mcd − single accuracy: +0.02 and −0.06.
    assert!((get("mcd", "id.accuracy").mean_diff + 0.02).abs() < 1e-12);
    // OOD sets, their mean and the mean shift are compared too; the reference never with itself.
    get("ens", "ood.kmnist.auroc");
    get("ens", "ood.mean.auroc");
    get("mcd", "shift.mean.nll");
    assert!(s.comparisons.iter().all(|c| c.method != "single"));
    // Holm over the whole family: the adjusted p-values are the family's, as statsmodels
    // computes them (checked in uq-metrics); here, that every adjusted verdict follows from them.
    for c in &s.comparisons {
        let d = &c.decision;
        let again = uq_metrics::decide(
            c.mean_diff,
            d.p_difference_holm,
            d.p_equivalence_holm,
            c.higher_is_better,
        );
        assert_eq!(again, d.verdict_holm, "{} {}", c.method, c.metric);
    }
    // A margin given for one metric family moves only that family.
    let wide = BTreeMap::from([("id.nll".to_string(), 1.0)]);
    let wide = compare(&s.methods, "single", &wide);
    let nll_wide = wide
        .iter()
        .find(|c| c.method == "ens" && c.metric == "id.nll")
        .unwrap();
    assert_eq!(nll_wide.decision.margin, 1.0);
    let acc_wide = wide
        .iter()
        .find(|c| c.method == "ens" && c.metric == "id.accuracy");
    assert_eq!(acc_wide.unwrap().decision.margin, 0.005);
    // No method of that name: no comparisons.
    assert!(compare(&s.methods, "absent", &BTreeMap::new()).is_empty());

    let md = render_markdown(&s);
    // The headline leads the report, before the first table of metrics; ens's accuracy (mean
    // 90.00 over seeds, the column's best) carries its Holm verdict against single.
    assert!(md.find("## Headline").unwrap() < md.find("## In-distribution").unwrap());
    let lead = row(&md, "## Headline", "ens");
    assert_eq!(lead[1], "**90.00** ▲", "accuracy: {lead:?}");
    // Every comparison has its own row under its metric, both verdicts spelled out, and the
    // 90% interval beside the verdict: differences -0.1 and -0.4, se 0.15, t_{0.95, 1} = 6.3138.
    let nll = row(&md, "### `id.nll`, margin 0.0200", "ens");
    assert_eq!(
        nll[1..6],
        [
            "-0.2500",
            "[-2.1559, +1.6559]",
            "inconclusive",
            "[-1.1971, +0.6971]",
            "inconclusive"
        ]
    );
    let counts = row(&md, "## Paired comparisons", "ens");
    let raw: Vec<usize> = (counts[1..5].iter())
        .map(|c| c.split(" / ").next().unwrap().parse().unwrap())
        .collect();
    let of_ens: Vec<&report::Comparison> =
        s.comparisons.iter().filter(|c| c.method == "ens").collect();
    assert_eq!(raw.iter().sum::<usize>(), of_ens.len());
    let better = of_ens
        .iter()
        .filter(|c| c.decision.verdict == Verdict::Better)
        .count();
    assert_eq!(raw[0], better);
    assert!(raw[0] >= 1 && raw[3] >= 1, "{counts:?}");
}

/// The sampling table: ens's kmnist AUROC is 0.85 and 0.95 over its seeds (std 7.07 points), its
/// bootstrap std 0.04 and 0.03 (RMS 3.54 points): a variance share of 0.00125 / 0.005 = 25%.
#[test]
fn sampling_share_is_the_ratio_of_variances() {
    let md = render_markdown(&summary());
    let heading = "### OOD AUROC: seeds against test-set sampling";
    let header = section(&md, heading)
        .into_iter()
        .find(|l| l.starts_with("| Method"))
        .unwrap();
    assert!(header.starts_with("| Method | kmnist seeds | kmnist sampling | kmnist share |"));
    assert_eq!(row(&md, heading, "ens")[1..4], ["7.07", "3.54", "25%"]);
}

/// The training-cost table: each column as ×single, from the summary's numbers.
#[test]
fn training_cost_is_shown_against_single() {
    let md = render_markdown(&summary());
    let ens = row(&md, "## Training cost", "ens");
    // ens: 3 trainings of 300 steps (single: 1 of 100), the same over both seeds.
    assert_eq!(ens[1..3], ["3", "3.00×"]);
    assert_eq!(ens[3..5], ["300", "3.00×"], "trainable parameters");
    assert_eq!(ens[7..9], ["300", "3.00×"]);
    let mcd = row(&md, "## Training cost", "mcd");
    assert_eq!(mcd[7..9], ["100", "1.00×"]);
}

/// Methods trained with fewer optimiser steps than `single` are named under the headline table, with
/// the ratio; methods with as many or more (built on the base model, or M of it) are not.
#[test]
fn a_smaller_training_budget_is_said_beside_the_table() {
    let md = render_markdown(&summary());
    assert!(!md.contains("Unequal training"), "{md}");
    let mut s = summary();
    for seed in [1, 2] {
        s.methods
            .push(run("be", "batch_ensemble", 4, seed, 0.8, 0.5, 20));
    }
    let md = render_markdown(&s);
    let headline = section(&md, "## Headline");
    let note = (headline.iter())
        .find(|l| l.starts_with("Unequal training"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        note.starts_with("Unequal training: `be` 0.20× the optimiser steps of `single`"),
        "{note}"
    );
    assert!(!note.contains("`ens`") && !note.contains("`mcd`"), "{note}");
}

#[test]
fn provenance_heads_the_report_and_differences_are_named() {
    let made = report::Provenance {
        version: "0.1.0".into(),
        commit: Some("0123456789abcdef".into()),
        tree_clean: Some(false),
        command: vec!["uqformer".into(), "run".into(), "x.toml".into()],
        backend: "flex".into(),
        cpu: "Some CPU".into(),
        simd: vec!["avx2".into(), "fma".into()],
        threads: 2,
        wall_seconds: 12.4,
    };
    let mut s = summary();
    s.provenance = Some(made.clone());
    let md = render_markdown(&s);
    let line = "Made by uqformer 0.1.0 at 0123456789 with uncommitted changes: `uqformer run \
                x.toml`, on flex, Some CPU (avx2, fma), 2 thread(s), in 12.4 s.";
    assert!(md.contains(line), "{md}");
    let back: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back.provenance.as_ref(), Some(&made));
    // Older runs have none, and read back so.
    assert!(
        !serde_json::to_string(&summary())
            .unwrap()
            .contains("provenance")
    );
    let other = report::Provenance {
        simd: vec!["avx2".into(), "avx512f".into(), "fma".into()],
        command: vec!["elsewhere".into()],
        wall_seconds: 99.0,
        ..made.clone()
    };
    assert_eq!(
        made.differences(&other),
        ["simd: avx2 fma vs avx2 avx512f fma"]
    );
    assert!(made.differences(&made).is_empty());
}

/// A folder that is not a run: the summary file is named once, the I/O error is the source.
#[test]
fn a_folder_without_a_summary_names_the_file_once_and_keeps_the_io_error() {
    let dir = temp_dir("not-a-run");
    let e = report::redraw(&dir).unwrap_err();
    let summary = dir.join("summary.json").display().to_string();
    assert_eq!(
        e.to_string(),
        format!("{summary}: cannot read it (is this a run directory?)")
    );
    let source = std::error::Error::source(&e).expect("the I/O error");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("an I/O error");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    assert!(!source.to_string().contains("summary.json"), "{source}");
}
