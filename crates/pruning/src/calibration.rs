use backbone::{Classifier, Input};
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::error::PruningError;

/// Calibration/validation data for head importance: input batches (normalised images, or token
/// ids with their attention masks) with labels `[B]`, plus OOD batches (may be empty), all on
/// one plain (non-autodiff) device, the model's.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// In-distribution batches and their labels.
    pub batches: Vec<(Input, Tensor<1, Int>)>,
    /// Out-of-distribution batches (needed by `circuit` with the `ood` or `avg` objective).
    pub ood: Vec<Input>,
}

impl Calibration {
    /// Checks that there is in-distribution data, that every batch has one label per sample
    /// and that every batch is input `model` reads; returns the device the data lives on.
    pub fn check(&self, model: &Classifier) -> Result<Device, PruningError> {
        let Some((first, _)) = self.batches.first() else {
            return Err(PruningError::invalid(
                "Calibration.batches",
                "an empty list",
                "at least one batch of in-distribution samples",
            ));
        };
        for (i, (input, labels)) in self.batches.iter().enumerate() {
            let field = format!("Calibration.batches[{i}]");
            let b = input.batch_size();
            let [n] = labels.dims();
            if b != n || b == 0 {
                return Err(PruningError::invalid(
                    field,
                    format!("{b} samples with {n} labels"),
                    "a non-empty batch with one label per sample",
                ));
            }
            check_input(model, input, field)?;
        }
        for (i, input) in self.ood.iter().enumerate() {
            check_input(model, input, format!("Calibration.ood[{i}]"))?;
        }
        Ok(first.device())
    }

    /// The first `k` in-distribution samples and the first `k` OOD samples.
    pub(crate) fn take(&self, k: usize) -> Self {
        let batches = truncate(
            self.batches.iter().cloned(),
            k,
            |(x, _)| x.batch_size(),
            |(x, y), n| (x.narrow(0, n), y.narrow(0, 0, n)),
        );
        let ood = truncate(self.ood.iter().cloned(), k, Input::batch_size, |x, n| {
            x.narrow(0, n)
        });
        Self { batches, ood }
    }

    /// A bootstrap resample: as many samples as there are, drawn with replacement (seeded),
    /// in batches of the original first batch's size. OOD data is resampled the same way.
    /// Token batches of different lengths are first padded to the longest (masked padding
    /// leaves every real token's output unchanged).
    pub fn bootstrap(&self, seed: u64) -> Result<Self, PruningError> {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut batches = Vec::new();
        if let Some((first, _)) = self.batches.first() {
            let inputs = concat(self.batches.iter().map(|(x, _)| x.clone()).collect())?;
            let labels = Tensor::cat(self.batches.iter().map(|(_, y)| y.clone()).collect(), 0);
            let n = inputs.batch_size();
            let picks = draw(n, &mut rng, &first.device());
            let all = (inputs.select(picks.clone()), labels.select(0, picks));
            batches = chunks(all, n, first.batch_size(), |(x, y), start, len| {
                (x.narrow(start, len), y.narrow(0, start, len))
            });
        }
        let mut ood = Vec::new();
        if let Some(first) = self.ood.first() {
            let all = concat(self.ood.clone())?;
            let n = all.batch_size();
            let all = all.select(draw(n, &mut rng, &first.device()));
            ood = chunks(all, n, first.batch_size(), Input::narrow);
        }
        Ok(Self { batches, ood })
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

/// Splits `n` rows into pieces of `size` rows (the last may be shorter).
fn chunks<T: Clone>(
    all: T,
    n: usize,
    size: usize,
    narrow: impl Fn(T, usize, usize) -> T,
) -> Vec<T> {
    (0..n)
        .step_by(size.max(1))
        .map(|start| narrow(all.clone(), start, size.min(n - start)))
        .collect()
}

/// One input holding every sample of `inputs` (all of one kind, as [`Calibration::check`]
/// ensures); token batches are padded to the longest with masked id-0 tokens.
fn concat(inputs: Vec<Input>) -> Result<Input, PruningError> {
    let mixed = || {
        PruningError::invalid(
            "Calibration",
            "images mixed with token sequences",
            "batches of one kind",
        )
    };
    match inputs.first() {
        Some(Input::Images(_)) => {
            let images = inputs.into_iter().map(|x| match x {
                Input::Images(x) => Ok(x),
                Input::Tokens { .. } => Err(mixed()),
            });
            Ok(Input::Images(Tensor::cat(
                images.collect::<Result<_, _>>()?,
                0,
            )))
        }
        Some(Input::Tokens { .. }) => {
            let longest = (inputs.iter())
                .map(|x| match x {
                    Input::Tokens { ids, .. } => ids.dims()[1],
                    Input::Images(_) => 0,
                })
                .max()
                .unwrap_or(0);
            let pad = |t: Tensor<2, Int>| {
                let [b, len] = t.dims();
                if len == longest {
                    return t;
                }
                let zeros = Tensor::zeros([b, longest - len], &t.device());
                Tensor::cat(vec![t, zeros], 1)
            };
            let (mut all_ids, mut all_masks) = (vec![], vec![]);
            for input in inputs {
                let Input::Tokens { ids, mask } = input else {
                    return Err(mixed());
                };
                all_ids.push(pad(ids));
                all_masks.push(pad(mask));
            }
            Ok(Input::Tokens {
                ids: Tensor::cat(all_ids, 0),
                mask: Tensor::cat(all_masks, 0),
            })
        }
        None => Err(PruningError::invalid(
            "Calibration",
            "no batches",
            "at least one batch",
        )),
    }
}

/// Checks that `model` reads `input` (named `field` in errors): its modality, and what its
/// backbone checks (BERT: one shape for ids and mask, within the position table and vocabulary).
fn check_input(model: &Classifier, input: &Input, field: String) -> Result<(), PruningError> {
    Ok(model.check_input(input, &field)?)
}

#[cfg(test)]
mod tests;
