//! What the figures are drawn from, and the colour each method keeps in all of them.

use super::super::groups::groups;
use super::series::mean_std;
use crate::curves::{MethodCurves, RunCurves};
use crate::summary::{MethodResult, Summary};

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
    pub(super) fn entries(&self) -> Vec<Entry> {
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
    pub(super) fn curves_of(&self, name: &str) -> Vec<&MethodCurves> {
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
    pub(super) fn mean_of(&self, name: &str, value: impl Fn(&MethodResult) -> Option<f64>) -> f64 {
        let xs: Vec<f64> = (self.summary.methods.iter())
            .filter(|r| r.name == name)
            .map(|r| value(r).unwrap_or(f64::NAN))
            .collect();
        mean_std(&xs).0
    }

    /// The OOD set names over every entry.
    pub(super) fn ood_sets(&self) -> Vec<String> {
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
pub(super) const KNOWN: [&str; 11] = [
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

/// A method entry of the figures, and the colour it keeps in all of them.
pub(super) struct Entry {
    pub(super) name: String,
    pub(super) colour: usize,
    /// A variant of a method (`+ts`, `+bf16`): the per-method figures leave it out.
    pub(super) variant: bool,
}
