//! Human-readable views of a [`Summary`]: the run's `report.md` and a compact terminal table.
//!
//! Runs are grouped by method name, methods in the order of the first seed. A cell is the mean ±
//! sample standard deviation (n − 1) over seeds, the mean alone with one seed, and "n/a" when some
//! seed lacks the value or it is not finite (a mean over the remaining seeds would mislead).
//! Ratios ("×single") divide a method's mean by the mean of the first method of kind `single`.

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::results::{Cost, IdMetrics, MethodResult, OodMetrics, ShiftMetrics, Summary};

const NA: &str = "n/a";
/// The kind whose cost the ratios are relative to.
const BASELINE_KIND: &str = "single";

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

const COST: [Metric<Cost, Option<f64>>; 5] = [
    ("Params ↓", Unit::Count, |c| Some(c.params as f64)),
    ("FLOPs/sample ↓", Unit::Count, |c| Some(c.flops as f64)),
    ("Latency b1 (ms) ↓", Unit::Plain, |c| {
        Some(c.latency_ms_b1)
    }),
    ("Latency (ms) ↓", Unit::Plain, |c| Some(c.latency_ms)),
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
            vec![
                md_text(g.name),
                g.kind.to_string(),
                g.members.to_string(),
                seeds.join(", "),
            ]
        })
        .collect::<Vec<_>>();
    md_table(
        &mut out,
        &["Method", "Kind", "Members", "Seeds"].map(String::from),
        &rows,
        2,
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
                    .map(|(_, unit, f)| cell(g.stat(|r| mean_shift(r, *f)), *unit)),
            );
            rows.push(row);
        }
        md_table(&mut out, &header, &rows, 2);
    }

    out.push_str("## Cost\n\n");
    out.push_str("Parameters and FLOPs per sample count every member; latency at the evaluation batch is per batch.\n\n");
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
        for (_, unit, f) in COST {
            let stat = g.stat(|r| f(&r.cost));
            let ratio = base.map(|b| ratio(stat.as_ref(), b.stat(|r| f(&r.cost)).as_ref()));
            row.push(cell(stat, unit));
            if let Some(ratio) = ratio {
                row.push(ratio.map_or(NA.to_string(), |x| format!("{x:.2}×")));
            }
        }
        row
    });
    md_table(&mut out, &header, &rows, 1);
    out
}

/// A compact fixed-width table of the headline means per method, for the end of a run: accuracy,
/// NLL, ECE, AUROC per OOD set, mean shift accuracy, and params and batch-1 latency as ratios to
/// the `single` method (absolute values when there is none).
pub fn render_terminal(summary: &Summary) -> String {
    let groups = groups(summary);
    let sets = keys(summary, |r| r.ood.keys());
    let has_shift = summary.methods.iter().any(|r| !r.shift.is_empty());
    let base = groups.iter().find(|g| g.kind == BASELINE_KIND);
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
                    g.stat(|r| mean_shift(r, |m| m.accuracy)),
                    Unit::Percent,
                ));
            }
            match base {
                Some(base) => {
                    for f in [params, latency] {
                        let ratio = ratio(g.stat(f).as_ref(), base.stat(f).as_ref());
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

    let mut out = format!(
        "{}: means over {} seed(s)\n",
        summary.experiment,
        summary.seeds.len()
    );
    out.push_str(&text_table(&header, &rows));
    out
}

/// All runs of one method, one per seed.
struct Group<'a> {
    name: &'a str,
    kind: &'a str,
    members: usize,
    runs: Vec<&'a MethodResult>,
}

struct Stat {
    mean: f64,
    /// Sample standard deviation; `None` with a single seed.
    std: Option<f64>,
}

impl Group<'_> {
    /// Mean and spread of a value over this method's seeds; `None` if any seed lacks it or it is
    /// not finite.
    fn stat(&self, value: impl Fn(&MethodResult) -> Option<f64>) -> Option<Stat> {
        let xs = self
            .runs
            .iter()
            .map(|r| value(r).filter(|x| x.is_finite()))
            .collect::<Option<Vec<f64>>>()?;
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let std = (xs.len() > 1)
            .then(|| (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
        Some(Stat { mean, std })
    }
}

/// Groups runs by method name: the first seed's methods in order, then any others as they appear.
fn groups(summary: &Summary) -> Vec<Group<'_>> {
    let first = summary.seeds.first().copied();
    let (mut ordered, rest): (Vec<&MethodResult>, Vec<_>) =
        summary.methods.iter().partition(|r| Some(r.seed) == first);
    ordered.extend(rest);
    let mut groups: Vec<Group> = Vec::new();
    for r in ordered {
        match groups.iter_mut().find(|g| g.name == r.name) {
            Some(g) => g.runs.push(r),
            None => groups.push(Group {
                name: &r.name,
                kind: &r.kind,
                members: r.members,
                runs: vec![r],
            }),
        }
    }
    groups
}

/// The sorted union of some per-run keys (OOD sets, shifts) over all runs.
fn keys<'a, I: Iterator<Item = &'a String>>(
    summary: &'a Summary,
    of: impl Fn(&'a MethodResult) -> I,
) -> Vec<&'a str> {
    summary
        .methods
        .iter()
        .flat_map(of)
        .map(String::as_str)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// One run's mean of a shift metric over all its shifted sets.
fn mean_shift(r: &MethodResult, f: fn(&ShiftMetrics) -> f64) -> Option<f64> {
    (!r.shift.is_empty()).then(|| r.shift.values().map(f).sum::<f64>() / r.shift.len() as f64)
}

fn ratio(stat: Option<&Stat>, base: Option<&Stat>) -> Option<f64> {
    let (x, b) = (stat?.mean, base?.mean);
    (b != 0.0).then(|| x / b)
}

#[derive(Clone, Copy, PartialEq)]
enum Unit {
    /// A fraction shown as a percentage, 2 decimals.
    Percent,
    /// 4 decimals.
    Plain,
    /// A count with an SI suffix (k, M, G, T).
    Count,
    /// Bytes shown in MiB, 2 decimals.
    Mib,
}

impl Unit {
    fn show(self, x: f64) -> String {
        match self {
            Unit::Percent => format!("{:.2}", 100.0 * x),
            Unit::Plain => format!("{x:.4}"),
            Unit::Mib => format!("{:.2}", x / (1u64 << 20) as f64),
            Unit::Count => {
                let scaled = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
                    .into_iter()
                    .find(|(s, _)| x.abs() >= *s);
                match scaled {
                    Some((s, suffix)) => format!("{:.2}{suffix}", x / s),
                    None => format!("{x:.0}"),
                }
            }
        }
    }
}

fn cell(stat: Option<Stat>, unit: Unit) -> String {
    match stat {
        None => NA.to_string(),
        // Counts (params, FLOPs) do not depend on the seed; "± 0" would only add noise.
        Some(Stat {
            mean,
            std: Some(sd),
        }) if !(unit == Unit::Count && sd == 0.0) => {
            format!("{} ± {}", unit.show(mean), unit.show(sd))
        }
        Some(Stat { mean, .. }) => unit.show(mean),
    }
}

fn mean_cell(stat: Option<Stat>, unit: Unit) -> String {
    stat.map_or(NA.to_string(), |s| unit.show(s.mean))
}

fn header_with<'a>(first: &'a str, rest: impl Iterator<Item = &'a str>) -> Vec<String> {
    std::iter::once(first)
        .chain(rest)
        .map(String::from)
        .collect()
}

/// One markdown row per method: its name, then the given cells.
fn method_rows(groups: &[Group], cells: impl Fn(&Group) -> Vec<String>) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| std::iter::once(md_text(g.name)).chain(cells(g)).collect())
        .collect()
}

/// Escapes the one character that would break a table cell.
fn md_text(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A GitHub-flavoured table; the first `text_cols` columns are left-aligned, the rest (numbers)
/// right-aligned.
fn md_table(out: &mut String, header: &[String], rows: &[Vec<String>], text_cols: usize) {
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
