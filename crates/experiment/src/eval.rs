//! Evaluation: member predictions over a dataset, then the metrics of the output contract.

use std::time::Instant;

use backbone::Input;
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};
use data::{Dataset, Normalization, WordPiece};
use ensembles::EnsembleModel;
use train::{Data, ImageData, TextData};
use uq_metrics::{Logits, MemberProbs, Options, Score, ScoreInput};

use crate::memory;
use crate::results::{Cost, IdMetrics, OodMetrics, ShiftMetrics};

/// The evaluation sets of one seed (raw pixels or texts; [`Prep`] turns them into model input):
/// the test set, the OOD sets and the shifted test sets `<corruption>-<severity>` (images).
pub struct EvalSets {
    pub test: Dataset,
    pub ood: Vec<Dataset>,
    pub shift: Vec<(String, Dataset)>,
}

/// How a run's samples become model input: images normalised with the training statistics, or
/// texts tokenised.
#[derive(Debug, Clone)]
pub enum Prep {
    Pixels(Normalization),
    Tokens {
        tokenizer: WordPiece,
        max_tokens: usize,
    },
}

impl Prep {
    /// `set` ready for batching.
    ///
    /// # Panics
    /// If `set` is of the other modality (the runner prepares each run's sets one way).
    pub fn data<'a>(&'a self, set: &'a Dataset) -> Data<'a> {
        match (self, set) {
            (Self::Pixels(norm), Dataset::Images(set)) => Data::Images(ImageData { set, norm }),
            (
                Self::Tokens {
                    tokenizer,
                    max_tokens,
                },
                Dataset::Text(set),
            ) => Data::Text(TextData {
                set,
                tokenizer,
                max_tokens: *max_tokens,
            }),
            _ => panic!("{}: prepared for the other modality", set.name()),
        }
    }

    /// Text: the mean tokenised length of `set` (`[CLS]`, `[SEP]` and the cut included),
    /// rounded; 0 for images.
    pub fn mean_tokens(&self, set: &Dataset) -> Result<usize, String> {
        let (
            Self::Tokens {
                tokenizer,
                max_tokens,
            },
            Dataset::Text(texts),
        ) = (self, set)
        else {
            return Ok(0);
        };
        let mut total = 0;
        for text in &texts.texts {
            total += (tokenizer.encode(text, *max_tokens))
                .map_err(|e| format!("{}: {e}", texts.name))?
                .ids
                .len();
        }
        Ok((total as f64 / texts.len().max(1) as f64).round() as usize)
    }
}

/// A method's predictions on one set: member probabilities and the members' mean logits.
pub struct Predictions {
    pub members: MemberProbs,
    pub logits: Logits,
    pub labels: Vec<usize>,
}

/// Runs `model` over `data` in batches of `batch`.
pub fn predict(
    model: &dyn EnsembleModel,
    data: Data<'_>,
    batch: usize,
    device: &Device,
) -> Result<Predictions, String> {
    let (m, n) = (model.members(), data.len());
    let mut member_probs: Vec<Vec<f32>> = vec![Vec::new(); m];
    let mut mean_logits = Vec::new();
    let indices: Vec<usize> = (0..n).collect();
    for chunk in indices.chunks(batch) {
        let input = data
            .batch(chunk, None, device)
            .map_err(|e| format!("{}: {e}", data.name()))?;
        let logits = model.member_logits(input);
        let probs = softmax(logits.clone(), 2);
        let mean: Tensor<2> = logits.mean_dim(0).squeeze_dim(0);
        mean_logits.extend(to_vec(mean)?);
        let probs = to_vec(probs)?;
        let per_member = probs.len() / m;
        for (k, member) in member_probs.iter_mut().enumerate() {
            member.extend_from_slice(&probs[k * per_member..(k + 1) * per_member]);
        }
    }
    let c = mean_logits.len() / n.max(1);
    let flat: Vec<f32> = member_probs.concat();
    let named = |e: uq_metrics::MetricsError| format!("predictions on {}: {e}", data.name());
    Ok(Predictions {
        members: MemberProbs::from_f32(&flat, m, n, c).map_err(named)?,
        logits: Logits::from_f32(&mean_logits, n, c).map_err(named)?,
        labels: data.all_labels().iter().map(|&l| l as usize).collect(),
    })
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, String> {
    t.into_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .map_err(|e| format!("reading predictions: {e:?}"))
}

/// Accuracy, NLL, Brier, ECE, AECE and AURC of the ensemble's mean prediction.
pub fn id_metrics(p: &Predictions) -> Result<IdMetrics, String> {
    let r = uq_metrics::evaluate(&p.members.mean(), &p.labels, &Options::default())
        .map_err(|e| e.to_string())?;
    Ok(IdMetrics {
        accuracy: r.accuracy,
        nll: r.nll,
        brier: r.brier,
        ece: r.ece,
        aece: r.aece,
        aurc: r.aurc,
    })
}

pub fn shift_metrics(p: &Predictions) -> Result<ShiftMetrics, String> {
    let r = id_metrics(p)?;
    Ok(ShiftMetrics {
        accuracy: r.accuracy,
        nll: r.nll,
        ece: r.ece,
    })
}

/// The uncertainty score of every sample (higher = more likely OOD).
pub fn scores(p: &Predictions, score: Score) -> Result<Vec<f64>, String> {
    let mean = p.members.mean();
    let input = ScoreInput {
        probs: Some(&mean),
        members: Some(&p.members),
        logits: Some(&p.logits),
    };
    uq_metrics::score(score, &input).map_err(|e| e.to_string())
}

pub fn ood_metrics(
    id: &Predictions,
    ood: &Predictions,
    score: Score,
) -> Result<OodMetrics, String> {
    let r = uq_metrics::ood_report(&scores(id, score)?, &scores(ood, score)?)
        .map_err(|e| e.to_string())?;
    Ok(OodMetrics {
        auroc: r.auroc,
        aupr_in: r.aupr_in,
        aupr_out: r.aupr_out,
        fpr95: r.fpr95,
    })
}

/// Parameters, FLOPs, median latency at batch 1 and at `batch` (after warm-up), and the peak
/// heap memory of one forward pass at `batch`.
pub fn cost(model: &dyn EnsembleModel, sample: &Input, batch: usize) -> Cost {
    let one = sample.clone().narrow(0, 1);
    let full = sample.clone().resized(batch);
    let latency_ms_b1 = median_ms(|| sync(model.member_logits(one.clone())), 5, 25);
    let latency_ms = median_ms(|| sync(model.member_logits(full.clone())), 1, 5);
    let baseline = memory::reset_peak();
    sync(model.member_logits(full));
    Cost {
        params: model.num_params() as u64,
        flops: model.flops_per_sample(),
        latency_ms_b1,
        latency_ms,
        peak_mem_bytes: memory::peak_bytes(baseline),
    }
}

/// Waits for the result (backends may run asynchronously).
fn sync(t: Tensor<3>) {
    let _ = t.into_data();
}

fn median_ms(mut f: impl FnMut(), warmup: usize, reps: usize) -> f64 {
    (0..warmup).for_each(|_| f());
    let mut times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[reps / 2]
}
