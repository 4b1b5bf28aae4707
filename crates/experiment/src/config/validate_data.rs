//! The checks of `[data]` the types alone do not make: sizes and fractions, the OOD sets' names
//! and groups, the margins that name them, and the sets read from disk.

use super::experiment::ExperimentConfig;
use super::sections::PreprocessSection;
use super::source::{DataSource, DiskFormat};
use super::validate::{fail, failed};
use crate::error::ConfigError;
use report::compare::DEFAULT_MARGINS;

impl ExperimentConfig {
    /// `[data]`'s sizes, fractions and corruptions.
    pub(super) fn validate_data(&self) -> Result<(), ConfigError> {
        let d = &self.data;
        if d.image_size == Some(0) {
            return fail("data.image_size", "must be at least 1 pixel");
        }
        if d.train_limit == Some(0) || d.test_limit == Some(0) {
            return fail("data.train_limit / data.test_limit", "must be at least 1");
        }
        if !(d.test_fraction > 0.0 && d.test_fraction < 1.0) {
            return fail(
                "data.test_fraction",
                format!("{} is outside (0, 1)", d.test_fraction),
            );
        }
        if d.max_tokens < 2 {
            return fail(
                "data.max_tokens",
                format!(
                    "{} leaves no room for [CLS] and [SEP]; expected at least 2",
                    d.max_tokens
                ),
            );
        }
        if let Some(p) = &d.preprocess {
            validate_preprocess(p)?;
        }
        for s in &d.shift {
            if let Err(e) = s.corruption.parse::<data::Corruption>() {
                return failed("data.shift.corruption", e);
            }
            if s.severities.is_empty() || s.severities.iter().any(|v| !(1..=5).contains(v)) {
                return fail(
                    "data.shift.severities",
                    format!("{:?}: each must be 1 to 5", s.severities),
                );
            }
        }
        Ok(())
    }

    /// Every grouped OOD set is one of `[data] ood`, in one group.
    pub(super) fn validate_groups(&self) -> Result<(), ConfigError> {
        let names = self.ood_names();
        let mut seen: Vec<&str> = Vec::new();
        for (group, sets) in self.data.ood_groups.groups() {
            for set in sets {
                if !names.contains(set) {
                    return fail(
                        &format!("data.ood_groups.{group}"),
                        format!(
                            "`{set}` is not an OOD set of the run; expected one of data.ood: \
                             {names:?}"
                        ),
                    );
                }
                if seen.contains(&set.as_str()) {
                    return fail(
                        "data.ood_groups",
                        format!("`{set}` is in both groups; expected one"),
                    );
                }
                seen.push(set);
            }
        }
        Ok(())
    }

    /// Every margin names a compared metric (a family, or one OOD set's AUROC) and is above 0.
    pub(super) fn validate_margins(&self) -> Result<(), ConfigError> {
        for (metric, &margin) in &self.eval.margins {
            let known = DEFAULT_MARGINS.iter().any(|(k, _)| k == metric)
                || (metric
                    .strip_prefix("ood.")
                    .and_then(|m| m.strip_suffix(".auroc")))
                .is_some_and(|set| set == "mean" || self.ood_names().iter().any(|s| s == set));
            if !known {
                let families: Vec<&str> = DEFAULT_MARGINS.iter().map(|(k, _)| *k).collect();
                return fail(
                    "eval.margins",
                    format!(
                        "`{metric}` is not a compared metric; expected one of {} or \
                         ood.<set>.auroc for a set of data.ood (or ood.mean.auroc)",
                        families.join(", ")
                    ),
                );
            }
            if !(margin.is_finite() && margin > 0.0) {
                return fail(
                    &format!("eval.margins.\"{metric}\""),
                    format!("{margin}; expected a finite number above 0"),
                );
            }
        }
        Ok(())
    }

    /// The OOD sets' names, as results and `ood_groups` give them.
    fn ood_names(&self) -> Vec<String> {
        self.data.ood.iter().map(DataSource::name).collect()
    }

    /// Sets on disk: OOD names distinct, and `[data] image_size` given when an image tree is
    /// read (its images are resized and cropped to one side).
    pub(super) fn validate_disk_sets(&self) -> Result<(), ConfigError> {
        let names = self.ood_names();
        if let Some((i, name)) = (names.iter().enumerate()).find(|(i, n)| names[..*i].contains(n)) {
            return fail(
                "data.ood",
                format!("two sets are named `{name}` (the second at {i}); give one a `name`"),
            );
        }
        let sources = std::iter::once(&self.data.dataset).chain(&self.data.ood);
        for source in sources {
            let DataSource::Disk(set) = source else {
                continue;
            };
            // A checkpoint's preprocessor config may give the side; read when the data are.
            let sized = self.data.image_size.is_some()
                || self.backbone.checkpoint.is_some()
                || (self.data.preprocess.as_ref()).is_some_and(|p| p.crop.is_some());
            if set.format() == DiskFormat::ImageFolder && !sized {
                return fail(
                    "data.image_size",
                    format!(
                        "missing: the image folder {} is read at one side, resized and \
                         centre-cropped to it",
                        set.path.display()
                    ),
                );
            }
        }
        Ok(())
    }
}

/// `[data.preprocess]`: sizes of at least 1 pixel, a finite mean and a positive finite std,
/// given together.
fn validate_preprocess(p: &PreprocessSection) -> Result<(), ConfigError> {
    for (field, size) in [("resize", p.resize), ("crop", p.crop)] {
        if size == Some(0) {
            return fail(
                &format!("data.preprocess.{field}"),
                "must be at least 1 pixel",
            );
        }
    }
    match (p.mean, p.std) {
        (Some(_), None) => fail("data.preprocess.std", "missing: mean and std go together"),
        (None, Some(_)) => fail("data.preprocess.mean", "missing: mean and std go together"),
        (Some(mean), _) if mean.iter().any(|m| !m.is_finite()) => fail(
            "data.preprocess.mean",
            format!("{mean:?}: expected finite numbers"),
        ),
        (_, Some(std)) if std.iter().any(|s| !(s.is_finite() && *s > 0.0)) => fail(
            "data.preprocess.std",
            format!("{std:?}: expected finite numbers above 0"),
        ),
        _ => Ok(()),
    }
}
