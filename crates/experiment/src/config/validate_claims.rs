//! `[[claim]]`: each names entries the run evaluates, a compared metric, and one margin that
//! fits its kind, with a one-line reason.

use report::{Claim, DEFAULT_MARGINS};
use uq_metrics::ClaimKind;

use super::experiment::ExperimentConfig;
use super::validate::fail;
use crate::error::ConfigError;

impl ExperimentConfig {
    /// Every claim, each error naming `[[claim]] #i` and the field with the allowed values.
    pub(super) fn validate_claims(&self) -> Result<(), ConfigError> {
        let entries = self.entry_names();
        let metrics = self.claim_metrics();
        for (i, claim) in self.claims.iter().enumerate() {
            let at = |field: &str| format!("[[claim]] #{} {field}", i + 1);
            for (field, name) in [("method", &claim.method), ("reference", &claim.reference)] {
                if !entries.contains(name) {
                    return fail(
                        &at(field),
                        format!(
                            "`{name}` is not an entry of the run; expected one of {}",
                            entries.join(", ")
                        ),
                    );
                }
            }
            if claim.method == claim.reference {
                return fail(&at("reference"), "is the claim's method itself");
            }
            if !metrics.contains(&claim.metric) {
                return fail(
                    &at("metric"),
                    format!(
                        "`{}` is not a compared metric of the run; expected one of {}",
                        claim.metric,
                        metrics.join(", ")
                    ),
                );
            }
            self.validate_margin(claim, &at)?;
            if claim.reason.trim().is_empty() || claim.reason.contains('\n') {
                return fail(
                    &at("reason"),
                    "expected one line saying why the claim is tested",
                );
            }
        }
        Ok(())
    }

    /// One of `margin` (above 0, or at least 0 for superiority) and `margin_share` (above 0,
    /// against a reference that is not the baseline); superiority may give neither.
    fn validate_margin(
        &self,
        claim: &Claim,
        at: &dyn Fn(&str) -> String,
    ) -> Result<(), ConfigError> {
        let superior = claim.kind == ClaimKind::Superior;
        match (claim.margin, claim.margin_share) {
            (Some(_), Some(_)) => fail(&at("margin"), "give `margin` or `margin_share`, not both"),
            (None, None) if !superior => fail(
                &at("margin"),
                format!(
                    "missing: a {} claim needs `margin` (in the metric's units) or \
                     `margin_share` (a share of the reference's gain over the baseline)",
                    claim.kind.as_str()
                ),
            ),
            (Some(m), None) if !(m.is_finite() && (m > 0.0 || (superior && m == 0.0))) => fail(
                &at("margin"),
                format!("{m}; expected a finite number above 0 (at least 0 for superiority)"),
            ),
            (None, Some(s)) if !(s.is_finite() && s > 0.0) => fail(
                &at("margin_share"),
                format!("{s}; expected a finite number above 0 (0.2: a fifth of the gain)"),
            ),
            (None, Some(_)) if claim.reference == self.eval.baseline() => fail(
                &at("margin_share"),
                format!(
                    "the reference `{}` is the baseline, which gains nothing over itself; give \
                     an absolute `margin`",
                    claim.reference
                ),
            ),
            (None, Some(_)) if !self.entry_names().iter().any(|n| n == self.eval.baseline()) => {
                fail(
                    &at("margin_share"),
                    format!(
                        "needs the baseline `{}` among the methods (or set [eval] baseline)",
                        self.eval.baseline()
                    ),
                )
            }
            _ => Ok(()),
        }
    }

    /// The metrics a claim may name: those the run compares.
    fn claim_metrics(&self) -> Vec<String> {
        let sets = self.data.ood.iter().map(|s| s.name());
        let mut out: Vec<String> = (DEFAULT_MARGINS.iter())
            .map(|(k, _)| k.to_string())
            .filter(|k| {
                k.starts_with("id.") || (k.starts_with("shift.") && !self.data.shift.is_empty())
            })
            .collect();
        if self.data.ood.len() > 1 {
            out.push("ood.mean.auroc".into());
        }
        out.extend(sets.map(|s| format!("ood.{s}.auroc")));
        out
    }
}
