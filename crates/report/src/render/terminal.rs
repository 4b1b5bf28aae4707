//! The compact table printed at the end of a run.

use std::fmt::Write;

use super::cells::{NA, Unit, mean_cell};
use super::groups::{baseline, groups, keys, latency_ratio, ratio};
use crate::summary::{MethodResult, Summary};

/// A compact fixed-width table of the headline means per method, for the end of a run: accuracy,
/// NLL, ECE, AUROC per OOD set, mean shift accuracy, and params and batch-1 latency as ratios to
/// the baseline method (absolute values when there is none).
pub fn render_terminal(summary: &Summary) -> String {
    let groups = groups(summary);
    let sets = keys(summary, |r| r.ood.keys());
    let has_shift = summary.methods.iter().any(|r| !r.shift.is_empty());
    let base = baseline(summary, &groups);
    let params = |r: &MethodResult| Some(r.cost.params as f64);
    let latency = |r: &MethodResult| Some(r.cost.latency_ms_b1);

    let mut header: Vec<String> = ["method", "acc%", "NLL", "ECE"].map(String::from).to_vec();
    header.extend(sets.iter().map(|s| format!("AUROC% {s}")));
    if has_shift {
        header.push("shift acc%".into());
    }
    header.extend(match base {
        Some(_) => ["params xS", "lat b1 xS"].map(String::from),
        None => ["params", "lat b1 ms"].map(String::from),
    });

    let rows: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let mut row = vec![g.name.to_string()];
            row.push(mean_cell(g.stat(|r| Some(r.id.accuracy)), Unit::Percent));
            row.push(mean_cell(g.stat(|r| Some(r.id.nll)), Unit::Plain));
            row.push(mean_cell(g.stat(|r| Some(r.id.ece)), Unit::Plain));
            for &set in &sets {
                row.push(mean_cell(
                    g.stat(|r| r.ood.get(set).map(|m| m.auroc)),
                    Unit::Percent,
                ));
            }
            if has_shift {
                row.push(mean_cell(
                    g.stat(|r| r.mean_shift(|m| m.accuracy)),
                    Unit::Percent,
                ));
            }
            match base {
                Some(base) => {
                    let params = ratio(g.stat(params).as_ref(), base.stat(params).as_ref());
                    let paired = |c: &crate::summary::Cost| c.latency_b1_x_single;
                    let latency = latency_ratio(g, base, |c| c.latency_ms_b1, paired);
                    for ratio in [params, latency] {
                        row.push(ratio.map_or(NA.to_string(), |x| format!("{x:.2}")));
                    }
                }
                None => {
                    row.push(mean_cell(g.stat(params), Unit::Count));
                    row.push(mean_cell(g.stat(latency), Unit::Plain));
                }
            }
            row
        })
        .collect();

    let mut out = String::new();
    if !summary.claims.is_empty() {
        let (header, rows) = super::claims::claim_rows(summary, false);
        out.push_str("declared claims (Holm over them; 90% interval; seeds for 80% power):\n");
        out.push_str(&text_table(&header, &rows));
    }
    let _ = writeln!(
        out,
        "{}: means over {} seed(s)",
        summary.experiment,
        summary.seeds.len()
    );
    out.push_str(&text_table(&header, &rows));
    out.push_str(&shares(summary, &sets));
    out
}

/// The share of the reference's gain kept, on the columns of the table (nothing without).
fn shares(summary: &Summary, sets: &[&str]) -> String {
    let mut shown: Vec<String> = ["id.accuracy", "id.nll", "id.ece"]
        .map(String::from)
        .to_vec();
    shown.extend(sets.iter().map(|s| format!("ood.{s}.auroc")));
    shown.push("shift.mean.accuracy".into());
    let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
    let Some((header, rows)) = super::claims::retained_rows(summary, Some(&shown)) else {
        return String::new();
    };
    let first = &summary.retained[0];
    format!(
        "share of {}'s gain over {} kept [Fieller 95%]:\n{}",
        first.reference,
        first.baseline,
        text_table(&header, &rows)
    )
}

/// Fixed-width plain text: the first column left-aligned, the rest right-aligned.
fn text_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}
