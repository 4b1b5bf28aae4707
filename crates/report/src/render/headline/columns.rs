//! The compact table's columns: which the run has, and how each reads a method's mean.

use super::super::cells::Unit;
use super::super::groups::{Group, keys, latency_ratio, ratio};
use crate::summary::Summary;

/// A method's mean of a column's value over its seeds.
type Value<'a> = Box<dyn Fn(&Group) -> Option<f64> + 'a>;

/// A column of the compact table.
pub(super) struct Column<'a> {
    pub header: String,
    /// How a sentence names it ("accuracy", "OOD AUROC near").
    pub name: String,
    pub unit: Unit,
    pub higher_is_better: bool,
    /// The comparison's metric (`id.accuracy`, ...) when the column is tested against the
    /// reference.
    pub compared: Option<String>,
    /// The mean over a method's seeds.
    pub value: Value<'a>,
}

impl Column<'_> {
    /// The entries whose shown value is the column's best (all of them on a tie).
    pub fn best<'g>(&self, groups: &'g [Group<'g>]) -> Vec<&'g str> {
        let values: Vec<(&str, f64)> = (groups.iter())
            .filter_map(|g| Some((g.name, (self.value)(g)?)))
            .collect();
        let sign = if self.higher_is_better { 1.0 } else { -1.0 };
        let Some(top) = values.iter().map(|(_, v)| sign * v).reduce(f64::max) else {
            return Vec::new();
        };
        let shown = self.unit.show(sign * top);
        (values.into_iter())
            .filter(|(_, v)| self.unit.show(*v) == shown)
            .map(|(n, _)| n)
            .collect()
    }

    /// A value as a sentence writes it: the table's digits, `%` for a percentage.
    pub fn say(&self, value: f64) -> String {
        match self.unit {
            Unit::Percent => format!("{}%", self.unit.show(value)),
            unit => unit.show(value),
        }
    }
}

/// Accuracy, NLL, ECE, the headline score's OOD AUROC (per OOD group, else per set or their
/// mean), shifted accuracy, and latency and training time against the baseline: those the run has.
pub(super) fn columns<'a>(summary: &'a Summary, base: Option<&'a Group<'a>>) -> Vec<Column<'a>> {
    let metric = |header: &str, name: &str, unit, higher, key: &str, value| Column {
        header: header.into(),
        name: name.into(),
        unit,
        higher_is_better: higher,
        compared: Some(key.into()),
        value,
    };
    let mean = |f: fn(&crate::summary::MethodResult) -> Option<f64>| {
        Box::new(move |g: &Group| g.stat(f).map(|s| s.mean)) as Value
    };
    let mut out = vec![
        metric(
            "Accuracy (%) ↑",
            "accuracy",
            Unit::Percent,
            true,
            "id.accuracy",
            mean(|r| Some(r.id.accuracy)),
        ),
        metric(
            "NLL ↓",
            "NLL",
            Unit::Plain,
            false,
            "id.nll",
            mean(|r| Some(r.id.nll)),
        ),
        metric(
            "ECE ↓",
            "ECE",
            Unit::Plain,
            false,
            "id.ece",
            mean(|r| Some(r.id.ece)),
        ),
    ];
    out.extend(ood_columns(summary));
    if summary.methods.iter().any(|r| !r.shift.is_empty()) {
        out.push(metric(
            "Shifted acc. (%) ↑",
            "shifted accuracy",
            Unit::Percent,
            true,
            "shift.mean.accuracy",
            mean(|r| r.mean_shift(|m| m.accuracy)),
        ));
    }
    if let Some(base) = base {
        out.push(Column {
            header: format!("Latency ×{} ↓", base.name),
            name: "latency".into(),
            unit: Unit::Times,
            higher_is_better: false,
            compared: None,
            value: Box::new(move |g| {
                latency_ratio(g, base, |c| c.latency_ms, |c| c.latency_x_single)
            }),
        });
        let wall = |g: &Group| g.stat(|r| r.train_cost.as_ref().map(|c| c.wall_seconds));
        if wall(base).is_some() {
            out.push(Column {
                header: format!("Training ×{} ↓", base.name),
                name: "training time".into(),
                unit: Unit::Times,
                higher_is_better: false,
                compared: None,
                value: Box::new(move |g| ratio(wall(g).as_ref(), wall(base).as_ref())),
            });
        }
    }
    out
}

/// The OOD AUROC columns of the headline score: one per OOD group (`near`, `far`) whose sets
/// differ from the other's, else one per set (two at most; the mean over more).
fn ood_columns(summary: &Summary) -> Vec<Column<'_>> {
    let score = summary.ood_scores.first();
    let sets = keys(summary, |r| r.ood.keys());
    let first = summary.methods.first();
    let groups: Vec<(&str, Vec<String>)> = (["near", "far"].into_iter())
        .filter_map(|g| {
            let sets = first?.ood_groups.get(score?)?.get(g)?.sets.clone();
            Some((g, sets))
        })
        .collect();
    // The one set or all of them: the comparison that tests the same quantity.
    let compared = |of: &[String]| match of {
        [one] => Some(format!("ood.{one}.auroc")),
        _ if of.len() == sets.len() && of.len() > 1 => Some("ood.mean.auroc".into()),
        _ => None,
    };
    let alone = groups.len() == 1 || groups.windows(2).any(|w| w[0].1 == w[1].1);
    if !groups.is_empty() {
        let score = score.expect("groups come with a score").clone();
        let shown = if alone { &groups[..1] } else { &groups[..] };
        return (shown.iter())
            .map(|(group, of)| {
                let (group, score) = (group.to_string(), score.clone());
                Column {
                    header: match alone {
                        true => "OOD AUROC (%) ↑".into(),
                        false => format!("OOD {group} (%) ↑"),
                    },
                    name: match alone {
                        true => "OOD AUROC".into(),
                        false => format!("OOD AUROC {group}"),
                    },
                    unit: Unit::Percent,
                    higher_is_better: true,
                    compared: compared(of),
                    value: Box::new(move |g| {
                        g.stat(|r| Some(r.ood_groups.get(&score)?.get(&group)?.auroc))
                            .map(|s| s.mean)
                    }),
                }
            })
            .collect();
    }
    let per_set: Vec<Vec<String>> = match sets.len() {
        0 => Vec::new(),
        1 | 2 => sets.iter().map(|s| vec![s.to_string()]).collect(),
        _ => vec![sets.iter().map(|s| s.to_string()).collect()],
    };
    (per_set.into_iter())
        .map(|of| {
            let label = match of.as_slice() {
                [_] if sets.len() == 1 => String::new(),
                [one] => format!(" {one}"),
                _ => " mean".into(),
            };
            Column {
                header: format!("OOD{label} (%) ↑").replace("OOD (%)", "OOD AUROC (%)"),
                name: format!("OOD AUROC{label}"),
                unit: Unit::Percent,
                higher_is_better: true,
                compared: compared(&of),
                value: Box::new(move |g| {
                    let mean = |r: &crate::summary::MethodResult| {
                        let xs: Option<Vec<f64>> =
                            of.iter().map(|s| r.ood.get(s).map(|m| m.auroc)).collect();
                        xs.map(|xs| xs.iter().sum::<f64>() / xs.len() as f64)
                    };
                    g.stat(mean).map(|s| s.mean)
                }),
            }
        })
        .collect()
}
