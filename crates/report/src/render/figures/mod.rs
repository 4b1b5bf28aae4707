//! The run's figures, as SVG, drawn from `summary.json` and `curves.json` alone (so that
//! `uqformer compare` can redraw them for runs made at different times):
//! reliability diagrams, risk-coverage curves, OOD score histograms and ROC curves, AUROC by OOD
//! score, the cost-UQ
//! Pareto plot, the sweeps (Hydra's pruning analysis), HetDPT's accuracy predictor and the
//! training curves. With several seeds a curve is the mean over seeds on a common grid with a
//! ± one standard deviation band.

mod calibration;
mod cost;
mod ood;
mod predictor;
mod scores;
mod sweep;
mod training;

use plots::{Figure, PlotError};

use super::groups;
use crate::curves::{MethodCurves, RunCurves};
use crate::summary::{MethodResult, Summary};

/// The cost-UQ figure's file, which the report also shows under its verdicts.
pub const PARETO: &str = "fig-pareto.svg";

/// One figure of a run: its file name, a one-line caption and the SVG.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureFile {
    pub file: String,
    pub title: String,
    pub caption: String,
    pub svg: String,
}

/// The note of a panel whose entry has no curves.
const NO_CURVES: &str = "no curves stored for it (its run predates curves.json)";

/// Pixels of a single-chart figure and of one panel of a grid.
const CHART: (u32, u32) = (760, 500);
const PANEL: (u32, u32) = (380, 320);
const COLUMNS: usize = 3;

/// What the figures are drawn from.
pub struct Inputs<'a> {
    pub summary: &'a Summary,
    pub curves: &'a RunCurves,
    /// The OOD score's name, for axis labels (`msp`, `entropy`, ...).
    pub score: &'a str,
}

impl Inputs<'_> {
    /// Method entries (names) in report order, with the colour each keeps in every figure
    /// (see [`colours`]): a variant of a method (temperature-scaled `<name>+ts`, bf16
    /// `<name>+bf16`) takes its method's colour.
    fn entries(&self) -> Vec<Entry> {
        let groups = groups(self.summary);
        let bases: Vec<&str> = (groups.iter())
            .filter(|g| g.variant_of().is_none())
            .map(|g| g.name)
            .collect();
        let colours = colours(&bases);
        groups
            .iter()
            .map(|g| {
                let base = g.variant_of().unwrap_or(g.name);
                Entry {
                    name: g.name.to_string(),
                    colour: (bases.iter().position(|b| *b == base)).map_or(0, |i| colours[i]),
                    variant: g.variant_of().is_some(),
                }
            })
            .collect()
    }

    /// The curves of one entry, one per seed, in seed order.
    fn curves_of(&self, name: &str) -> Vec<&MethodCurves> {
        let mut found: Vec<&MethodCurves> = self
            .curves
            .methods
            .iter()
            .filter(|c| c.name == name)
            .collect();
        found.sort_by_key(|c| c.seed);
        found
    }

    /// The mean over seeds of a value of entry `name` (NaN when a seed lacks it).
    fn mean_of(&self, name: &str, value: impl Fn(&MethodResult) -> Option<f64>) -> f64 {
        let xs: Vec<f64> = (self.summary.methods.iter())
            .filter(|r| r.name == name)
            .map(|r| value(r).unwrap_or(f64::NAN))
            .collect();
        mean_std(&xs).0
    }

    /// The OOD set names over every entry.
    fn ood_sets(&self) -> Vec<String> {
        let mut sets: Vec<String> = (self.curves.methods.iter())
            .flat_map(|c| c.ood.keys().cloned())
            .collect();
        sets.sort();
        sets.dedup();
        sets
    }
}

/// The library's methods under their usual entry names, in palette order: each keeps its
/// colour in every run's figures (the quick start's and each study's alike).
const KNOWN: [&str; 11] = [
    "single",
    "deep_ensemble",
    "mc_dropout",
    "lora_ensemble",
    "batch_ensemble",
    "mimo",
    "packed_ensemble",
    "hydra_taylor",
    "hydra_circuit",
    "hydra_random",
    "hetdpt",
];

/// A palette index per method of `bases`: a known method's own, another the first index
/// neither known nor taken, then the known ones' this run leaves free; distinct while the
/// palette lasts.
fn colours(bases: &[&str]) -> Vec<usize> {
    let known = |b: &str| KNOWN.iter().position(|k| *k == b);
    let mut taken: Vec<usize> = bases.iter().filter_map(|b| known(b)).collect();
    let mut free = (KNOWN.len()..plots::PALETTE.len()).chain(0..KNOWN.len());
    (bases.iter().enumerate())
        .map(|(i, b)| {
            known(b).unwrap_or_else(|| {
                let colour = (free.by_ref()).find(|c| !taken.contains(c)).unwrap_or(i);
                taken.push(colour);
                colour
            })
        })
        .collect()
}

struct Entry {
    name: String,
    colour: usize,
    /// A variant of a method (`+ts`, `+bf16`): the per-method figures leave it out.
    variant: bool,
}

/// Every figure of the run, in report order.
pub fn figures(inputs: &Inputs<'_>) -> Result<Vec<FigureFile>, PlotError> {
    let mut out = vec![
        calibration::reliability(inputs)?,
        calibration::risk_coverage(inputs)?,
        ood::histograms(inputs)?,
        ood::roc(inputs)?,
    ];
    out.extend(scores::auroc_by_score(inputs)?);
    out.push(cost::pareto(inputs)?);
    out.extend(sweep::sweeps(inputs)?);
    out.extend(predictor::predictor(inputs)?);
    out.push(training::training(inputs)?);
    Ok(out)
}

fn grid(
    file: &str,
    title: &str,
    caption: String,
    panels: &[Figure],
) -> Result<FigureFile, PlotError> {
    Ok(FigureFile {
        file: file.into(),
        title: title.into(),
        caption,
        svg: plots::render_grid(panels, COLUMNS, PANEL)?,
    })
}

fn chart(
    file: &str,
    title: &str,
    caption: String,
    figure: &Figure,
) -> Result<FigureFile, PlotError> {
    Ok(FigureFile {
        file: file.into(),
        title: title.into(),
        caption,
        svg: plots::render(figure, CHART)?,
    })
}

/// Mean and sample standard deviation (NaN with fewer than two values), as the report's
/// statistics over seeds compute them.
fn mean_std(xs: &[f64]) -> (f64, f64) {
    let s = uq_metrics::mean_ci(xs);
    (s.mean, s.std)
}

/// `curve` (x ascending) at `x`: linear between the last point at or before `x` and the next,
/// so a vertical jump (a ROC curve's tie) reads its top; clamped to the ends.
fn at(curve: &[(f64, f64)], x: f64) -> f64 {
    match curve.iter().position(|p| p.0 > x) {
        None => curve.last().map_or(f64::NAN, |p| p.1),
        Some(0) => curve[0].1,
        Some(i) => {
            let ((x0, y0), (x1, y1)) = (curve[i - 1], curve[i]);
            y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        }
    }
}

/// Several seeds' curves as one series on `grid`: the mean, with a ± std band from two seeds
/// on; one seed's curve is drawn as it is.
fn seed_series(curves: &[&[(f64, f64)]], grid: &[f64]) -> Vec<plots::Point> {
    match curves {
        [] => Vec::new(),
        [one] => one.iter().map(|&(x, y)| plots::Point::new(x, y)).collect(),
        many => grid
            .iter()
            .map(|&x| {
                let ys: Vec<f64> = many.iter().map(|c| at(c, x)).collect();
                let (mean, std) = mean_std(&ys);
                plots::Point::new(x, mean).band(mean - std, mean + std)
            })
            .collect(),
    }
}

/// Rates as percentages, on both axes (band included): figures show a rate in %, as the
/// tables do.
fn percent(points: Vec<plots::Point>) -> Vec<plots::Point> {
    let scale = |v: Option<f64>| v.map(|v| 100.0 * v);
    (points.into_iter())
        .map(|p| plots::Point {
            x: 100.0 * p.x,
            y: 100.0 * p.y,
            lo: scale(p.lo),
            hi: scale(p.hi),
            ..p
        })
        .collect()
}

/// The most series of one chart drawn with their ± std bands: more bands overlap into a blur.
const MAX_BANDS: usize = 3;

/// `series` without their bands when more than [`MAX_BANDS`] have one.
fn bands_if_few(mut series: Vec<plots::Series>) -> Vec<plots::Series> {
    let banded = (series.iter())
        .filter(|s| s.points.iter().any(|p| p.lo.is_some()))
        .count();
    if banded > MAX_BANDS {
        for p in series.iter_mut().flat_map(|s| s.points.iter_mut()) {
            (p.lo, p.hi) = (None, None);
        }
    }
    series
}

/// `n + 1` evenly spaced values from `lo` to `hi`.
fn linspace(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    (0..=n)
        .map(|i| lo + (hi - lo) * i as f64 / n as f64)
        .collect()
}

/// "mean ± std over N seeds" or "seed S" for captions.
fn seeds_note(summary: &Summary) -> String {
    match summary.seeds.as_slice() {
        [one] => format!("seed {one}"),
        many => format!("mean ± std over {} seeds", many.len()),
    }
}

/// [`seeds_note`] for a chart of many lines, whose bands [`bands_if_few`] may drop.
fn lines_note(summary: &Summary) -> String {
    match summary.seeds.len() {
        1 => seeds_note(summary),
        n => format!(
            "mean over {n} seeds, with ± std bands when {MAX_BANDS} methods or fewer are drawn"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry with no OOD sets and, when `latency` is `None`, no timing (`null` reads NaN).
    fn entry(name: &str, seed: u64, latency: Option<f64>) -> MethodResult {
        serde_json::from_value(serde_json::json!({
            "name": name, "kind": "single", "members": 1, "seed": seed,
            "id": {"accuracy": 0.8, "nll": 0.5, "brier": 0.3, "ece": 0.05, "aece": 0.06,
                   "aurc": 0.1},
            "ood": {}, "shift": {},
            "cost": {"params": 10, "flops": 100, "latency_ms_b1": null, "latency_ms": latency,
                     "peak_mem_bytes": null},
        }))
        .unwrap()
    }

    fn notes(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap();
        (doc.descendants())
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .filter(|t| t.starts_with("no data: "))
            .collect()
    }

    #[test]
    fn missing_curves_and_values_are_said_not_failed() {
        let summary = Summary {
            experiment: "x".into(),
            seeds: vec![0, 1],
            methods: vec![
                entry("a", 0, None),
                entry("a", 1, Some(2.0)),
                entry("b", 0, None),
            ],
            comparisons: Vec::new(),
            ood_scores: Vec::new(),
            provenance: None,
        };
        let curves = RunCurves::default();
        let out = figures(&Inputs {
            summary: &summary,
            curves: &curves,
            score: "msp",
        })
        .unwrap();
        let files: Vec<&str> = out.iter().map(|f| f.file.as_str()).collect();
        assert_eq!(
            files,
            [
                "fig-reliability.svg",
                "fig-risk-coverage.svg",
                "fig-ood-histograms.svg",
                "fig-roc.svg",
                "fig-pareto.svg",
                "fig-training.svg"
            ]
        );
        let by = |file: &str| notes(&out.iter().find(|f| f.file == file).unwrap().svg);
        assert_eq!(
            by("fig-reliability.svg"),
            vec![format!("no data: {NO_CURVES}"); 2]
        );
        assert_eq!(
            by("fig-ood-histograms.svg"),
            vec![format!("no data: {NO_CURVES}"); 2]
        );
        assert_eq!(by("fig-roc.svg"), ["no data: no OOD set in this run"]);
        // No OOD set, and a latency missing in some seed of each entry: nothing to place.
        assert_eq!(by("fig-pareto.svg").len(), 2);
        assert_eq!(by("fig-training.svg").len(), 2);
    }

    #[test]
    fn every_method_has_its_own_colour_and_keeps_it() {
        let mut names: Vec<String> = KNOWN.iter().map(|s| s.to_string()).collect();
        names.extend(["my_method".to_string(), "other".to_string()]);
        let mut methods: Vec<MethodResult> = Vec::new();
        for name in &names {
            methods.push(entry(name, 0, Some(1.0)));
            let mut ts = entry(&format!("{name}+ts"), 0, Some(1.0));
            ts.method = name.clone();
            ts.variant = Some(serde_json::from_value(serde_json::json!("ts")).unwrap());
            methods.push(ts);
        }
        let summary = |methods: Vec<MethodResult>| Summary {
            experiment: "x".into(),
            seeds: vec![0],
            methods,
            comparisons: Vec::new(),
            ood_scores: Vec::new(),
            provenance: None,
        };
        let curves = RunCurves::default();
        let all = summary(methods.clone());
        let inputs = Inputs {
            summary: &all,
            curves: &curves,
            score: "msp",
        };
        let entries = inputs.entries();
        let colour = |name: &str| entries.iter().find(|e| e.name == name).unwrap().colour;
        let mut distinct: Vec<usize> = names.iter().map(|n| colour(n)).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 13, "13 methods, 13 colours");
        assert!(
            names
                .iter()
                .all(|n| colour(&format!("{n}+ts")) == colour(n))
        );
        // A run of a few of them gives each the colour it has above.
        let few = summary(
            (methods.into_iter())
                .filter(|r| ["hetdpt", "other", "single"].contains(&r.name.as_str()))
                .collect(),
        );
        let inputs = Inputs {
            summary: &few,
            ..inputs
        };
        for e in inputs.entries() {
            if e.name != "other" {
                assert_eq!(e.colour, colour(&e.name), "{}", e.name);
            }
        }
    }

    #[test]
    fn at_interpolates_and_reads_the_top_of_a_jump() {
        let roc = [(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)];
        assert_eq!(at(&roc, 0.0), 0.5);
        assert_eq!(at(&roc, 0.25), 0.75);
        assert_eq!(at(&roc, 2.0), 1.0);
        assert_eq!(at(&[(0.5, 0.2), (1.0, 0.4)], 0.1), 0.2);
    }

    #[test]
    fn bands_are_dropped_from_crowded_charts() {
        let banded = |k: usize| {
            plots::Series::new(
                format!("m{k}"),
                plots::Mark::Line,
                vec![plots::Point::new(0.0, 1.0).band(0.5, 1.5)],
            )
        };
        let few = bands_if_few((0..MAX_BANDS).map(banded).collect());
        assert!(few.iter().all(|s| s.points[0].lo == Some(0.5)));
        let many = bands_if_few((0..=MAX_BANDS).map(banded).collect());
        assert!(
            many.iter()
                .all(|s| s.points[0].lo.is_none() && s.points[0].y == 1.0)
        );
    }

    #[test]
    fn seed_series_bands_only_with_several_seeds() {
        let a = [(0.0, 0.0), (1.0, 1.0)];
        let b = [(0.0, 0.0), (1.0, 0.5)];
        let one = seed_series(&[&a], &[0.0, 0.5]);
        assert_eq!(one.len(), 2);
        assert!(one.iter().all(|p| p.lo.is_none()));
        let two = seed_series(&[&a, &b], &[0.0, 1.0]);
        assert_eq!((two[1].y, two[1].lo.is_some()), (0.75, true));
        let sd = (2.0f64 * 0.25f64.powi(2)).sqrt();
        assert!((two[1].hi.unwrap() - (0.75 + sd)).abs() < 1e-12);
    }
}
