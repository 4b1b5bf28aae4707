//! The declared claims, which lead the report, and the share of the reference's gain over the
//! baseline each method keeps. The rows are shared by the Markdown and the terminal.

use std::fmt::Write;

use uq_metrics::{ALPHA, MAX_SEEDS, POWER, RatioSet};

use super::cells::NA;
use super::table::{header_with, md_table, md_text};
use super::verdicts::show;
use crate::claims::{ClaimResult, ClaimVerdict};
use crate::retained::RetainedShare;
use crate::summary::Summary;

/// The claims table's header and rows (`md`: Markdown code spans around names).
pub(super) fn claim_rows(summary: &Summary, md: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "Claim",
        "Margin",
        "Difference",
        "90% interval",
        "Verdict",
        "p (Holm)",
        "Seeds / for 80%",
    ]
    .map(String::from)
    .to_vec();
    let name = |s: &str| match md {
        true => format!("`{}`", md_text(s)),
        false => s.to_string(),
    };
    let rows = (summary.claims.iter().enumerate())
        .map(|(i, c)| {
            let k = &c.claim;
            let metric = k.metric.as_str();
            let margin = match k.margin_share {
                Some(share) => format!("{} ({share}×)", number(metric, c.margin, false)),
                None => number(metric, c.margin, false),
            };
            vec![
                format!(
                    "{}. {} {} to {}: {}",
                    i + 1,
                    name(&k.method),
                    k.kind.as_str(),
                    name(&k.reference),
                    name(metric)
                ),
                margin,
                number(metric, c.mean_diff, true),
                interval(metric, c.ci90_low, c.ci90_high),
                verdict(c),
                p_value(c.p_holm),
                format!("{} / {}", c.n_seeds, seeds_needed(c)),
            ]
        })
        .collect();
    (header, rows)
}

/// `## Declared claims`, when the experiment declares any: the table, then each claim's reason.
pub(super) fn claims_section(out: &mut String, summary: &Summary) {
    let Some(first) = summary.claims.first() else {
        return;
    };
    out.push_str("## Declared claims\n\n");
    let _ = writeln!(
        out,
        "The claims the experiment declared before it ran, each decided by its own test on the \
         per-seed differences (method − reference; accuracy and AUROC in percentage points): \
         *non-inferior* by a one-sided paired t-test that the method is worse than the \
         reference by less than the margin, *superior* that it is better by more than the margin \
         (0: better at all), *equivalent* by two one-sided tests (TOST) that the difference lies \
         within ± the margin; shown when the p-value after Holm's adjustment over the {n} \
         declared claim(s) alone is below {ALPHA}. The 90% interval is the one the tests agree \
         with (before Holm). A margin given as a share (0.5×) is that share of the reference's \
         mean gain over `{base}`. *Seeds*: those the claim was decided on / those at which \
         its test would show it with {power:.0}% power if the true difference and spread were \
         those observed (for equivalence: to show equivalence). *n/a*: fewer than two seeds, a \
         metric the run lacks, or a share of a reference that gains nothing over `{base}` \
         (the margin is then 0 or below). Every other comparison in this report is \
         exploratory.\n",
        n = summary.claims.len(),
        base = md_text(&first.baseline),
        power = 100.0 * POWER,
    );
    let (header, rows) = claim_rows(summary, true);
    md_table(out, &header, &rows, 1);
    for (i, c) in summary.claims.iter().enumerate() {
        let _ = writeln!(out, "{}. {}", i + 1, md_text(&c.claim.reason));
    }
    out.push('\n');
}

fn verdict(c: &ClaimResult) -> String {
    match c.verdict {
        ClaimVerdict::Shown => c.claim.kind.as_str().to_string(),
        ClaimVerdict::NotShown => "not shown".into(),
        ClaimVerdict::Undefined => NA.into(),
    }
}

/// The seeds the claim's test needs; "n/a" where the claim was not decided.
fn seeds_needed(c: &ClaimResult) -> String {
    match (c.verdict, c.seeds_needed) {
        (ClaimVerdict::Undefined, _) => NA.into(),
        (_, None) => format!(">{MAX_SEEDS}"),
        (_, Some(n)) => n.to_string(),
    }
}

fn p_value(p: f64) -> String {
    match p {
        p if p.is_nan() => NA.into(),
        p if p < 1e-3 => format!("{p:.1e}"),
        p => format!("{p:.3}"),
    }
}

/// A value in the metric's units, "n/a" when not finite.
fn number(metric: &str, x: f64, signed: bool) -> String {
    match x.is_finite() {
        true => show(metric, x, signed),
        false => NA.into(),
    }
}

fn interval(metric: &str, low: f64, high: f64) -> String {
    match low.is_finite() && high.is_finite() {
        true => format!(
            "[{}, {}]",
            show(metric, low, true),
            show(metric, high, true)
        ),
        false => NA.into(),
    }
}

/// The share-of-gain table's header and rows for `metrics` (all of them when `None`): a row
/// of the reference's gain, then a row per method.
pub(super) fn retained_rows(
    summary: &Summary,
    metrics: Option<&[&str]>,
) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let shares: Vec<&RetainedShare> = (summary.retained.iter())
        .filter(|r| metrics.is_none_or(|m| m.contains(&r.metric.as_str())))
        .collect();
    let first = shares.first()?;
    let (mut methods, mut columns): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for r in &shares {
        if !methods.contains(&r.method.as_str()) {
            methods.push(&r.method);
        }
        if !columns.contains(&r.metric.as_str()) {
            columns.push(&r.metric);
        }
    }
    let find = |m: &str, k: &str| shares.iter().find(|r| r.method == m && r.metric == k);
    let gain_row = std::iter::once(format!("{} gain", first.reference))
        .chain(columns.iter().map(|&k| {
            (shares.iter().find(|r| r.metric == k))
                .map_or(NA.into(), |r| number(k, r.reference_gain, true))
        }))
        .collect();
    let mut rows = vec![gain_row];
    rows.extend(methods.iter().map(|&m| {
        std::iter::once(m.to_string())
            .chain(
                columns
                    .iter()
                    .map(|&k| find(m, k).map_or(NA.into(), |r| share(r))),
            )
            .collect()
    }));
    Some((header_with("Method", columns.iter().copied()), rows))
}

/// A share with its Fieller set: `0.55 [0.44, 0.67]`, or `(unbounded)` where the reference's
/// gain is not shown.
fn share(r: &RetainedShare) -> String {
    if !r.share.is_finite() {
        return NA.into();
    }
    match r.interval {
        RatioSet::Bounded { low, high } => format!("{:.2} [{low:.2}, {high:.2}]", r.share),
        RatioSet::Outside { .. } | RatioSet::Unbounded => format!("{:.2} (unbounded)", r.share),
        RatioSet::Undefined => format!("{:.2}", r.share),
    }
}

/// `### Share of the reference's gain kept`, when the run has a reference and a baseline.
pub(super) fn retained_section(out: &mut String, summary: &Summary) {
    let Some((header, mut rows)) = retained_rows(summary, None) else {
        return;
    };
    let first = &summary.retained[0];
    let _ = writeln!(
        out,
        "### Share of `{r}`'s gain over `{b}` kept\n\nPer metric, (method − `{b}`) / (`{r}` − \
         `{b}`) on the means over the {n} seed(s) all three share: 1 keeps all of `{r}`'s \
         benefit, 0 none, below 0 is worse than `{b}`. The first row is `{r}`'s gain itself \
         (positive: better; accuracy and AUROC in points). In brackets Fieller's 95% interval \
         over seeds (the set of shares a paired t-test does not reject; it stays valid when \
         the gain is small); *unbounded* where `{r}`'s gain is not itself distinguishable from \
         0, so no share of it can be pinned down.\n",
        r = md_text(&first.reference),
        b = md_text(&first.baseline),
        n = first.n_seeds,
    );
    for row in &mut rows {
        row[0] = md_text(&row[0]);
    }
    md_table(out, &header, &rows, 1);
}
