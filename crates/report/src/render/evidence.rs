//! The report's evidence sections: latency spread, training cost, diversity and conformal sets,
//! then the paired comparisons against the reference method ([`super::verdicts`]).

use std::fmt::Write;

use super::cells::{NA, Unit, cell};
use super::groups::{Group, baseline, keys};
use super::table::{header_with, md_table, md_text, method_rows};
use crate::summary::{Cost, Summary};

/// Appends every evidence section the summary has data for.
pub(super) fn render(out: &mut String, summary: &Summary, groups: &[Group]) {
    latency_spread(out, groups);
    training(out, groups, baseline(summary, groups));
    diversity(out, summary, groups);
    sampling(out, summary, groups);
    conformal(out, groups);
    super::claims::retained_section(out, summary);
    super::verdicts::comparisons(out, summary);
}

fn latency_spread(out: &mut String, groups: &[Group]) {
    out.push_str("### Latency spread\n\n");
    out.push_str(
        "Median and quartiles [Q1, Q3] of the timed calls (ms), each the mean over seeds; a wide \
         spread says the machine was noisy while the methods were timed.\n\n",
    );
    let header = header_with(
        "Method",
        ["Latency b1 [Q1, Q3]", "Latency [Q1, Q3]"].into_iter(),
    );
    let rows = method_rows(groups, |g| {
        let mean = |f: fn(&Cost) -> f64| g.stat(|r| Some(f(&r.cost))).map(|s| s.mean);
        let spread =
            |[q1, median, q3]: [fn(&Cost) -> f64; 3]| match (mean(q1), mean(median), mean(q3)) {
                (Some(a), Some(m), Some(b)) => format!("{m:.3} [{a:.3}, {b:.3}]"),
                _ => NA.to_string(),
            };
        vec![
            spread([
                |c| c.latency_ms_b1_q1,
                |c| c.latency_ms_b1,
                |c| c.latency_ms_b1_q3,
            ]),
            spread([|c| c.latency_ms_q1, |c| c.latency_ms, |c| c.latency_ms_q3]),
        ]
    });
    md_table(out, &header, &rows, 1);
}

/// A training-cost column: header, unit, and how to read it.
type TrainColumn = (&'static str, Unit, fn(&crate::summary::TrainCost) -> f64);

const TRAINING: [TrainColumn; 6] = [
    ("Trainings", Unit::Count, |c| c.trainings as f64),
    ("Trainable params", Unit::Count, |c| {
        c.trainable_params as f64
    }),
    ("Wall (s)", Unit::Seconds, |c| c.wall_seconds),
    ("Optimiser steps", Unit::Count, |c| c.steps as f64),
    ("Samples seen", Unit::Count, |c| c.samples as f64),
    ("Stored (MiB)", Unit::Mib, |c| c.stored_bytes as f64),
];

fn training(out: &mut String, groups: &[Group], base: Option<&Group>) {
    if !(groups.iter()).any(|g| g.runs.iter().any(|r| r.train_cost.is_some())) {
        return;
    }
    out.push_str(
        "## Training cost

",
    );
    out.push_str(
        "Everything a method stands on: the base models it uses (a Deep Ensemble's M) and what it \
         trains itself (fine-tuned members, adapters, models trained from scratch), each counted \
         in full even when read back from the cache. Wall seconds are those of the training \
         epochs when they ran; trainable parameters are those the trainings update, summed over \
         them; samples seen count repeats over epochs (the training budget); \
         stored is the trained weights a user keeps to have the method.",
    );
    if let Some(b) = base {
        let _ = write!(out, " ×{0} is the ratio to the `{0}` method.", b.name);
    }
    out.push_str("\n\n");
    let mut header = vec!["Method".to_string()];
    for (name, ..) in TRAINING {
        header.push(name.to_string());
        if let Some(b) = base {
            header.push(format!("×{}", b.name));
        }
    }
    let rows = method_rows(groups, |g| {
        let mut row = Vec::new();
        for (_, unit, f) in TRAINING {
            let value = |g: &Group| g.stat(|r| r.train_cost.as_ref().map(f));
            let stat = value(g);
            let ratio = base.map(|b| super::groups::ratio(stat.as_ref(), value(b).as_ref()));
            row.push(cell(stat, unit));
            if let Some(ratio) = ratio {
                row.push(ratio.map_or(NA.to_string(), |x| Unit::Times.show(x)));
            }
        }
        row
    });
    md_table(out, &header, &rows, 1);
}

/// A line under a table when some methods trained with fewer optimiser steps than the baseline
/// (say, baselines trained from scratch for fewer epochs): their numbers then come from a smaller
/// training budget, not only from the method. Variant entries share their method's training.
pub(super) fn budget_note(out: &mut String, groups: &[Group], base: Option<&Group>) {
    let steps = |g: &Group| g.stat(|r| r.train_cost.as_ref().map(|c| c.steps as f64));
    let Some(base) = base else {
        return;
    };
    let base_steps = steps(base);
    let fewer: Vec<String> = (groups.iter())
        .filter(|g| g.variant_of().is_none() && g.name != base.name)
        .filter_map(|g| {
            let r = super::groups::ratio(steps(g).as_ref(), base_steps.as_ref())?;
            (r < 1.0).then(|| format!("`{}` {r:.2}×", g.name))
        })
        .collect();
    if !fewer.is_empty() {
        let _ = writeln!(
            out,
            "Unequal training: {} the optimiser steps of `{}` (\"Training cost\" below), so \
             their numbers reflect a smaller training budget as well as the method.\n",
            fewer.join(", "),
            base.name
        );
    }
}

fn diversity(out: &mut String, summary: &Summary, groups: &[Group]) {
    let with: Vec<&Group> = (groups.iter())
        .filter(|g| g.runs.iter().all(|r| r.diversity.is_some()))
        .collect();
    if with.is_empty() {
        return;
    }
    out.push_str("## Diversity\n\n");
    out.push_str(
        "Methods with two or more members. On the test set: disagreement (share of samples on \
         which two members' top classes differ, mean over member pairs), mutual information \
         (entropy of the mean prediction minus the members' mean entropy, nats), pairwise KL \
         (mean KL divergence between two members' predictions, nats), the members' mean \
         accuracy, and the ensemble gain (the ensemble's accuracy minus the members' mean; \
         percentage points). Per OOD set: disagreement and mutual information, which an ensemble \
         should show more of there than in distribution.\n\n",
    );
    let sets = keys(summary, |r| r.ood.keys());
    let mut header: Vec<String> = [
        "Method",
        "Disagreement (%)",
        "MI",
        "Pairwise KL",
        "Member acc. (%)",
        "Ensemble gain (pp)",
    ]
    .map(String::from)
    .to_vec();
    for set in &sets {
        header.push(format!("{} disagreement (%)", md_text(set)));
        header.push(format!("{} MI", md_text(set)));
    }
    let rows: Vec<Vec<String>> = with
        .iter()
        .map(|g| {
            let d = |f: fn(&uq_metrics::Diversity) -> f64, unit| {
                cell(g.stat(|r| r.diversity.as_ref().map(|d| f(&d.id))), unit)
            };
            let mut row = vec![
                md_text(g.name),
                d(|d| d.disagreement, Unit::Percent),
                d(|d| d.mutual_info, Unit::Plain),
                d(|d| d.pairwise_kl, Unit::Plain),
                d(|d| d.member_accuracy, Unit::Percent),
                d(|d| d.ensemble_gain, Unit::Percent),
            ];
            for &set in &sets {
                let ood = |f: fn(&uq_metrics::Diversity) -> f64, unit| {
                    let value = |r: &crate::summary::MethodResult| {
                        r.diversity.as_ref()?.ood.get(set).map(f)
                    };
                    cell(g.stat(value), unit)
                };
                row.push(ood(|d| d.disagreement, Unit::Percent));
                row.push(ood(|d| d.mutual_info, Unit::Plain));
            }
            row
        })
        .collect();
    md_table(out, &header, &rows, 1);
}

fn conformal(out: &mut String, groups: &[Group]) {
    let Some(first) = (groups.iter())
        .flat_map(|g| &g.runs)
        .find_map(|r| r.conformal.as_ref())
    else {
        return;
    };
    out.push_str("## Conformal prediction sets\n\n");
    let _ = writeln!(
        out,
        "Split conformal sets with the `{}` score at α = {}: the threshold is calibrated on the \
         validation split, coverage (share of test samples whose label is in the set; the target \
         is at least {:.0}%) and mean set size are measured on the test set.\n",
        first.score,
        first.alpha,
        100.0 * (1.0 - first.alpha)
    );
    let header = header_with("Method", ["Coverage (%)", "Mean set size ↓"].into_iter());
    let rows = method_rows(groups, |g| {
        vec![
            cell(
                g.stat(|r| r.conformal.as_ref().map(|c| c.coverage)),
                Unit::Percent,
            ),
            cell(
                g.stat(|r| r.conformal.as_ref().map(|c| c.set_size)),
                Unit::Plain,
            ),
        ]
    });
    md_table(out, &header, &rows, 1);
}

/// Per method and OOD set: the headline AUROC's spread over seeds against the spread the
/// bootstrap of one seed's test sets gives, and the share of the seed-to-seed variance that
/// test-set sampling alone explains.
fn sampling(out: &mut String, summary: &Summary, groups: &[Group]) {
    let sets = keys(summary, |r| r.ood.keys());
    let boot = |r: &crate::summary::MethodResult, set: &str| {
        (r.ood.get(set)?.auroc_bootstrap.as_ref()).map(|b| b.std)
    };
    let with: Vec<&Group> = (groups.iter())
        .filter(|g| g.runs.len() > 1)
        .filter(|g| {
            sets.iter()
                .all(|s| g.runs.iter().all(|r| boot(r, s).is_some()))
        })
        .collect();
    if with.is_empty() || sets.is_empty() {
        return;
    }
    out.push_str(
        "### OOD AUROC: seeds against test-set sampling

",
    );
    out.push_str(
        "Per OOD set: the AUROC's standard deviation over seeds (points), the root mean square \
         over seeds of its bootstrap standard deviation within one seed (200 resamples of the \
         test and OOD sets), and their ratio of variances, the share of the seed-to-seed spread \
         that test-set sampling alone would give. A share well below 100% says the seeds \
         (split, training, members) move the AUROC more than the test sets' size does: more \
         seeds, not more test samples, narrow it.\n\n",
    );
    let header: Vec<String> = std::iter::once("Method".to_string())
        .chain(sets.iter().flat_map(|s| {
            let s = md_text(s);
            [
                format!("{s} seeds"),
                format!("{s} sampling"),
                format!("{s} share"),
            ]
        }))
        .collect();
    let rows: Vec<Vec<String>> = (with.iter())
        .map(|g| {
            let cells = sets.iter().flat_map(|set| {
                let seeds = g
                    .stat(|r| r.ood.get(*set).map(|m| m.auroc))
                    .and_then(|s| s.std);
                let within: Vec<f64> = g.runs.iter().filter_map(|r| boot(r, set)).collect();
                let rms = (within.iter().map(|b| b * b).sum::<f64>() / within.len() as f64).sqrt();
                let show =
                    |x: Option<f64>| x.map_or(NA.to_string(), |x| format!("{:.2}", 100.0 * x));
                let share = seeds.filter(|s| *s > 0.0).map_or(NA.to_string(), |s| {
                    format!("{:.0}%", 100.0 * rms * rms / (s * s))
                });
                [show(seeds), show(Some(rms)), share]
            });
            std::iter::once(md_text(g.name)).chain(cells).collect()
        })
        .collect();
    md_table(out, &header, &rows, 1);
}
