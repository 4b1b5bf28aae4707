//! How much of an AUROC is test-set sampling: a bootstrap over the ID and OOD test samples.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::error::{MetricsError, Result};
use crate::input::check_finite;
use crate::nonfinite::nan_if_null;

/// The bootstrap distribution of an AUROC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AurocBootstrap {
    /// Sample standard deviation of the resampled AUROCs.
    #[serde(deserialize_with = "nan_if_null")]
    pub std: f64,
    /// Their 2.5% and 97.5% percentiles (linear interpolation, as numpy's default).
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub ci_high: f64,
    pub resamples: usize,
}

/// [`crate::auroc`] over `resamples` bootstrap resamples, the ID and the OOD scores each drawn
/// with replacement to their own size (stratified: every resample keeps both sets' sizes), the
/// draws from `seed`: resample r draws `id.len()` indices then `ood.len()` indices with
/// `StdRng::seed_from_u64(seed)`'s `random_range`, in that order.
///
/// The scores are sorted once; a resample is its multiplicity per distinct score, so each costs
/// O(n) rather than a sort.
pub fn auroc_bootstrap(
    id: &[f64],
    ood: &[f64],
    resamples: usize,
    seed: u64,
) -> Result<AurocBootstrap> {
    if id.is_empty() {
        return Err(MetricsError::MissingClass { missing: "ID" });
    }
    if ood.is_empty() {
        return Err(MetricsError::MissingClass { missing: "OOD" });
    }
    if resamples < 2 {
        return Err(MetricsError::InvalidOption {
            name: "resamples",
            value: resamples.to_string(),
            expected: "at least 2",
        });
    }
    check_finite("id scores", id)?;
    check_finite("ood scores", ood)?;
    let (id_group, ood_group, groups) = tie_groups(id, ood);
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut id_count, mut ood_count) = (vec![0u64; groups], vec![0u64; groups]);
    let mut values = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        id_count.iter_mut().for_each(|c| *c = 0);
        ood_count.iter_mut().for_each(|c| *c = 0);
        for _ in 0..id.len() {
            id_count[id_group[rng.random_range(0..id.len())]] += 1;
        }
        for _ in 0..ood.len() {
            ood_count[ood_group[rng.random_range(0..ood.len())]] += 1;
        }
        values.push(weighted_auroc(&id_count, &ood_count, id.len(), ood.len()));
    }
    let mean = values.iter().sum::<f64>() / resamples as f64;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (resamples - 1) as f64;
    values.sort_by(f64::total_cmp);
    Ok(AurocBootstrap {
        std: var.sqrt(),
        ci_low: percentile(&values, 0.025),
        ci_high: percentile(&values, 0.975),
        resamples,
    })
}

/// Each sample's index among the distinct scores, highest first, and the number of them.
fn tie_groups(id: &[f64], ood: &[f64]) -> (Vec<usize>, Vec<usize>, usize) {
    let mut all: Vec<(f64, bool, usize)> = (id.iter().enumerate())
        .map(|(i, &s)| (s, false, i))
        .chain(ood.iter().enumerate().map(|(i, &s)| (s, true, i)))
        .collect();
    all.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut id_group, mut ood_group) = (vec![0; id.len()], vec![0; ood.len()]);
    let mut group = 0;
    for (k, &(score, is_ood, i)) in all.iter().enumerate() {
        if k > 0 && score != all[k - 1].0 {
            group += 1;
        }
        match is_ood {
            true => ood_group[i] = group,
            false => id_group[i] = group,
        }
    }
    (id_group, ood_group, group + 1)
}

/// AUROC from multiplicities per distinct score (highest first): each OOD sample counts the ID
/// samples below it, and half of those tied with it.
fn weighted_auroc(id_count: &[u64], ood_count: &[u64], n_id: usize, n_ood: usize) -> f64 {
    let (mut id_seen, mut pairs) = (0u64, 0.0f64);
    for (&i, &o) in id_count.iter().zip(ood_count) {
        id_seen += i;
        pairs += o as f64 * ((n_id as u64 - id_seen) as f64 + 0.5 * i as f64);
    }
    pairs / (n_id as f64 * n_ood as f64)
}

/// The `q` quantile of sorted `values`, interpolating linearly between order statistics.
fn percentile(values: &[f64], q: f64) -> f64 {
    let pos = q * (values.len() - 1) as f64;
    let (lo, frac) = (pos.floor() as usize, pos - pos.floor());
    let hi = (lo + 1).min(values.len() - 1);
    values[lo] + frac * (values[hi] - values[lo])
}
