//! `report.md`: every table of a run, with a legend.

use std::fmt::Write;

use super::{BASELINE_KIND, Group, NA, Unit, cell, groups, keys, latency_ratio, ratio};
use crate::results::{Cost, IdMetrics, OodMetrics, ShiftMetrics, Summary};

/// A column: header, how to show it, and how to read it from one run's metrics.
type Metric<T, V = f64> = (&'static str, Unit, fn(&T) -> V);

const ID: [Metric<IdMetrics>; 6] = [
    ("Accuracy (%) ↑", Unit::Percent, |m| m.accuracy),
    ("NLL ↓", Unit::Plain, |m| m.nll),
    ("Brier ↓", Unit::Plain, |m| m.brier),
    ("ECE ↓", Unit::Plain, |m| m.ece),
    ("AECE ↓", Unit::Plain, |m| m.aece),
    ("AURC ↓", Unit::Plain, |m| m.aurc),
];

const OOD: [Metric<OodMetrics>; 4] = [
    ("AUROC (%) ↑", Unit::Percent, |m| m.auroc),
    ("AUPR-In (%) ↑", Unit::Percent, |m| m.aupr_in),
    ("AUPR-Out (%) ↑", Unit::Percent, |m| m.aupr_out),
    ("FPR95 (%) ↓", Unit::Percent, |m| m.fpr95),
];

const SHIFT: [Metric<ShiftMetrics>; 3] = [
    ("Accuracy (%) ↑", Unit::Percent, |m| m.accuracy),
    ("NLL ↓", Unit::Plain, |m| m.nll),
    ("ECE ↓", Unit::Plain, |m| m.ece),
];

const LATENCY_B1: &str = "Latency b1 (ms) ↓";
const LATENCY: &str = "Latency (ms) ↓";

const COST: [Metric<Cost, Option<f64>>; 5] = [
    ("Params ↓", Unit::Count, |c| Some(c.params as f64)),
    ("FLOPs/sample ↓", Unit::Count, |c| Some(c.flops as f64)),
    (LATENCY_B1, Unit::Plain, |c| Some(c.latency_ms_b1)),
    (LATENCY, Unit::Plain, |c| Some(c.latency_ms)),
    ("Peak mem (MiB) ↓", Unit::Mib, |c| {
        c.peak_mem_bytes.map(|b| b as f64)
    }),
];

/// The `report.md` of a run: methods, in-distribution, OOD (one table per set), shift and cost
/// tables, with a legend.
pub fn render_markdown(summary: &Summary) -> String {
    let groups = groups(summary);
    let mut out = String::new();
    let seeds: Vec<String> = summary.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(out, "# {}\n", summary.experiment);
    let _ = writeln!(
        out,
        "Seeds: {}. Cells are mean ± sample standard deviation over seeds (the mean alone with one \
         seed); \"n/a\" marks a value missing or not finite in some seed. ↑ higher is better, \
         ↓ lower is better. Accuracy, AUROC, AUPR and FPR95 are percentages; ×single is the ratio \
         to the `{BASELINE_KIND}` method.\n",
        seeds.join(", ")
    );

    out.push_str("## Methods\n\n");
    let rows = groups
        .iter()
        .map(|g| {
            let seeds: Vec<String> = g.runs.iter().map(|r| r.seed.to_string()).collect();
            // A calibrated entry: its temperature per seed.
            let temperatures: Vec<String> = (g.runs.iter())
                .filter_map(|r| r.temperature.map(|t| format!("{t:.3}")))
                .collect();
            let calibration = match temperatures.is_empty() {
                true => "none".to_string(),
                false => format!("temperature (T = {})", temperatures.join(", ")),
            };
            vec![
                md_text(g.name),
                g.kind.to_string(),
                g.members.to_string(),
                seeds.join(", "),
                calibration,
            ]
        })
        .collect::<Vec<_>>();
    md_table(
        &mut out,
        &["Method", "Kind", "Members", "Seeds", "Calibration"].map(String::from),
        &rows,
        2,
    );
    out.push_str(
        "A `+ts` method is the method above it with post-hoc temperature scaling: one \
         temperature T divides every member's logits, fitted on the validation split by \
         minimising the NLL of the ensemble's mean prediction (never on test data); its cost is \
         the method's.\n\n",
    );

    out.push_str("## In-distribution\n\n");
    let header = header_with("Method", ID.iter().map(|m| m.0));
    let rows = method_rows(&groups, |g| {
        ID.iter()
            .map(|(_, unit, f)| cell(g.stat(|r| Some(f(&r.id))), *unit))
            .collect()
    });
    md_table(&mut out, &header, &rows, 1);

    out.push_str("## Out-of-distribution\n\n");
    let sets = keys(summary, |r| r.ood.keys());
    if sets.is_empty() {
        out.push_str("No OOD sets in this run.\n\n");
    }
    for &set in &sets {
        let _ = writeln!(out, "### {}\n", md_text(set));
        let header = header_with("Method", OOD.iter().map(|m| m.0));
        let rows = method_rows(&groups, |g| {
            OOD.iter()
                .map(|(_, unit, f)| cell(g.stat(|r| r.ood.get(set).map(f)), *unit))
                .collect()
        });
        md_table(&mut out, &header, &rows, 1);
    }

    out.push_str("## Distribution shift\n\n");
    let shifts = keys(summary, |r| r.shift.keys());
    if shifts.is_empty() {
        out.push_str("No shifted sets in this run.\n\n");
    } else {
        out.push_str(
            "Per `<corruption>-<severity>`; \"mean\" averages each seed over all shifts first.\n\n",
        );
        let mut header = vec!["Shift".to_string()];
        header.extend(header_with("Method", SHIFT.iter().map(|m| m.0)));
        let mut rows = Vec::new();
        for &shift in &shifts {
            for g in &groups {
                let mut row = vec![md_text(shift), md_text(g.name)];
                row.extend(
                    SHIFT
                        .iter()
                        .map(|(_, unit, f)| cell(g.stat(|r| r.shift.get(shift).map(f)), *unit)),
                );
                rows.push(row);
            }
        }
        for g in &groups {
            let mut row = vec!["mean".to_string(), md_text(g.name)];
            row.extend(
                SHIFT
                    .iter()
                    .map(|(_, unit, f)| cell(g.stat(|r| r.mean_shift(*f)), *unit)),
            );
            rows.push(row);
        }
        md_table(&mut out, &header, &rows, 2);
    }

    out.push_str("## Cost\n\n");
    out.push_str(
        "Parameters and FLOPs per sample count every member; latency at the evaluation batch is \
         per batch, the median of calls timed with every method of the seed interleaved \
         (round-robin, after a warm-up); \"Latency spread\" below gives the quartiles. A latency \
         ×single is the median over the timing rounds of the method's time divided by `single`'s \
         in the same round (the mean of that over seeds), so a slow spell of the machine \
         cancels.\n\n",
    );
    let base = groups.iter().find(|g| g.kind == BASELINE_KIND);
    let mut header = vec!["Method".to_string()];
    for (name, ..) in COST {
        header.push(name.to_string());
        if base.is_some() {
            header.push("×single".to_string());
        }
    }
    let rows = method_rows(&groups, |g| {
        let mut row = Vec::new();
        for (name, unit, f) in COST {
            let stat = g.stat(|r| f(&r.cost));
            // Latency ratios are paired per timing round with `single` (see `Cost`).
            let paired: Option<fn(&Cost) -> Option<f64>> = match name {
                LATENCY_B1 => Some(|c| c.latency_b1_x_single),
                LATENCY => Some(|c| c.latency_x_single),
                _ => None,
            };
            let ratio = base.map(|b| match paired {
                Some(p) => latency_ratio(g, b, |c| f(c).unwrap_or(f64::NAN), p),
                None => ratio(stat.as_ref(), b.stat(|r| f(&r.cost)).as_ref()),
            });
            row.push(cell(stat, unit));
            if let Some(ratio) = ratio {
                row.push(ratio.map_or(NA.to_string(), |x| format!("{x:.2}×")));
            }
        }
        row
    });
    md_table(&mut out, &header, &rows, 1);
    super::evidence::render(&mut out, summary, &groups);
    out
}

pub(super) fn header_with<'a>(first: &'a str, rest: impl Iterator<Item = &'a str>) -> Vec<String> {
    std::iter::once(first)
        .chain(rest)
        .map(String::from)
        .collect()
}

/// One markdown row per method: its name, then the given cells.
pub(super) fn method_rows(
    groups: &[Group],
    cells: impl Fn(&Group) -> Vec<String>,
) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| std::iter::once(md_text(g.name)).chain(cells(g)).collect())
        .collect()
}

/// Escapes the one character that would break a table cell.
pub(super) fn md_text(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A GitHub-flavoured table; the first `text_cols` columns are left-aligned, the rest (numbers)
/// right-aligned.
pub(super) fn md_table(
    out: &mut String,
    header: &[String],
    rows: &[Vec<String>],
    text_cols: usize,
) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let rule: Vec<&str> = (0..header.len())
        .map(|i| if i < text_cols { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "|{}|", rule.join("|"));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}
