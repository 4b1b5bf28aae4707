//! `report.md`: every table of a run, with a legend.

use std::fmt::Write;

use super::cells::{NA, Unit, cell};
use super::figures::FigureFile;
use super::groups::{Group, baseline, groups, keys, latency_ratio, ratio};
use super::table::{header_with, md_table, md_text, method_rows};
use uq_metrics::OodScore;

use crate::summary::{
    Cost, GroupMetrics, IdMetrics, MethodResult, OodMetrics, ShiftMetrics, Summary, Variant,
};

/// A column: header, how to show it, and how to read it from one run's metrics.
type Metric<T, V = f64> = (&'static str, Unit, fn(&T) -> V);

const ID: [Metric<IdMetrics>; 8] = [
    ("Accuracy (%) ↑", Unit::Percent, |m| m.accuracy),
    ("NLL ↓", Unit::Plain, |m| m.nll),
    ("Brier ↓", Unit::Plain, |m| m.brier),
    ("ECE ↓", Unit::Plain, |m| m.ece),
    ("AECE ↓", Unit::Plain, |m| m.aece),
    ("cw-ECE ↓", Unit::Plain, |m| m.classwise_ece),
    ("AURC ↓", Unit::Plain, |m| m.aurc),
    ("AUGRC ↓", Unit::Plain, |m| m.augrc),
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

/// The `report.md` of a run: the headline first (sentences and a compact table), then methods,
/// in-distribution, OOD (one table per set), shift and cost tables, with a legend, then the
/// evidence.
pub fn render_markdown(summary: &Summary) -> String {
    markdown(summary, None, "")
}

/// [`render_markdown`], with `lead` (the cost-UQ figure) shown under the headline and
/// `preface` (a join's runs) after it, before the detail.
pub(super) fn markdown(summary: &Summary, lead: Option<&FigureFile>, preface: &str) -> String {
    let groups = groups(summary);
    let mut out = String::new();
    let seeds: Vec<String> = summary.seeds.iter().map(u64::to_string).collect();
    let _ = writeln!(out, "# {}\n", summary.experiment);
    if let Some(p) = &summary.provenance {
        let _ = writeln!(out, "{}\n", p.line());
    }
    super::claims::claims_section(&mut out, summary);
    super::headline::render(&mut out, summary, &groups);
    if let Some(f) = lead {
        let _ = writeln!(out, "{}\n\n![{}]({})\n", f.caption, f.title, f.file);
    }
    out.push_str(preface);
    let _ = writeln!(
        out,
        "## Detail\n\nSeeds: {}. Cells are mean ± sample standard deviation over seeds (the mean \
         alone with one seed); \"n/a\" marks a value missing or not finite in some seed. ↑ higher \
         is better, ↓ lower is better. Accuracy, AUROC, AUPR and FPR95 are percentages; ×{b} \
         is the ratio to the `{b}` method.\n",
        seeds.join(", "),
        b = summary.baseline()
    );
    methods_table(&mut out, &groups);
    id_table(&mut out, &groups);
    ood_tables(&mut out, summary, &groups);
    shift_table(&mut out, summary, &groups);
    cost_table(&mut out, &groups, baseline(summary, &groups));
    super::evidence::render(&mut out, summary, &groups);
    out
}

/// The Methods table: kind, members, seeds and calibration of each entry.
fn methods_table(out: &mut String, groups: &[Group]) {
    out.push_str("## Methods\n\n");
    let rows = groups
        .iter()
        .map(|g| {
            // A calibrated entry: its temperature per seed, or their range beyond three seeds
            // (a long list would widen the table).
            let temperatures: Vec<f64> = g.runs.iter().filter_map(|r| r.temperature).collect();
            let (lo, hi) = (temperatures.iter())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), t| {
                    (a.min(*t), b.max(*t))
                });
            let calibration = match temperatures.len() {
                0 => "none".to_string(),
                1..=3 => {
                    let each: Vec<String> =
                        temperatures.iter().map(|t| format!("{t:.3}")).collect();
                    format!("temperature (T = {})", each.join(", "))
                }
                n => format!("temperature (T = {lo:.3} – {hi:.3} over {n} seeds)"),
            };
            vec![
                md_text(g.name),
                g.kind.to_string(),
                g.members.to_string(),
                g.runs.len().to_string(),
                calibration,
            ]
        })
        .collect::<Vec<_>>();
    md_table(
        out,
        &["Method", "Kind", "Members", "Seeds", "Calibration"].map(String::from),
        &rows,
        2,
    );
    out.push_str(
        "A `+ts` method is the method above it with post-hoc temperature scaling: one \
         temperature T divides every member's logits, fitted on the validation split by \
         minimising the NLL of the ensemble's mean prediction (never on test data); its cost is \
         the method's. A `+bf16` method is the method above it evaluated in bf16 (`[eval] \
         precision = \"bf16\"`; its own latency and memory, compared with f32 under Cost).\n\n",
    );
}

/// In-distribution metrics, one row per method.
fn id_table(out: &mut String, groups: &[Group]) {
    out.push_str("## In-distribution\n\n");
    let header = header_with("Method", ID.iter().map(|m| m.0));
    let rows = method_rows(groups, |g| {
        ID.iter()
            .map(|(_, unit, f)| cell(g.stat(|r| Some(f(&r.id))), *unit))
            .collect()
    });
    md_table(out, &header, &rows, 1);
}

/// One table per OOD set, then one per listed OOD score.
fn ood_tables(out: &mut String, summary: &Summary, groups: &[Group]) {
    out.push_str("## Out-of-distribution\n\n");
    let sets = keys(summary, |r| r.ood.keys());
    if sets.is_empty() {
        out.push_str("No OOD sets in this run.\n\n");
    }
    for &set in &sets {
        let _ = writeln!(out, "### {}\n", md_text(set));
        let header = header_with("Method", OOD.iter().map(|m| m.0));
        let rows = method_rows(groups, |g| {
            OOD.iter()
                .map(|(_, unit, f)| cell(g.stat(|r| r.ood.get(set).map(f)), *unit))
                .collect()
        });
        md_table(out, &header, &rows, 1);
    }
    score_tables(out, summary, groups, &sets);
}

/// Each shift, then the mean over shifts, per method.
fn shift_table(out: &mut String, summary: &Summary, groups: &[Group]) {
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
            for g in groups {
                let mut row = vec![md_text(shift), md_text(g.name)];
                row.extend(
                    SHIFT
                        .iter()
                        .map(|(_, unit, f)| cell(g.stat(|r| r.shift.get(shift).map(f)), *unit)),
                );
                rows.push(row);
            }
        }
        for g in groups {
            let mut row = vec!["mean".to_string(), md_text(g.name)];
            row.extend(
                SHIFT
                    .iter()
                    .map(|(_, unit, f)| cell(g.stat(|r| r.mean_shift(*f)), *unit)),
            );
            rows.push(row);
        }
        md_table(out, &header, &rows, 2);
    }
}

/// Parameters, FLOPs, latencies and memory, with ratios to the baseline, then bf16 against f32.
fn cost_table(out: &mut String, groups: &[Group], base: Option<&Group>) {
    out.push_str("## Cost\n\n");
    out.push_str(
        "Parameters and FLOPs per sample count every member; latency at the evaluation batch is \
         per batch, the median of calls timed with every method of the seed interleaved \
         (round-robin, after a warm-up); \"Latency spread\" below gives the quartiles.",
    );
    if let Some(b) = base {
        let _ = write!(
            out,
            " A latency ×{0} is the median over the timing rounds of the method's time divided \
             by `{0}`'s in the same round (the mean of that over seeds), so a slow spell of the \
             machine cancels.",
            b.name
        );
    }
    out.push_str("\n\n");
    let mut header = vec!["Method".to_string()];
    for (name, ..) in COST {
        header.push(name.to_string());
        if let Some(b) = base {
            header.push(format!("×{}", b.name));
        }
    }
    let rows = method_rows(groups, |g| {
        let mut row = Vec::new();
        for (name, unit, f) in COST {
            let stat = g.stat(|r| f(&r.cost));
            // Latency ratios are paired per timing round with the baseline (see `Cost`).
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
                row.push(ratio.map_or(NA.to_string(), |x| Unit::Times.show(x)));
            }
        }
        row
    });
    md_table(out, &header, &rows, 1);
    if let Some(base) = base {
        precision_table(out, groups, base);
    }
}

/// One table per listed OOD score: each set's AUROC and FPR95, then each group's means.
fn score_tables(out: &mut String, summary: &Summary, groups: &[Group], sets: &[&str]) {
    if sets.is_empty() || summary.ood_scores.is_empty() {
        return;
    }
    out.push_str(
        "## OOD scores\n\nEvery score listed in `[data] ood_score` (higher = more OOD; the \
         first fills the tables above). A feature-space detector is fitted per member on the \
         training split's features (never on validation, test or OOD data) and the members' \
         scores are averaged. Near and far are the means over each group's sets \
         (`[data] ood_groups`), shown when a group has more than one.\n\n",
    );
    for name in &summary.ood_scores {
        let about = name.parse::<OodScore>().map_or("", OodScore::about);
        let _ = writeln!(out, "- `{name}`: {about}.");
    }
    out.push('\n');
    let present = keys(summary, |r| r.ood_groups.values().flat_map(|g| g.keys()));
    // A group of one set would repeat that set's columns.
    let one_set = |group: &str| {
        (summary.methods.iter())
            .flat_map(|r| r.ood_groups.values())
            .filter_map(|g| g.get(group))
            .all(|g| g.sets.len() == 1)
    };
    let group_names: Vec<&str> = (["near", "far"].into_iter())
        .filter(|g| present.contains(g) && !one_set(g))
        .collect();
    for score in &summary.ood_scores {
        let _ = writeln!(out, "### `{score}`\n");
        let mut header = vec!["Method".to_string()];
        for set in sets.iter().chain(&group_names) {
            header.extend(["AUROC (%) ↑", "FPR95 (%) ↓"].map(|m| format!("{} {m}", md_text(set))));
        }
        let rows = method_rows(groups, |g| {
            let mut row = Vec::new();
            for &set in sets {
                let metric = |f: fn(&OodMetrics) -> f64| {
                    cell(
                        g.stat(|r| r.ood_scores.get(score)?.get(set).map(f)),
                        Unit::Percent,
                    )
                };
                row.extend([metric(|m| m.auroc), metric(|m| m.fpr95)]);
            }
            for &group in &group_names {
                let metric = |f: fn(&GroupMetrics) -> f64| {
                    cell(
                        g.stat(|r| r.ood_groups.get(score)?.get(group).map(f)),
                        Unit::Percent,
                    )
                };
                row.extend([metric(|m| m.auroc), metric(|m| m.fpr95)]);
            }
            row
        });
        md_table(out, &header, &rows, 1);
    }
}

/// What bf16 changes, for each `<method>+bf16` entry against its f32 method: metric differences
/// (bf16 − f32, means over seeds) and the latency and memory ratios bf16 / f32.
fn precision_table(out: &mut String, groups: &[Group], base: &Group) {
    let pairs: Vec<(&Group, &Group)> = (groups.iter())
        .filter(|g| g.runs.iter().any(|r| r.variant == Some(Variant::Bf16)))
        .filter_map(|low| {
            let f32_name = low.variant_of()?;
            Some((low, groups.iter().find(|g| g.name == f32_name)?))
        })
        .collect();
    if pairs.is_empty() {
        return;
    }
    out.push_str("### bf16 against f32\n\n");
    let _ = write!(
        out,
        "Each `+bf16` entry is its method evaluated with weights and input images cast to bf16 \
         (logits read back in f32). Differences are bf16 − f32 (accuracy in points); the ratios \
         are bf16 / f32, latency from the ratios to `{}` paired per timing round.\n\n",
        base.name
    );
    let mean = |g: &Group, f: fn(&MethodResult) -> f64| g.stat(|r| Some(f(r))).map(|s| s.mean);
    let diff = |low: &Group, high: &Group, f: fn(&MethodResult) -> f64, scale: f64, digits| match (
        mean(low, f),
        mean(high, f),
    ) {
        (Some(a), Some(b)) => format!("{:+.digits$}", scale * (a - b)),
        _ => NA.to_string(),
    };
    let over = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) if y != 0.0 => Unit::Times.show(x / y),
        _ => NA.to_string(),
    };
    let latency = |g: &Group, b1: bool| match b1 {
        true => latency_ratio(g, base, |c| c.latency_ms_b1, |c| c.latency_b1_x_single),
        false => latency_ratio(g, base, |c| c.latency_ms, |c| c.latency_x_single),
    };
    let memory = |g: &Group| (g.stat(|r| r.cost.peak_mem_bytes.map(|b| b as f64))).map(|s| s.mean);
    let rows: Vec<Vec<String>> = (pairs.iter())
        .map(|(low, high)| {
            vec![
                md_text(low.name),
                diff(low, high, |r| r.id.accuracy, 100.0, 2),
                diff(low, high, |r| r.id.nll, 1.0, 4),
                diff(low, high, |r| r.id.ece, 1.0, 4),
                over(latency(low, true), latency(high, true)),
                over(latency(low, false), latency(high, false)),
                over(memory(low), memory(high)),
            ]
        })
        .collect();
    let header = [
        "Method",
        "Δ accuracy",
        "Δ NLL",
        "Δ ECE",
        "Latency b1",
        "Latency",
        "Peak mem",
    ];
    md_table(out, &header.map(String::from), &rows, 1);
}
