//! Seeded index splits: train/validation and small stratified subsets. Index lists come back
//! sorted ascending, so the result depends only on the labels and the seed.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;

use crate::error::{DataError, Result};

/// How many examples [`stratified_subset`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubsetSize {
    /// Exactly this many of every class present in the labels.
    PerClass(usize),
    /// This many in all, apportioned to classes in proportion to their frequency.
    Total(usize),
}

/// Splits `0..labels.len()` into (train, validation) with `round(n * val_fraction)` validation
/// examples; if `stratified`, every class contributes in proportion to its frequency.
pub fn train_val_split(
    labels: &[u32],
    val_fraction: f64,
    seed: u64,
    stratified: bool,
) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(0.0..1.0).contains(&val_fraction) {
        return Err(DataError::invalid(format!(
            "validation fraction {val_fraction} is outside [0, 1)"
        )));
    }
    let n_val = (labels.len() as f64 * val_fraction).round() as usize;
    let groups = if stratified {
        by_class(labels)
    } else {
        vec![(0..labels.len()).collect()]
    };
    let mut val = sample_groups(groups, n_val, seed);
    val.sort_unstable();
    let mut is_val = vec![false; labels.len()];
    for &i in &val {
        is_val[i] = true;
    }
    let train = (0..labels.len()).filter(|&i| !is_val[i]).collect();
    Ok((train, val))
}

/// A seeded subset of `0..labels.len()` keeping the class balance (see [`SubsetSize`]).
pub fn stratified_subset(labels: &[u32], size: SubsetSize, seed: u64) -> Result<Vec<usize>> {
    let groups = by_class(labels);
    let mut picked = match size {
        SubsetSize::PerClass(k) => {
            if let Some(small) = groups.iter().find(|g| g.len() < k) {
                return Err(DataError::invalid(format!(
                    "class {} has {} examples, fewer than the {k} per class requested",
                    labels[small[0]],
                    small.len()
                )));
            }
            let mut rng = StdRng::seed_from_u64(seed);
            let mut out = Vec::with_capacity(k * groups.len());
            for mut g in groups {
                g.shuffle(&mut rng);
                out.extend_from_slice(&g[..k]);
            }
            out
        }
        SubsetSize::Total(total) => {
            if total > labels.len() {
                return Err(DataError::invalid(format!(
                    "subset of {total} requested from only {} examples",
                    labels.len()
                )));
            }
            sample_groups(groups, total, seed)
        }
    };
    picked.sort_unstable();
    Ok(picked)
}

/// Indices grouped by label, groups ordered by label, empty classes omitted.
fn by_class(labels: &[u32]) -> Vec<Vec<usize>> {
    let classes = labels.iter().max().map_or(0, |&m| m as usize + 1);
    let mut groups = vec![Vec::new(); classes];
    for (i, &l) in labels.iter().enumerate() {
        groups[l as usize].push(i);
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// Draws `total` indices (at most the number available) from `groups`, each group giving its
/// proportional share.
fn sample_groups(groups: Vec<Vec<usize>>, total: usize, seed: u64) -> Vec<usize> {
    let sizes: Vec<usize> = groups.iter().map(Vec::len).collect();
    let shares = apportion(&sizes, total);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(total);
    for (mut g, share) in groups.into_iter().zip(shares) {
        g.shuffle(&mut rng);
        out.extend_from_slice(&g[..share]);
    }
    out
}

/// Splits `total` (at most `sum(sizes)`) into integer shares proportional to `sizes` by the
/// largest-remainder method (ties to the earlier group), never exceeding a group's size.
fn apportion(sizes: &[usize], total: usize) -> Vec<usize> {
    let sum: usize = sizes.iter().sum();
    if sum == 0 {
        return vec![0; sizes.len()];
    }
    let total = total.min(sum);
    // Exact integer arithmetic: share_i = floor(total * size_i / sum), remainder r_i.
    let exact: Vec<(usize, u128)> = sizes
        .iter()
        .map(|&s| {
            let num = total as u128 * s as u128;
            ((num / sum as u128) as usize, num % sum as u128)
        })
        .collect();
    let mut shares: Vec<usize> = exact.iter().map(|&(q, _)| q).collect();
    let left = total - shares.iter().sum::<usize>();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| exact[b].1.cmp(&exact[a].1).then(a.cmp(&b)));
    for &i in order.iter().take(left) {
        shares[i] += 1;
    }
    shares
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(counts: &[usize]) -> Vec<u32> {
        // Interleaved so that class membership is not a contiguous block.
        let mut out = Vec::new();
        let mut left = counts.to_vec();
        while left.iter().any(|&c| c > 0) {
            for (class, c) in left.iter_mut().enumerate() {
                if *c > 0 {
                    *c -= 1;
                    out.push(class as u32);
                }
            }
        }
        out
    }

    fn count(labels: &[u32], idx: &[usize], class: u32) -> usize {
        idx.iter().filter(|&&i| labels[i] == class).count()
    }

    #[test]
    fn apportion_uses_largest_remainders() {
        assert_eq!(apportion(&[5, 3, 2], 5), vec![3, 1, 1]); // 2.5, 1.5, 1.0
        assert_eq!(apportion(&[1, 1, 1], 2), vec![1, 1, 0]);
        assert_eq!(apportion(&[4, 0, 4], 8), vec![4, 0, 4]);
        assert_eq!(apportion(&[2, 2], 9), vec![2, 2]);
    }

    #[test]
    fn split_partitions_indices_and_is_seed_deterministic() {
        let y = labels(&[30, 20, 10]);
        let (train, val) = train_val_split(&y, 0.2, 7, true).unwrap();
        assert_eq!(val.len(), 12);
        assert_eq!([0, 1, 2].map(|c| count(&y, &val, c)), [6, 4, 2]);
        let mut all: Vec<usize> = train.iter().chain(&val).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..60).collect::<Vec<_>>());
        assert!(train.windows(2).all(|w| w[0] < w[1]) && val.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            train_val_split(&y, 0.2, 7, true).unwrap(),
            (train, val.clone())
        );
        let (_, other) = train_val_split(&y, 0.2, 8, true).unwrap();
        assert_ne!(other, val);
    }

    #[test]
    fn plain_split_has_the_rounded_size() {
        let y = labels(&[7, 0, 4]);
        let (train, val) = train_val_split(&y, 0.25, 1, false).unwrap();
        assert_eq!((train.len(), val.len()), (8, 3)); // round(2.75)
        let (train, val) = train_val_split(&y, 0.0, 1, false).unwrap();
        assert_eq!((train.len(), val.len()), (11, 0));
    }

    #[test]
    fn bad_fraction_is_an_error() {
        for f in [-0.1, 1.0, f64::NAN] {
            let err = train_val_split(&[0, 1], f, 0, true)
                .unwrap_err()
                .to_string();
            assert!(err.contains("outside [0, 1)"), "{err}");
        }
    }

    #[test]
    fn subsets_are_balanced_and_checked() {
        let y = labels(&[10, 6, 8]);
        let s = stratified_subset(&y, SubsetSize::PerClass(5), 3).unwrap();
        assert_eq!([0, 1, 2].map(|c| count(&y, &s, c)), [5, 5, 5]);
        assert_eq!(
            stratified_subset(&y, SubsetSize::PerClass(5), 3).unwrap(),
            s
        );
        let t = stratified_subset(&y, SubsetSize::Total(12), 3).unwrap();
        assert_eq!([0, 1, 2].map(|c| count(&y, &t, c)), [5, 3, 4]);
        let err = stratified_subset(&y, SubsetSize::PerClass(7), 3)
            .unwrap_err()
            .to_string();
        assert!(err.contains("class 1 has 6"), "{err}");
        assert!(stratified_subset(&y, SubsetSize::Total(25), 3).is_err());
    }
}
