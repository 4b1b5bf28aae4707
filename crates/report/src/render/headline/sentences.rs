//! The headline's sentences, each drawn from the compact table's columns.

use std::fmt::Write;

use uq_metrics::Verdict;

use super::super::cells::Unit;
use super::super::groups::Group;
use super::super::table::md_text;
use super::columns::Column;
use crate::summary::{Comparison, Summary};

/// What the headline says of a run of one seed, in place of verdicts.
const ONE_SEED: &str = "One seed: no comparison can be decided, since a paired test needs two \
                        seeds or more. Run more to decide them: `uqformer run FILE --seeds \
                        0,1,2,3,4`, or `[experiment] seeds` in the file.";

/// "Best: accuracy `a` (85.40%); NLL `b` (0.3677); ...": the metric columns' best entries.
pub(super) fn best(columns: &[Column], groups: &[Group]) -> String {
    let parts: Vec<String> = (columns.iter())
        .filter(|c| c.unit != Unit::Times)
        .filter_map(|c| {
            let best = c.best(groups);
            let value = (c.value)(groups.iter().find(|g| Some(&g.name) == best.first())?)?;
            let names: Vec<String> = best.iter().map(|n| format!("`{}`", md_text(n))).collect();
            Some(format!(
                "{} {} ({})",
                c.name,
                names.join(", "),
                c.say(value)
            ))
        })
        .collect();
    match parts.is_empty() {
        true => "No metric has a value for every seed.".into(),
        false => format!("Best: {}.", parts.join("; ")),
    }
}

/// What the reference gains over the baseline on accuracy and NLL, and at what cost.
pub(super) fn reference(columns: &[Column], reference: &Group, base: &Group) -> String {
    let diff = |name: &str| {
        let c = columns.iter().find(|c| c.name == name)?;
        let d = (c.value)(reference)? - (c.value)(base)?;
        Some(match c.unit {
            Unit::Percent => format!("{:+.2} points of {name}", 100.0 * d),
            _ => format!("{d:+.4} {name}"),
        })
    };
    let cost: Vec<String> = (columns.iter())
        .filter(|c| c.unit == Unit::Times)
        .filter_map(|c| {
            Some(format!(
                "{} its {}",
                c.unit.show((c.value)(reference)?),
                c.name
            ))
        })
        .collect();
    let gains: Vec<String> = ["accuracy", "NLL"].into_iter().filter_map(diff).collect();
    let mut sentence = format!(
        "The reference, `{}` ({} member{}), has {} against `{}`",
        md_text(reference.name),
        reference.members,
        if reference.members == 1 { "" } else { "s" },
        match gains.is_empty() {
            true => "no comparable metric".into(),
            false => gains.join(" and "),
        },
        md_text(base.name),
    );
    if !cost.is_empty() {
        let _ = write!(sentence, ", at {}", cost.join(" and "));
    }
    sentence + "."
}

/// For accuracy and NLL, the method cheaper to run than the reference that keeps the largest
/// share of the reference's gain over the baseline (negative: worse than the baseline).
pub(super) fn kept(
    columns: &[Column],
    groups: &[Group],
    reference: &Group,
    base: &Group,
) -> String {
    let Some(latency) = columns.iter().find(|c| c.name == "latency") else {
        return String::new();
    };
    let Some(limit) = (latency.value)(reference) else {
        return String::new();
    };
    let cheaper: Vec<(&Group, f64)> = (groups.iter())
        .filter(|g| g.variant_of().is_none() && g.name != base.name)
        .filter(|g| g.name != reference.name)
        .filter_map(|g| Some((g, (latency.value)(g).filter(|x| *x < limit)?)))
        .collect();
    if cheaper.is_empty() {
        return "No other method is cheaper to run than the reference.".into();
    }
    // Per metric, the best keeper (or why there is none); then one clause per method.
    let mut kept: Vec<(&Group, f64, Vec<String>)> = Vec::new();
    let mut none = Vec::new();
    for c in columns
        .iter()
        .filter(|c| c.name == "accuracy" || c.name == "NLL")
    {
        let sign = if c.higher_is_better { 1.0 } else { -1.0 };
        let (Some(b), Some(r)) = ((c.value)(base), (c.value)(reference)) else {
            continue;
        };
        let gain = sign * (r - b);
        let best = (cheaper.iter())
            .filter_map(|(g, x)| Some((*g, *x, sign * ((c.value)(g)? - b) / gain)))
            .max_by(|a, b| a.2.total_cmp(&b.2));
        match best {
            Some((g, x, share)) if gain > 0.0 && share > 0.0 => {
                let part = format!("{:.0}% of its {} gain", 100.0 * share, c.name);
                match kept.iter_mut().find(|k| k.0.name == g.name) {
                    Some(k) => k.2.push(part),
                    None => kept.push((g, x, vec![part])),
                }
            }
            _ if gain <= 0.0 => none.push(format!("it has no {} gain to keep", c.name)),
            _ => none.push(format!("none keeps any of its {} gain", c.name)),
        }
    }
    let parts: Vec<String> = (kept.iter())
        .map(|(g, x, parts)| {
            format!(
                "`{}` keeps the most: {}, at {} `{}`'s latency",
                md_text(g.name),
                parts.join(" and "),
                Unit::Times.show(*x),
                md_text(base.name)
            )
        })
        .chain(none)
        .collect();
    match parts.is_empty() {
        true => String::new(),
        false => {
            let of = match cheaper.len() {
                1 => "the one method".to_string(),
                n => format!("the {n} methods"),
            };
            format!("Of {of} cheaper to run than it, {}.", parts.join("; "))
        }
    }
}

/// How the table's comparisons with the reference came out after Holm's adjustment, and which
/// methods are equivalent or better on all of them; with one seed, how to get verdicts.
pub(super) fn decided(summary: &Summary, columns: &[Column]) -> String {
    let Some(first) = summary.comparisons.first() else {
        return String::new();
    };
    if first.n_seeds < 2 {
        return ONE_SEED.into();
    }
    let shown: Vec<&Comparison> = (summary.comparisons.iter())
        .filter(|c| {
            columns
                .iter()
                .any(|k| k.compared.as_deref() == Some(&c.metric))
        })
        .collect();
    let count = |v: Verdict| {
        shown
            .iter()
            .filter(|c| c.decision.verdict_holm == v)
            .count()
    };
    let mut methods: Vec<&str> = Vec::new();
    for c in &shown {
        if !methods.contains(&c.method.as_str()) {
            methods.push(&c.method);
        }
    }
    let holding: Vec<String> = (methods.iter())
        .filter(|m| {
            (shown.iter().filter(|c| c.method == **m)).all(|c| {
                matches!(
                    c.decision.verdict_holm,
                    Verdict::Better | Verdict::Equivalent
                )
            })
        })
        .map(|m| format!("`{}`", md_text(m)))
        .collect();
    format!(
        "Over {} seeds, after Holm's adjustment across all {} tests of this report, the {} \
         comparisons with `{}` in the table read {} better, {} equivalent, {} worse and {} \
         undecided; equivalent or better on all of them: {}.",
        first.n_seeds,
        2 * summary.comparisons.len(),
        shown.len(),
        md_text(&first.reference),
        count(Verdict::Better),
        count(Verdict::Equivalent),
        count(Verdict::Worse),
        count(Verdict::Inconclusive),
        match holding.is_empty() {
            true => "none".into(),
            false => holding.join(", "),
        }
    )
}
