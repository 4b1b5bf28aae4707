//! The compact table and its legend.

use std::fmt::Write;

use super::super::cells::{NA, Unit};
use super::super::groups::Group;
use super::super::table::{md_table, md_text};
use super::MARKS;
use super::columns::Column;
use crate::summary::Summary;

/// One row per entry: the means, the column's best in bold, the verdict's mark after a value
/// compared with the reference (two seeds or more).
pub(super) fn table(out: &mut String, summary: &Summary, groups: &[Group], columns: &[Column]) {
    let best: Vec<Vec<&str>> = columns.iter().map(|c| c.best(groups)).collect();
    let header: Vec<String> = std::iter::once("Method".to_string())
        .chain(columns.iter().map(|c| c.header.clone()))
        .collect();
    let rows: Vec<Vec<String>> = (groups.iter())
        .map(|g| {
            let cells = columns.iter().zip(&best).map(|(c, best)| {
                let Some(value) = (c.value)(g) else {
                    return NA.to_string();
                };
                let shown = match best.contains(&g.name) {
                    true => format!("**{}**", c.unit.show(value)),
                    false => c.unit.show(value),
                };
                match mark(summary, g.name, c.compared.as_deref()) {
                    Some(m) => format!("{shown} {m}"),
                    None => shown,
                }
            });
            std::iter::once(md_text(g.name)).chain(cells).collect()
        })
        .collect();
    md_table(out, &header, &rows, 1);
}

/// The mark of `method`'s Holm-adjusted verdict on `metric`, when it was decided over seeds.
fn mark(summary: &Summary, method: &str, metric: Option<&str>) -> Option<char> {
    let c = (summary.comparisons.iter())
        .find(|c| c.method == method && Some(c.metric.as_str()) == metric)?;
    MARKS
        .iter()
        .find(|(v, _)| *v == c.decision.verdict_holm)
        .map(|(_, m)| *m)
}

/// What the table's cells, marks and cost columns mean.
pub(super) fn legend(
    out: &mut String,
    summary: &Summary,
    columns: &[Column],
    reference: Option<&Group>,
) {
    let seeds = summary.seeds.len();
    let mut legend = format!(
        "Means over {seeds} seed{}; the best of each column in bold.",
        if seeds == 1 { "" } else { "s" }
    );
    let decided = summary.comparisons.first().is_some_and(|c| c.n_seeds >= 2);
    if let (true, Some(r)) = (decided, reference) {
        let _ = write!(
            legend,
            " Against `{}`, after Holm's adjustment: ▲ better, ≈ equivalent (within the margin), \
             ▼ worse, ? undecided (Paired comparisons has the intervals).",
            md_text(r.name)
        );
    }
    let untested: Vec<&str> = (columns.iter())
        .filter(|c| c.unit != Unit::Times && c.compared.is_none())
        .map(|c| c.name.as_str())
        .collect();
    if decided && !untested.is_empty() {
        let _ = write!(
            legend,
            " No test of its own for {}: a mean over some of the OOD sets.",
            untested.join(", ")
        );
    }
    if let Some(score) = summary.ood_scores.first() {
        let _ = write!(legend, " OOD AUROC with the `{score}` score.");
    }
    if columns.iter().any(|c| c.unit == Unit::Times) {
        let _ = write!(
            legend,
            " Latency ×{b}: the time of a batch at the evaluation batch size over `{b}`'s, paired \
             per timing round; training ×{b}: the training wall time of everything the method \
             stands on over `{b}`'s.",
            b = summary.baseline()
        );
    }
    let _ = writeln!(out, "{legend}\n");
}
