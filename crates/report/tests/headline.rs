//! The headline: its sentences and compact table checked against the summary's own numbers,
//! computed here from the per-seed entries, for a one-seed and a two-seed run.

mod common;

use std::collections::BTreeMap;

use common::{row, section, summary};
use report::{GroupMetrics, Summary, render_html, render_markdown};
use uq_metrics::Verdict;

/// The mean over seeds of a value of one method's entries.
fn mean(s: &Summary, method: &str, f: fn(&report::MethodResult) -> f64) -> f64 {
    let xs: Vec<f64> = (s.methods.iter())
        .filter(|r| r.name == method)
        .map(f)
        .collect();
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The method with the highest (or lowest) mean.
fn best(s: &Summary, f: fn(&report::MethodResult) -> f64, highest: bool) -> String {
    let mut names: Vec<&str> = s.methods.iter().map(|r| r.name.as_str()).collect();
    names.dedup();
    let sign = if highest { 1.0 } else { -1.0 };
    (names.into_iter())
        .max_by(|a, b| (sign * mean(s, a, f)).total_cmp(&(sign * mean(s, b, f))))
        .unwrap()
        .to_string()
}

/// The header row of the first table under `heading`.
fn header(md: &str, heading: &str) -> String {
    (section(md, heading).into_iter())
        .find(|l| l.starts_with("| Method"))
        .unwrap_or_else(|| panic!("no table under {heading:?} in\n{md}"))
        .to_string()
}

fn headline(md: &str) -> String {
    section(md, "## Headline").join("\n")
}

#[test]
fn a_multi_seed_headline_names_what_the_numbers_say() {
    let mut s = summary();
    s.comparisons = report::compare::compare(&s.methods, "ens", &BTreeMap::new());
    let md = render_markdown(&s);
    let text = headline(&md);
    let acc = best(&s, |r| r.id.accuracy, true);
    let nll = best(&s, |r| r.id.nll, false);
    let acc_value = 100.0 * mean(&s, &acc, |r| r.id.accuracy);
    assert!(
        text.contains(&format!("Best: accuracy `{acc}` ({acc_value:.2}%)")),
        "{text}"
    );
    assert!(text.contains(&format!("NLL `{nll}` (")), "{text}");
    // The reference against single, in points and NLL units, and its latency ratio.
    let d_acc =
        100.0 * (mean(&s, "ens", |r| r.id.accuracy) - mean(&s, "single", |r| r.id.accuracy));
    let d_nll = mean(&s, "ens", |r| r.id.nll) - mean(&s, "single", |r| r.id.nll);
    let latency =
        mean(&s, "ens", |r| r.cost.latency_ms) / mean(&s, "single", |r| r.cost.latency_ms);
    assert!(
        text.contains(&format!(
            "has {d_acc:+.2} points of accuracy and {d_nll:+.4} NLL against `single`, at {latency:.2}× its latency"
        )),
        "{text}"
    );
    // mcd is the one method cheaper to run than ens; its share of ens's NLL gain over single.
    let share = (mean(&s, "single", |r| r.id.nll) - mean(&s, "mcd", |r| r.id.nll)) / -d_nll;
    assert!(
        text.contains(&format!(
            "`mcd` keeps the most: {:.0}% of its NLL gain",
            100.0 * share
        )),
        "{text}"
    );
    // mcd's accuracy is below single's: it keeps none of that gain.
    assert!(mean(&s, "mcd", |r| r.id.accuracy) < mean(&s, "single", |r| r.id.accuracy));
    assert!(
        text.contains("none keeps any of its accuracy gain"),
        "{text}"
    );
    // The verdict counts are those of the table's metrics, after Holm.
    // Two OOD sets and no groups: a column per set.
    let table = [
        "id.accuracy",
        "id.nll",
        "id.ece",
        "ood.kmnist.auroc",
        "ood.mnist.auroc",
        "shift.mean.accuracy",
    ];
    let shown: Vec<_> = (s.comparisons.iter())
        .filter(|c| table.contains(&c.metric.as_str()))
        .collect();
    let count = |v: Verdict| {
        shown
            .iter()
            .filter(|c| c.decision.verdict_holm == v)
            .count()
    };
    assert!(
        text.contains(&format!(
            "the {} comparisons with `ens` in the table read {} better, {} equivalent, {} worse and {} undecided",
            shown.len(),
            count(Verdict::Better),
            count(Verdict::Equivalent),
            count(Verdict::Worse),
            count(Verdict::Inconclusive)
        )),
        "{text}"
    );
    // The best of a column is bold, and only it; the reference has no mark.
    let acc_col: Vec<String> = ["single", "ens", "mcd"]
        .map(|m| row(&md, "## Headline", m)[1].clone())
        .to_vec();
    let bold: Vec<bool> = acc_col.iter().map(|c| c.starts_with("**")).collect();
    assert_eq!(
        bold,
        ["single", "ens", "mcd"].map(|m| m == acc),
        "{acc_col:?}"
    );
    assert_eq!(
        row(&md, "## Headline", "ens")[1],
        format!("**{acc_value:.2}**")
    );
    // The page colours each mark by its verdict and keeps numbers on one line.
    let html = render_html("exp", &md, &[]);
    let mcd_acc = (s.comparisons.iter())
        .find(|c| c.method == "mcd" && c.metric == "id.accuracy")
        .unwrap();
    let class = mcd_acc.decision.verdict_holm.as_str();
    assert!(
        html.contains(&format!("<span class=\"v {class}\"")),
        "{html}"
    );
    assert!(html.contains("white-space:nowrap") && html.contains("overflow-x:auto"));
}

#[test]
fn a_one_seed_headline_decides_nothing_and_says_how_to() {
    let mut s = summary();
    s.seeds = vec![1];
    s.methods.retain(|r| r.seed == 1);
    s.comparisons = report::compare::compare(&s.methods, "ens", &BTreeMap::new());
    let md = render_markdown(&s);
    let text = headline(&md);
    let acc = best(&s, |r| r.id.accuracy, true);
    assert!(text.contains(&format!("Best: accuracy `{acc}`")), "{text}");
    assert!(
        text.contains("One seed: no comparison can be decided"),
        "{text}"
    );
    assert!(!text.contains(['▲', '▼', '≈']), "{text}");
    assert!(text.contains("Means over 1 seed;"), "{text}");
}

/// Near and far groups: two columns when their sets differ, one when they are the same set.
#[test]
fn ood_groups_get_a_column_each_only_when_they_differ() {
    let with_groups = |near: &[&str], far: &[&str]| {
        let mut s = summary();
        s.ood_scores = vec!["msp".into()];
        for r in &mut s.methods {
            let group = |sets: &[&str]| {
                let names: Vec<String> = sets.iter().map(|x| x.to_string()).collect();
                let metrics: Vec<&report::OodMetrics> = sets.iter().map(|x| &r.ood[*x]).collect();
                GroupMetrics::mean(&names, &metrics)
            };
            let groups = BTreeMap::from([("near".into(), group(near)), ("far".into(), group(far))]);
            r.ood_groups.insert("msp".into(), groups);
        }
        s
    };
    let s = with_groups(&["kmnist"], &["mnist"]);
    let md = render_markdown(&s);
    let top = header(&md, "## Headline");
    assert!(top.contains("OOD near (%) ↑ | OOD far (%) ↑"), "{top}");
    // far is mnist alone: ens's far AUROC is the mean of its mnist AUROCs.
    let far = 100.0 * mean(&s, "ens", |r| r.ood["mnist"].auroc);
    let ens = row(&md, "## Headline", "ens");
    assert!(
        ens.iter().any(|c| c.contains(&format!("{far:.2}"))),
        "{ens:?}"
    );
    // The score tables: a group of one set would repeat that set's columns, so it has none;
    // a group of two has its own.
    let score_header = |md: &str| header(md, "### `msp`");
    assert!(!score_header(&md).contains("far AUROC"), "{md}");
    let two = render_markdown(&with_groups(&["kmnist"], &["kmnist", "mnist"]));
    assert!(
        score_header(&two).contains("| far AUROC (%) ↑ | far FPR95 (%) ↓ |"),
        "{two}"
    );
    let md = render_markdown(&with_groups(&["kmnist"], &["kmnist"]));
    let top = header(&md, "## Headline");
    assert!(
        top.contains("| OOD AUROC (%) ↑ |") && !top.contains("far"),
        "{top}"
    );
}

/// Compared against `single` itself, the headline states no gain of the baseline over itself.
#[test]
fn a_baseline_reference_has_no_gain_sentence() {
    let mut s = summary();
    s.comparisons = report::compare::compare(&s.methods, "single", &BTreeMap::new());
    let text = headline(&render_markdown(&s));
    assert!(
        !text.contains("The reference,") && !text.contains("cheaper to run"),
        "{text}"
    );
    assert!(
        text.contains("comparisons with `single` in the table read"),
        "{text}"
    );
}
