use burn::tensor::kind::Basic;
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::error::HydraError;

/// Calibration/validation data for head importance: normalised image batches `[B, C, H, W]`
/// with labels `[B]`, plus OOD image batches (may be empty), all on one plain (non-autodiff)
/// device, the model's.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// In-distribution batches and their labels.
    pub batches: Vec<(Tensor<4>, Tensor<1, Int>)>,
    /// Out-of-distribution batches (needed by `circuit` with the `ood` or `avg` objective).
    pub ood: Vec<Tensor<4>>,
}

impl Calibration {
    /// Checks that there is in-distribution data and that every batch has one label per image;
    /// returns the device the data lives on.
    pub(crate) fn check(&self) -> Result<Device, HydraError> {
        let Some((first, _)) = self.batches.first() else {
            return Err(HydraError::invalid(
                "Calibration.batches",
                "an empty list",
                "at least one batch of in-distribution images",
            ));
        };
        for (i, (images, labels)) in self.batches.iter().enumerate() {
            let [b, ..] = images.dims();
            let [n] = labels.dims();
            if b != n || b == 0 {
                return Err(HydraError::invalid(
                    format!("Calibration.batches[{i}]"),
                    format!("{b} images with {n} labels"),
                    "a non-empty batch with one label per image",
                ));
            }
        }
        Ok(first.device())
    }

    /// The first `k` in-distribution samples and the first `k` OOD samples.
    pub(crate) fn take(&self, k: usize) -> Self {
        let batches = truncate(
            self.batches.iter().cloned(),
            k,
            |(x, _)| x.dims()[0],
            |(x, y), n| (x.narrow(0, 0, n), y.narrow(0, 0, n)),
        );
        let ood = truncate(
            self.ood.iter().cloned(),
            k,
            |x| x.dims()[0],
            |x, n| x.narrow(0, 0, n),
        );
        Self { batches, ood }
    }

    /// A bootstrap resample: as many samples as there are, drawn with replacement (seeded),
    /// in batches of the original first batch's size. OOD data is resampled the same way.
    pub(crate) fn bootstrap(&self, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut batches = Vec::new();
        if let Some((first, _)) = self.batches.first() {
            let size = first.dims()[0];
            let images = Tensor::cat(self.batches.iter().map(|(x, _)| x.clone()).collect(), 0);
            let labels = Tensor::cat(self.batches.iter().map(|(_, y)| y.clone()).collect(), 0);
            let picks = draw(images.dims()[0], &mut rng, &first.device());
            let images = chunks(images.select(0, picks.clone()), size);
            let labels = chunks(labels.select(0, picks), size);
            batches = images.into_iter().zip(labels).collect();
        }
        let mut ood = Vec::new();
        if let Some(first) = self.ood.first() {
            let all = Tensor::cat(self.ood.clone(), 0);
            let picks = draw(all.dims()[0], &mut rng, &first.device());
            ood = chunks(all.select(0, picks), first.dims()[0]);
        }
        Self { batches, ood }
    }
}

/// Keeps the leading batches up to `k` samples in all, cutting the last one.
fn truncate<T>(
    batches: impl Iterator<Item = T>,
    k: usize,
    len: impl Fn(&T) -> usize,
    cut: impl Fn(T, usize) -> T,
) -> Vec<T> {
    let mut left = k;
    let mut kept = Vec::new();
    for batch in batches {
        if left == 0 {
            break;
        }
        let n = len(&batch);
        kept.push(if n > left { cut(batch, left) } else { batch });
        left = left.saturating_sub(n);
    }
    kept
}

/// `n` row indices drawn uniformly with replacement.
fn draw(n: usize, rng: &mut StdRng, device: &Device) -> Tensor<1, Int> {
    let picks: Vec<i64> = (0..n).map(|_| rng.random_range(0..n) as i64).collect();
    Tensor::from_data(TensorData::new(picks, [n]), device)
}

/// Splits along dim 0 into pieces of `size` rows (the last may be shorter).
fn chunks<const D: usize, K: Basic>(t: Tensor<D, K>, size: usize) -> Vec<Tensor<D, K>> {
    let n = t.dims()[0];
    (0..n)
        .step_by(size.max(1))
        .map(|start| t.clone().narrow(0, start, size.min(n - start)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seven samples in batches of 3 whose image value equals the label; two OOD batches.
    fn numbered() -> Calibration {
        let device = Device::flex();
        let batch = |from: i64, n: usize| {
            let ids: Vec<i64> = (from..from + n as i64).collect();
            let images: Vec<f32> = ids.iter().map(|&i| i as f32).collect();
            (
                Tensor::<4>::from_data(TensorData::new(images, [n, 1, 1, 1]), &device),
                Tensor::<1, Int>::from_data(TensorData::new(ids, [n]), &device),
            )
        };
        Calibration {
            batches: vec![batch(0, 3), batch(3, 3), batch(6, 1)],
            ood: vec![batch(10, 2).0, batch(12, 2).0],
        }
    }

    fn ids(data: &Calibration) -> (Vec<Vec<f32>>, Vec<Vec<i64>>) {
        let f = |x: &Tensor<4>| x.to_data().try_to_vec::<f32>().unwrap();
        let images = data.batches.iter().map(|(x, _)| f(x)).collect();
        let labels = data
            .batches
            .iter()
            .map(|(_, y)| y.to_data().convert::<i64>().try_to_vec::<i64>().unwrap())
            .collect();
        (images, labels)
    }

    #[test]
    fn bootstrap_keeps_pairs_and_batch_sizes() {
        let data = numbered();
        let resample = data.bootstrap(3);
        let (images, labels) = ids(&resample);
        let sizes: Vec<usize> = images.iter().map(Vec::len).collect();
        assert_eq!(sizes, [3, 3, 1]);
        let images: Vec<f32> = images.concat();
        let labels: Vec<i64> = labels.concat();
        assert!(images.iter().zip(&labels).all(|(&x, &y)| x == y as f32));
        assert!(labels.iter().all(|&y| (0..7).contains(&y)));
        // With replacement: 7 draws from 7 repeat some sample (all distinct has odds 7!/7^7).
        let mut distinct = labels.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() < 7, "{labels:?}");
        let ood: Vec<f32> = (resample.ood.iter())
            .flat_map(|x| x.to_data().try_to_vec::<f32>().unwrap())
            .collect();
        assert_eq!(ood.len(), 4);
        assert!(ood.iter().all(|v| (10.0..14.0).contains(v)));
        assert_eq!(ids(&data.bootstrap(3)), ids(&resample));
        assert_ne!(ids(&data.bootstrap(4)), ids(&resample));
    }

    #[test]
    fn take_keeps_the_leading_samples() {
        let data = numbered().take(4);
        assert_eq!(ids(&data).1, [vec![0, 1, 2], vec![3]]);
        let ood: Vec<usize> = data.ood.iter().map(|x| x.dims()[0]).collect();
        assert_eq!(ood, [2, 2]);
        assert_eq!(ids(&numbered().take(50)).1.concat().len(), 7);
    }

    #[test]
    fn check_rejects_empty_data_and_mismatched_labels() {
        let empty = Calibration {
            batches: vec![],
            ood: vec![],
        };
        assert!(
            empty
                .check()
                .unwrap_err()
                .to_string()
                .contains("Calibration.batches")
        );
        let mut data = numbered();
        data.batches[1].1 = data.batches[1].1.clone().narrow(0, 0, 2);
        let err = data.check().unwrap_err().to_string();
        assert!(
            err.contains("Calibration.batches[1] = 3 images with 2 labels"),
            "{err}"
        );
    }
}
