//! The report's answer, before any detail: a few sentences drawn from the numbers (the best
//! method per headline metric, what the reference buys over the baseline and at what cost, how
//! much of that the cheaper methods keep, what the seeds decide), then one compact table with
//! the best value per column in bold and each verdict against the reference as a mark that the
//! page colours.

mod columns;
mod sentences;
mod table;

use std::fmt::Write;

use uq_metrics::Verdict;

use super::groups::{Group, baseline};
use crate::summary::Summary;

/// The verdict marks, as the table writes them and the page colours them (`render_html`).
pub const MARKS: [(Verdict, char); 4] = [
    (Verdict::Better, '▲'),
    (Verdict::Worse, '▼'),
    (Verdict::Equivalent, '≈'),
    (Verdict::Inconclusive, '?'),
];

/// `## Headline`: the sentences, the compact table with its legend, and the lines that qualify
/// it (unequal training budgets, missed HetDPT budgets).
pub(super) fn render(out: &mut String, summary: &Summary, groups: &[Group]) {
    let base = baseline(summary, groups);
    let columns = columns::columns(summary, base);
    let reference = reference(summary, groups);
    out.push_str("## Headline\n\n");
    let mut sentences = vec![sentences::best(&columns, groups)];
    // Against itself the baseline has no gain to state or to keep.
    if let (Some(r), Some(b)) = (reference, base)
        && r.name != b.name
    {
        sentences.push(sentences::reference(&columns, r, b));
        sentences.push(sentences::kept(&columns, groups, r, b));
    }
    sentences.push(sentences::decided(summary, &columns));
    let _ = writeln!(out, "{}\n", sentences.join(" "));
    table::table(out, summary, groups, &columns);
    table::legend(out, summary, &columns, reference);
    super::evidence::budget_note(out, groups, base);
    super::verdicts::missed_budgets(out, summary);
}

/// The run's reference method (`crate::roles`), if the run has it.
fn reference<'g>(summary: &Summary, groups: &'g [Group<'g>]) -> Option<&'g Group<'g>> {
    (groups.iter()).find(|g| summary.is_reference(g.name, g.kind, g.variant_of().is_some()))
}
