use backbone::{Classifier, Input};
use burn::tensor::{Device, Int, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::error::HydraError;

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
    pub(crate) fn check(&self, model: &Classifier) -> Result<Device, HydraError> {
        let Some((first, _)) = self.batches.first() else {
            return Err(HydraError::invalid(
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
                return Err(HydraError::invalid(
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
    pub(crate) fn bootstrap(&self, seed: u64) -> Result<Self, HydraError> {
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
fn concat(inputs: Vec<Input>) -> Result<Input, HydraError> {
    let mixed = || {
        HydraError::invalid(
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
        None => Err(HydraError::invalid(
            "Calibration",
            "no batches",
            "at least one batch",
        )),
    }
}

/// Checks that `model` reads `input` (named `field` in errors): images for the ViT; for BERT,
/// token ids and a mask of one shape, no longer than the position table, ids in the vocabulary.
fn check_input(model: &Classifier, input: &Input, field: String) -> Result<(), HydraError> {
    match (model, input) {
        (Classifier::Vit(_), Input::Images(_)) => Ok(()),
        (Classifier::Bert(bert), Input::Tokens { ids, mask }) => {
            let tables = &bert.bert.embeddings;
            let [vocab, _] = tables.word_embeddings.weight.dims();
            let [positions, _] = tables.position_embeddings.weight.dims();
            let [_, len] = ids.dims();
            if ids.dims() != mask.dims() {
                return Err(HydraError::invalid(
                    field,
                    format!("ids {:?} with mask {:?}", ids.dims(), mask.dims()),
                    "an attention mask of the ids' shape",
                ));
            }
            if len > positions {
                return Err(HydraError::invalid(
                    field,
                    format!("{len} tokens per sequence"),
                    format!("at most {positions}, the model's position table"),
                ));
            }
            let low: i64 = ids.clone().min().into_scalar();
            let high: i64 = ids.clone().max().into_scalar();
            if low < 0 || high >= vocab as i64 {
                return Err(HydraError::invalid(
                    field,
                    format!("token ids from {low} to {high}"),
                    format!("ids in 0..{vocab}, the model's vocabulary"),
                ));
            }
            Ok(())
        }
        (Classifier::Vit(_), Input::Tokens { .. }) => Err(HydraError::invalid(
            field,
            "token sequences",
            "images: the model is a Vision Transformer",
        )),
        (Classifier::Bert(_), Input::Images(_)) => Err(HydraError::invalid(
            field,
            "images",
            "token sequences: the model is a BERT classifier",
        )),
    }
}

#[cfg(test)]
mod tests {
    use backbone::{BertConfig, ViTConfig};

    use super::*;

    fn device() -> Device {
        Device::flex()
    }

    fn ints(values: Vec<i64>, shape: [usize; 2]) -> Tensor<2, Int> {
        Tensor::from_data(TensorData::new(values, shape), &device())
    }

    fn labels(from: i64, n: usize) -> Tensor<1, Int> {
        let ids: Vec<i64> = (from..from + n as i64).collect();
        Tensor::from_data(TensorData::new(ids, [n]), &device())
    }

    /// Seven samples in batches of 3 whose image value equals the label; two OOD batches.
    fn numbered() -> Calibration {
        let batch = |from: i64, n: usize| {
            let images: Vec<f32> = (from..from + n as i64).map(|i| i as f32).collect();
            let images = Tensor::<4>::from_data(TensorData::new(images, [n, 1, 1, 1]), &device());
            (Input::Images(images), labels(from, n))
        };
        Calibration {
            batches: vec![batch(0, 3), batch(3, 3), batch(6, 1)],
            ood: vec![batch(10, 2).0, batch(12, 2).0],
        }
    }

    fn floats(x: &Input) -> Vec<f32> {
        let Input::Images(x) = x else {
            panic!("images expected")
        };
        x.to_data().try_to_vec::<f32>().unwrap()
    }

    fn longs<const D: usize>(t: &Tensor<D, Int>) -> Vec<i64> {
        t.to_data().convert::<i64>().try_to_vec::<i64>().unwrap()
    }

    fn ids(data: &Calibration) -> (Vec<Vec<f32>>, Vec<Vec<i64>>) {
        let images = data.batches.iter().map(|(x, _)| floats(x)).collect();
        let labels = data.batches.iter().map(|(_, y)| longs(y)).collect();
        (images, labels)
    }

    #[test]
    fn bootstrap_keeps_pairs_and_batch_sizes() {
        let data = numbered();
        let resample = data.bootstrap(3).unwrap();
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
        let ood: Vec<f32> = resample.ood.iter().flat_map(floats).collect();
        assert_eq!(ood.len(), 4);
        assert!(ood.iter().all(|v| (10.0..14.0).contains(v)));
        assert_eq!(ids(&data.bootstrap(3).unwrap()), ids(&resample));
        assert_ne!(ids(&data.bootstrap(4).unwrap()), ids(&resample));
    }

    /// Token batches of lengths 2 and 4: row i holds ids `i, 40 + i, ...` up to its length.
    fn token_batches() -> Calibration {
        let batch = |from: i64, n: usize, len: usize| {
            let ids: Vec<i64> = (0..n as i64)
                .flat_map(|i| (0..len as i64).map(move |t| from + i + 40 * t))
                .collect();
            let ids = ints(ids, [n, len]);
            let mask = ids.clone().ones_like();
            (Input::Tokens { ids, mask }, labels(from, n))
        };
        Calibration {
            batches: vec![batch(0, 3, 2), batch(3, 2, 4)],
            ood: vec![],
        }
    }

    #[test]
    fn bootstrap_pads_token_batches_to_the_longest() {
        let resample = token_batches().bootstrap(5).unwrap();
        let sizes: Vec<usize> = resample
            .batches
            .iter()
            .map(|(x, _)| x.batch_size())
            .collect();
        assert_eq!(sizes, [3, 2]);
        for (input, labels) in &resample.batches {
            let Input::Tokens { ids, mask } = input else {
                panic!("tokens expected")
            };
            assert_eq!(ids.dims()[1], 4);
            for ((row, mask), label) in (longs(ids).chunks(4))
                .zip(longs(mask).chunks(4))
                .zip(longs(labels))
            {
                // The first id is the label; short rows end in masked id-0 padding.
                let len = if label < 3 { 2 } else { 4 };
                let expected: Vec<i64> = (0..4)
                    .map(|t| if t < len { label + 40 * t } else { 0 })
                    .collect();
                assert_eq!(row, expected);
                let ones: Vec<i64> = (0..4).map(|t| i64::from(t < len)).collect();
                assert_eq!(mask, ones);
            }
        }
    }

    #[test]
    fn take_keeps_the_leading_samples() {
        let data = numbered().take(4);
        assert_eq!(ids(&data).1, [vec![0, 1, 2], vec![3]]);
        let ood: Vec<usize> = data.ood.iter().map(Input::batch_size).collect();
        assert_eq!(ood, [2, 2]);
        assert_eq!(ids(&numbered().take(50)).1.concat().len(), 7);
    }

    #[test]
    fn check_rejects_empty_data_mismatched_labels_and_the_wrong_input() {
        let vit = Classifier::from(ViTConfig::new().init(&device()).unwrap());
        let empty = Calibration {
            batches: vec![],
            ood: vec![],
        };
        let err = empty.check(&vit).unwrap_err().to_string();
        assert!(err.contains("Calibration.batches"), "{err}");
        let mut data = numbered();
        data.batches[1].1 = data.batches[1].1.clone().narrow(0, 0, 2);
        let err = data.check(&vit).unwrap_err().to_string();
        assert!(
            err.contains("Calibration.batches[1] = 3 samples with 2 labels"),
            "{err}"
        );

        let err = token_batches().check(&vit).unwrap_err().to_string();
        assert!(
            err.starts_with("Calibration.batches[0] = token sequences"),
            "{err}"
        );
        let bert = BertConfig::new()
            .with_vocab_size(50)
            .with_d_model(8)
            .with_n_layers(1)
            .with_n_heads(2)
            .with_d_mlp(16)
            .with_max_position(3)
            .init_classifier(2, &device())
            .unwrap();
        let bert = Classifier::from(bert);
        let err = numbered().check(&bert).unwrap_err().to_string();
        assert!(err.starts_with("Calibration.batches[0] = images"), "{err}");
        // Batch 1 has 4 tokens per sequence, the position table 3.
        let err = token_batches().check(&bert).unwrap_err().to_string();
        assert!(
            err.contains("Calibration.batches[1] = 4 tokens per sequence"),
            "{err}"
        );
        let mut data = token_batches();
        data.batches.truncate(1);
        assert!(data.check(&bert).is_ok());
        // Batch 0's ids reach 40 + 2 = 42; a vocabulary of 50 holds them, one of 40 does not.
        let small = BertConfig::new()
            .with_vocab_size(40)
            .with_d_model(8)
            .with_n_layers(1)
            .with_n_heads(2)
            .with_d_mlp(16)
            .init_classifier(2, &device())
            .unwrap();
        let err = data
            .check(&Classifier::from(small))
            .unwrap_err()
            .to_string();
        assert!(err.contains("token ids from 0 to 42"), "{err}");
        data.ood = numbered().ood;
        let err = data.check(&bert).unwrap_err().to_string();
        assert!(err.starts_with("Calibration.ood[0] = images"), "{err}");
    }
}
