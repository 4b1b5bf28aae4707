//! The paired comparisons in full: each method's verdicts against the reference (better, worse,
//! equivalent, inconclusive; raw and Holm-adjusted) counted, then one table per metric with the
//! intervals, the margin and what the seeds can detect. The headline marks the same verdicts.

use std::fmt::Write;

use uq_metrics::{ALPHA, MAX_SEEDS, POWER, Verdict};

use super::cells::NA;
use super::table::{header_with, md_table, md_text};
use crate::outputs::MethodOutputs;
use crate::summary::{Comparison, Summary};

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

/// What the tests are and how the verdicts are read.
fn legend(first: &Comparison, tests: usize) -> String {
    format!(
        "Each method against `{}`, paired by seed over {} seed(s). A difference within ± the \
         metric's margin is *equivalent* when two one-sided t-tests show it (p < {ALPHA}); \
         otherwise it is *better* or *worse* when a two-sided paired t-test shows a difference \
         (p < {ALPHA}), else *inconclusive* (more seeds needed). The Holm verdict repeats the tests \
         after Holm's adjustment over all {tests} tests of this report (two per comparison); the \
         counts read `raw / Holm`. These comparisons are exploratory: the experiment's declared \
         claims, when it has any, are decided apart (above).",
        md_text(&first.reference),
        first.n_seeds,
    )
}

/// A line per method entry and seed whose HetDPT search missed its budget.
pub(super) fn missed_budgets(out: &mut String, summary: &Summary) {
    for r in &summary.methods {
        let Some(MethodOutputs::HetDpt(h)) = &r.extra.outputs else {
            continue;
        };
        if !h.missed_budget() {
            continue;
        }
        let _ = writeln!(
            out,
            "**{} missed its budget on seed {}**: `{}`, achieved speed-up {:.2}x.\n",
            md_text(&r.name),
            r.seed,
            h.budget.map_or(NA.to_string(), |b| b.to_string()),
            h.achieved_speedup.unwrap_or(f64::NAN),
        );
    }
}

/// `## Paired comparisons`: verdict counts per method, then per metric each method's difference,
/// interval, verdicts and what the seeds can detect (nothing with one seed: the headline says
/// why).
pub(super) fn comparisons(out: &mut String, summary: &Summary) {
    let comparisons = &summary.comparisons;
    let Some(first) = comparisons.first().filter(|c| c.n_seeds >= 2) else {
        return;
    };
    out.push_str("## Paired comparisons\n\n");
    let _ = writeln!(
        out,
        "{} Per metric: the mean per-seed difference (method − reference; accuracy and AUROC in \
         percentage points) and its 95% Student-t interval; beside the verdict the 90% interval, \
         the one TOST agrees with (equivalent exactly when it lies within ± the margin); then the \
         smallest true difference a \
         paired t-test detects with {:.0}% power at the method's seed-to-seed spread, and the \
         seeds at which a difference of one margin would be detected.\n",
        legend(first, 2 * comparisons.len()),
        100.0 * POWER
    );
    let (methods, metrics) = axes(comparisons);
    let counted = &Verdict::ALL[..4];
    let header = header_with("Method", counted.iter().map(|v| v.as_str()));
    let rows: Vec<Vec<String>> = (methods.iter())
        .map(|&m| {
            let of = |v: Verdict, holm: bool| {
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
            let cells = (counted.iter()).map(|&v| format!("{} / {}", of(v, false), of(v, true)));
            std::iter::once(md_text(m)).chain(cells).collect()
        })
        .collect();
    md_table(out, &header, &rows, 1);
    for metric in metrics {
        per_metric(out, comparisons, metric);
    }
}

/// One metric's table: a row per method.
fn per_metric(out: &mut String, comparisons: &[Comparison], metric: &str) {
    let of: Vec<&Comparison> = comparisons.iter().filter(|c| c.metric == metric).collect();
    let margin = of
        .first()
        .map_or(NA.into(), |c| show(metric, c.decision.margin, false));
    let _ = writeln!(out, "### `{metric}`, margin {margin}\n");
    let header = [
        "Method",
        "Difference",
        "95% interval",
        "Verdict",
        "90% interval (TOST)",
        "Holm",
        "Detectable",
        "Seeds for one margin",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = (of.iter())
        .map(|c| {
            let d = &c.decision;
            let signed = |x| show(metric, x, true);
            vec![
                md_text(&c.method),
                signed(c.mean_diff),
                format!("[{}, {}]", signed(c.ci_low), signed(c.ci_high)),
                d.verdict.as_str().to_string(),
                match d.ci90_low.is_finite() && d.ci90_high.is_finite() {
                    true => format!("[{}, {}]", signed(d.ci90_low), signed(d.ci90_high)),
                    false => NA.into(),
                },
                d.verdict_holm.as_str().to_string(),
                match d.detectable.is_finite() {
                    true => show(metric, d.detectable, false),
                    false => NA.into(),
                },
                d.seeds_needed
                    .map_or(format!("over {MAX_SEEDS}"), |n| n.to_string()),
            ]
        })
        .collect();
    md_table(out, &header, &rows, 1);
}

/// A difference or margin in the metric's units: percentage points for accuracy and AUROC.
pub(super) fn show(metric: &str, x: f64, signed: bool) -> String {
    let percent = metric.ends_with("accuracy") || metric.ends_with("auroc");
    match (percent, signed) {
        (true, true) => format!("{:+.2}", 100.0 * x),
        (true, false) => format!("{:.2}", 100.0 * x),
        (false, true) => format!("{x:+.4}"),
        (false, false) => format!("{x:.4}"),
    }
}
