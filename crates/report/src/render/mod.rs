//! Human-readable views of a [`Summary`]: the run's `report.md`, its figures (SVG, from the
//! summary and the run's [`RunCurves`]), `report.html` (the report with the figures inline) and
//! a compact terminal table.
//!
//! Runs are grouped by method name, methods in the order of the first seed. A cell is the mean ±
//! sample standard deviation (n − 1) over seeds, the mean alone with one seed, and "n/a" when some
//! seed lacks the value or it is not finite (a mean over the remaining seeds would mislead).
//! Ratios ("×single") divide a method's mean by the mean of the first method of kind `single`.

mod evidence;
mod figures;
mod headline;
mod html;
mod markdown;
mod table;
mod terminal;
mod verdicts;

pub use figures::{FigureFile, Inputs};
pub use html::render_html;
pub use markdown::render_markdown;
pub use terminal::render_terminal;

use std::collections::BTreeSet;
use std::fmt::Write;

use crate::curves::RunCurves;
use crate::summary::{MethodResult, Summary};

/// Everything a run directory shows a reader.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// `report.md`: the tables, then the figures, linked.
    pub markdown: String,
    /// `report.html`: the same, self-contained.
    pub html: String,
    pub figures: Vec<FigureFile>,
}

/// The report, figures and page of a run from its summary and curves; `score` names the OOD
/// score for axis labels.
pub fn render(summary: &Summary, curves: &RunCurves, score: &str) -> crate::Result<Rendered> {
    render_with(summary, curves, score, "")
}

/// [`render`] with `preface` (a join's runs) between the headline and the detail.
pub(crate) fn render_with(
    summary: &Summary,
    curves: &RunCurves,
    score: &str,
    preface: &str,
) -> crate::Result<Rendered> {
    let figures = figures::figures(&Inputs {
        summary,
        curves,
        score,
    })?;
    let pareto = figures.iter().find(|f| f.file == figures::PARETO);
    let mut markdown = markdown::markdown(summary, pareto, preface);
    markdown.push_str("## Figures\n\n");
    // The cost-UQ figure is shown once, under the headline.
    for f in figures.iter().filter(|f| f.file != figures::PARETO) {
        let _ = writeln!(
            markdown,
            "### {}\n\n{}\n\n![{}]({})\n",
            f.title, f.caption, f.title, f.file
        );
    }
    let html = render_html(&summary.experiment, &markdown, &figures);
    Ok(Rendered {
        markdown,
        html,
        figures,
    })
}

const NA: &str = "n/a";
/// The kind whose cost the ratios are relative to.
pub const BASELINE_KIND: &str = "single";

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
    /// The method this entry is a variant of (`<method>+ts`, `<method>+bf16`); `None` for a
    /// method itself.
    fn variant_of(&self) -> Option<&str> {
        let first = self.runs.first()?;
        first.variant.map(|_| first.method.as_str())
    }

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

fn ratio(stat: Option<&Stat>, base: Option<&Stat>) -> Option<f64> {
    let (x, b) = (stat?.mean, base?.mean);
    (b != 0.0).then(|| x / b)
}

/// A latency ratio to `single`: the mean over seeds of the paired per-round ratios measured
/// with it (`paired`), or the ratio of the means when some seed lacks one (older runs).
fn latency_ratio(
    g: &Group<'_>,
    base: &Group<'_>,
    latency: impl Fn(&crate::summary::Cost) -> f64,
    paired: fn(&crate::summary::Cost) -> Option<f64>,
) -> Option<f64> {
    g.stat(|r| paired(&r.cost)).map(|s| s.mean).or_else(|| {
        ratio(
            g.stat(|r| Some(latency(&r.cost))).as_ref(),
            base.stat(|r| Some(latency(&r.cost))).as_ref(),
        )
    })
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
    /// Seconds, 1 decimal.
    Seconds,
    /// A ratio, 2 decimals and `×`.
    Times,
}

impl Unit {
    fn show(self, x: f64) -> String {
        match self {
            Unit::Percent => format!("{:.2}", 100.0 * x),
            Unit::Plain => format!("{x:.4}"),
            Unit::Mib => format!("{:.2}", x / (1u64 << 20) as f64),
            Unit::Seconds => format!("{x:.1}"),
            Unit::Times => format!("{x:.2}×"),
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
