//! The report's answer: each method's verdicts against the reference (better, worse,
//! equivalent, inconclusive; raw and Holm-adjusted), first as a summary of the headline metrics,
//! then in full with the intervals, margins and what the seeds can detect.

use std::fmt::Write;

use uq_metrics::{ALPHA, MAX_SEEDS, POWER, Verdict};

use super::NA;
use super::table::{header_with, md_table, md_text};
use crate::summary::{Comparison, Summary};

const OOD_MEAN: &str = "ood.mean.auroc";

/// The metrics of the summary at the top, with their column names.
const HEADLINE: [(&str, &str); 5] = [
    ("id.accuracy", "Accuracy"),
    ("id.nll", "NLL"),
    ("id.ece", "ECE"),
    (OOD_MEAN, "OOD AUROC (mean)"),
    ("shift.mean.nll", "Shifted NLL"),
];

/// The methods compared, in order of appearance, and the metrics compared.
fn axes(comparisons: &[Comparison]) -> (Vec<&str>, Vec<&str>) {
    let (mut methods, mut metrics): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for c in comparisons {
        if !methods.contains(&c.method.as_str()) {
            methods.push(&c.method);
        }
        if !metrics.contains(&c.metric.as_str()) {
            metrics.push(&c.metric);
        }
    }
    (methods, metrics)
}

fn find<'a>(comparisons: &'a [Comparison], method: &str, metric: &str) -> Option<&'a Comparison> {
    (comparisons.iter()).find(|c| c.method == method && c.metric == metric)
}

/// The legend both sections share.
fn legend(first: &Comparison, tests: usize) -> String {
    format!(
        "Each method against `{}`, paired by seed over {} seed(s). A difference within ± the \
         metric's margin is *equivalent* when two one-sided t-tests show it (p < {ALPHA}); \
         otherwise it is *better* or *worse* when a two-sided paired t-test shows a difference \
         (p < {ALPHA}), else *inconclusive* (more seeds needed). Each cell reads `raw / \
         adjusted`: the adjusted verdict repeats the tests after Holm's adjustment over all \
         {tests} tests of this report (two per comparison).",
        md_text(&first.reference),
        first.n_seeds,
    )
}

/// A line per method entry and seed whose HetDPT search missed its budget (`budget_met` false).
fn missed_budgets(out: &mut String, summary: &Summary) {
    for r in &summary.methods {
        let Some(h) = r.extra.get("hetdpt") else {
            continue;
        };
        if h.get("budget_met").and_then(|b| b.as_bool()) != Some(false) {
            continue;
        }
        let speedup = (h.get("achieved_speedup").and_then(|s| s.as_f64())).unwrap_or(f64::NAN);
        let _ = writeln!(
            out,
            "**{} missed its budget on seed {}**: `{}`, achieved speed-up {speedup:.2}x.\n",
            md_text(&r.name),
            r.seed,
            h.get("budget").map_or(NA.to_string(), budget_text),
        );
    }
}

/// A budget as the experiment file writes it (`min_speedup = 1.3`), from its JSON form.
fn budget_text(budget: &serde_json::Value) -> String {
    match budget.as_object() {
        Some(fields) => (fields.iter())
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => budget.to_string(),
    }
}

/// `## Verdicts`: the headline metrics' verdicts per method, or nothing without comparisons;
/// then any missed HetDPT budget.
pub(super) fn lead(out: &mut String, summary: &Summary) {
    lead_table(out, summary);
    missed_budgets(out, summary);
}

fn lead_table(out: &mut String, summary: &Summary) {
    let comparisons = &summary.comparisons;
    let Some(first) = comparisons.first() else {
        return;
    };
    if first.n_seeds < 2 {
        out.push_str("## Verdicts\n\n");
        out.push_str(ONE_SEED);
        return;
    }
    let (methods, metrics) = axes(comparisons);
    // With one OOD set there is no mean: that set's AUROC stands for it.
    let one_set = (metrics.iter()).find(|k| k.starts_with("ood.") && k.ends_with(".auroc"));
    let shown: Vec<(&str, &str)> = (HEADLINE.iter())
        .filter_map(|&(k, name)| match (k, one_set) {
            _ if metrics.contains(&k) => Some((k, name)),
            (OOD_MEAN, Some(set)) => Some((*set, "OOD AUROC")),
            _ => None,
        })
        .collect();
    out.push_str("## Verdicts\n\n");
    let _ = writeln!(
        out,
        "{} The full intervals follow under Paired comparisons.\n",
        legend(first, 2 * comparisons.len())
    );
    let header = header_with("Method", shown.iter().map(|(_, name)| *name));
    let rows: Vec<Vec<String>> = (methods.iter())
        .map(|&m| {
            let cells = shown.iter().map(|(k, _)| {
                find(comparisons, m, k).map_or(NA.into(), |c| {
                    let d = &c.decision;
                    format!("{} / {}", d.verdict.as_str(), d.verdict_holm.as_str())
                })
            });
            std::iter::once(md_text(m)).chain(cells).collect()
        })
        .collect();
    md_table(out, &header, &rows, 1 + shown.len());
}

/// What the verdicts say of a run of one seed, in place of tables of n/a.
const ONE_SEED: &str = "One seed: no comparison can be decided, since a paired test needs two \
                        seeds or more. Run more to decide them: `uqformer run FILE --seeds \
                        0,1,2,3,4`, or `[experiment] seeds` in the file.\n\n";

/// `## Paired comparisons`: verdict counts per method, every comparison's interval and
/// verdicts, and each metric's margin against the difference the seeds can detect (nothing
/// with one seed: the verdicts say why).
pub(super) fn comparisons(out: &mut String, summary: &Summary) {
    let comparisons = &summary.comparisons;
    let Some(first) = comparisons.first().filter(|c| c.n_seeds >= 2) else {
        return;
    };
    out.push_str("## Paired comparisons\n\n");
    let _ = writeln!(
        out,
        "{} Cells give the mean per-seed difference (method − reference) and its 95% Student-t \
         interval; accuracy and AUROC differences are in percentage points. With one seed there \
         is no test (n/a).\n",
        legend(first, 2 * comparisons.len())
    );
    let (methods, metrics) = axes(comparisons);
    let counted = &Verdict::ALL[..4];
    let header = header_with("Method", counted.iter().map(|v| v.as_str()));
    let rows: Vec<Vec<String>> = (methods.iter())
        .map(|&m| {
            let count = |v: Verdict, holm: bool| {
                (comparisons.iter())
                    .filter(|c| c.method == m)
                    .filter(|c| {
                        v == if holm {
                            c.decision.verdict_holm
                        } else {
                            c.decision.verdict
                        }
                    })
                    .count()
            };
            let cells = counted
                .iter()
                .map(|&v| format!("{} / {}", count(v, false), count(v, true)));
            std::iter::once(md_text(m)).chain(cells).collect()
        })
        .collect();
    md_table(out, &header, &rows, 1);
    let header = header_with("Method", metrics.iter().copied());
    let rows: Vec<Vec<String>> = (methods.iter())
        .map(|&m| {
            let cells =
                (metrics.iter()).map(|k| find(comparisons, m, k).map_or(NA.into(), difference));
            std::iter::once(md_text(m)).chain(cells).collect()
        })
        .collect();
    md_table(out, &header, &rows, 1);
    detectable(out, comparisons, &metrics);
}

/// Per metric: the margin, and over the methods the smallest difference the seeds detect with
/// 80% power and the seeds a one-margin difference would need.
fn detectable(out: &mut String, comparisons: &[Comparison], metrics: &[&str]) {
    let _ = writeln!(
        out,
        "What the seeds can decide: the smallest true difference a paired t-test detects with \
         {:.0}% power at each method's seed-to-seed spread (range over methods), and the seeds \
         at which a difference of one margin would be detected.\n",
        100.0 * POWER
    );
    let header = ["Metric", "Margin", "Detectable", "Seeds for one margin"].map(String::from);
    let rows: Vec<Vec<String>> = (metrics.iter())
        .map(|&k| {
            let of: Vec<&Comparison> = comparisons.iter().filter(|c| c.metric == k).collect();
            let show = |x: f64| show(k, x, false);
            let range = |values: Vec<f64>| {
                let finite: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
                let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                match finite.is_empty() {
                    true => NA.to_string(),
                    false => format!("{} – {}", show(lo), show(hi)),
                }
            };
            let seeds: Vec<Option<usize>> = of.iter().map(|c| c.decision.seeds_needed).collect();
            let seeds = match seeds.iter().all(Option::is_some) {
                true => {
                    let (lo, hi) = (seeds.iter().flatten().min(), seeds.iter().flatten().max());
                    (lo.zip(hi)).map_or(NA.into(), |(lo, hi)| format!("{lo} – {hi}"))
                }
                false => format!("over {MAX_SEEDS} for some"),
            };
            vec![
                k.to_string(),
                of.first().map_or(NA.into(), |c| show(c.decision.margin)),
                range(of.iter().map(|c| c.decision.detectable).collect()),
                seeds,
            ]
        })
        .collect();
    md_table(out, &header, &rows, 1);
}

/// A difference or margin in the metric's units: percentage points for accuracy and AUROC.
fn show(metric: &str, x: f64, signed: bool) -> String {
    let percent = metric.ends_with("accuracy") || metric.ends_with("auroc");
    match (percent, signed) {
        (true, true) => format!("{:+.2}", 100.0 * x),
        (true, false) => format!("{:.2}", 100.0 * x),
        (false, true) => format!("{x:+.4}"),
        (false, false) => format!("{x:.4}"),
    }
}

/// `Δ [low, high] raw / adjusted`.
fn difference(c: &Comparison) -> String {
    let s = |x| show(&c.metric, x, true);
    match c.decision.verdict {
        Verdict::Undefined => s(c.mean_diff),
        v => format!(
            "{} [{}, {}] {} / {}",
            s(c.mean_diff),
            s(c.ci_low),
            s(c.ci_high),
            v.as_str(),
            c.decision.verdict_holm.as_str()
        ),
    }
}
