//! The two methods a report is drawn around: the baseline (ratios of cost, gains of accuracy)
//! and the reference (every method compared with it). The experiment file chooses them
//! (`[eval] baseline`, `[eval] reference`, each a `[[method]]` name) and the summary records
//! the choice. These are the defaults in one place: an experiment that chooses none gets the
//! methods so named, and a run that records none (older than the fields) the first method of
//! that kind, as the report chose before (a method's name defaults to its kind).

use crate::summary::Summary;

/// The baseline when none is chosen.
pub const DEFAULT_BASELINE: &str = "single";

/// The reference when none is chosen.
pub const DEFAULT_REFERENCE: &str = "deep_ensemble";

impl Summary {
    /// The name of the run's baseline, for text: the one recorded, else the default.
    pub fn baseline(&self) -> &str {
        self.baseline.as_deref().unwrap_or(DEFAULT_BASELINE)
    }

    /// Whether the entry `name` of kind `kind` is the run's baseline.
    pub(crate) fn is_baseline(&self, name: &str, kind: &str) -> bool {
        match &self.baseline {
            Some(b) => name == b,
            None => kind == DEFAULT_BASELINE,
        }
    }

    /// Whether the entry `name` of kind `kind` (`variant`: a `+ts` / `+bf16` entry) is the
    /// run's reference: the one its comparisons are against, else the one it records.
    pub(crate) fn is_reference(&self, name: &str, kind: &str, variant: bool) -> bool {
        let named =
            (self.comparisons.first().map(|c| c.reference.as_str())).or(self.reference.as_deref());
        match named {
            Some(r) => name == r,
            None => kind == DEFAULT_REFERENCE && !variant,
        }
    }
}
