//! Runs grouped by method, with their statistics over seeds and their ratios to the baseline.

use std::collections::BTreeSet;

use crate::summary::{MethodResult, Summary};

/// All runs of one method, one per seed.
pub(super) struct Group<'a> {
    pub(super) name: &'a str,
    pub(super) kind: &'a str,
    pub(super) members: usize,
    pub(super) runs: Vec<&'a MethodResult>,
}

/// A value's mean and spread over a method's seeds.
pub(super) struct Stat {
    pub(super) mean: f64,
    /// Sample standard deviation; `None` with a single seed.
    pub(super) std: Option<f64>,
}

impl Group<'_> {
    /// The method this entry is a variant of (`<method>+ts`, `<method>+bf16`); `None` for a
    /// method itself.
    pub(super) fn variant_of(&self) -> Option<&str> {
        let first = self.runs.first()?;
        first.variant.map(|_| first.method.as_str())
    }

    /// Mean and spread of a value over this method's seeds; `None` if any seed lacks it or it is
    /// not finite.
    pub(super) fn stat(&self, value: impl Fn(&MethodResult) -> Option<f64>) -> Option<Stat> {
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

/// The run's baseline method (`crate::roles`), if the run has it.
pub(super) fn baseline<'g>(summary: &Summary, groups: &'g [Group<'g>]) -> Option<&'g Group<'g>> {
    groups.iter().find(|g| summary.is_baseline(g.name, g.kind))
}

/// Groups runs by method name: the first seed's methods in order, then any others as they appear.
pub(super) fn groups(summary: &Summary) -> Vec<Group<'_>> {
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
pub(super) fn keys<'a, I: Iterator<Item = &'a String>>(
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

pub(super) fn ratio(stat: Option<&Stat>, base: Option<&Stat>) -> Option<f64> {
    let (x, b) = (stat?.mean, base?.mean);
    (b != 0.0).then(|| x / b)
}

/// A latency ratio to the baseline: the mean over seeds of the paired per-round ratios measured
/// with it (`paired`), or the ratio of the means when some seed lacks one (older runs).
pub(super) fn latency_ratio(
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
