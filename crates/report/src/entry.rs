//! A method entry made in one go: the runner knows who it is ([`Identity`]), evaluation what it
//! measured ([`Measured`]), timing what it costs, and the method what it hands back
//! ([`Extra`]); [`MethodResult::new`] puts them together, so no result is ever half-built.

use std::collections::BTreeMap;

use uq_metrics::ConformalReport;

use crate::outputs::Extra;
use crate::summary::{
    Cost, DiversityMetrics, GroupMetrics, IdMetrics, MethodResult, OodMetrics, ShiftMetrics,
    TrainCost, Variant,
};

/// Which entry a result is, as the runner knows it: the `[[method]]` name and kind, the variant,
/// the members, the seed, and what training the method stood on.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub method: String,
    pub variant: Option<Variant>,
    pub kind: String,
    pub members: usize,
    pub seed: u64,
    pub train_cost: Option<TrainCost>,
}

/// What evaluation measures of one entry (everything of a [`MethodResult`] but who it is, its
/// cost and its extras).
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub id: IdMetrics,
    pub ood: BTreeMap<String, OodMetrics>,
    pub ood_scores: BTreeMap<String, BTreeMap<String, OodMetrics>>,
    pub ood_groups: BTreeMap<String, BTreeMap<String, GroupMetrics>>,
    pub shift: BTreeMap<String, ShiftMetrics>,
    /// The fitted temperature of a temperature-scaled entry.
    pub temperature: Option<f64>,
    pub diversity: Option<DiversityMetrics>,
    pub conformal: Option<ConformalReport>,
}

impl MethodResult {
    /// The one way a result is made: who it is, what evaluation measured, what timing and
    /// training cost, and the method's extras; the display name follows from method and variant.
    pub fn new(who: Identity, measured: Measured, cost: Cost, extra: Extra) -> Self {
        let Measured {
            id,
            ood,
            ood_scores,
            ood_groups,
            shift,
            temperature,
            diversity,
            conformal,
        } = measured;
        Self {
            name: Variant::name(who.variant, &who.method),
            method: who.method,
            variant: who.variant,
            kind: who.kind,
            members: who.members,
            seed: who.seed,
            id,
            ood,
            ood_scores,
            ood_groups,
            shift,
            cost,
            extra,
            temperature,
            diversity,
            conformal,
            train_cost: who.train_cost,
        }
    }
}
