//! The evaluation stage: every built model predicts once per evaluation set; the metrics of the
//! output contract (ID, OOD, shift) come from those predictions, and so do the tables of a
//! method's [`Sweep`]s. Cost (latency, memory) is measured separately, once no worker process
//! shares the CPU.

use std::collections::BTreeMap;
use std::time::Instant;

use backbone::Input;
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};
use data::Dataset;
use ensembles::EnsembleModel;
use train::{Data, mix};
use uq_metrics::{Logits, MemberProbs, Options, Score, ScoreInput};

use crate::data::{EvalSets, Prep};
use crate::error::{Context, ExperimentError, Result};
use crate::memory;
use crate::methods::Sweep;
use crate::results::{Cost, IdMetrics, MethodResult, OodMetrics, ShiftMetrics};

/// How a seed's models are evaluated: on which sets, in which batches, with which OOD score.
pub struct Evaluator<'a> {
    pub sets: &'a EvalSets,
    pub prep: &'a Prep,
    pub batch: usize,
    pub score: Score,
    pub seed: u64,
    pub device: &'a Device,
}

impl Evaluator<'_> {
    /// Predictions of `model` on `set`; stochastic methods (MC Dropout) draw their masks from
    /// the device RNG, seeded per set by `salt`.
    fn run(&self, model: &dyn EnsembleModel, set: &Dataset, salt: u64) -> Result<Predictions> {
        self.device.seed(mix(self.seed, salt));
        predict(model, self.prep.data(set), self.batch, self.device)
    }

    /// ID, OOD and shift metrics of `model`; name, kind and cost are the caller's to fill in.
    pub fn evaluate(&self, model: &dyn EnsembleModel) -> Result<MethodResult> {
        let id = self.run(model, &self.sets.test, 0)?;
        let mut ood = BTreeMap::new();
        for (i, set) in self.sets.ood.iter().enumerate() {
            let m = ood_metrics(&id, &self.run(model, set, 1 + i as u64)?, self.score)?;
            ood.insert(set.name().to_string(), m);
        }
        let mut shift = BTreeMap::new();
        for (i, (name, set)) in self.sets.shift.iter().enumerate() {
            let m = shift_metrics(&self.run(model, set, 1000 + i as u64)?)?;
            shift.insert(name.clone(), m);
        }
        Ok(MethodResult {
            name: String::new(),
            kind: String::new(),
            members: model.members(),
            seed: self.seed,
            id: id_metrics(&id)?,
            ood,
            shift,
            // Timed later, once no worker process shares the CPU (see `measure_costs`).
            cost: Cost {
                params: model.num_params() as u64,
                flops: model.flops_per_sample(),
                latency_ms_b1: f64::NAN,
                latency_ms: f64::NAN,
                peak_mem_bytes: None,
            },
            extra: BTreeMap::new(),
        })
    }

    /// Latency and peak memory of each model on the first evaluation batch of the test set.
    pub fn costs(&self, models: &[&dyn EnsembleModel]) -> Result<Vec<Cost>> {
        let probe: Vec<usize> = (0..self.sets.test.len().min(self.batch)).collect();
        let sample = (self.prep.data(&self.sets.test)).batch(&probe, None, self.device)?;
        Ok(models
            .iter()
            .map(|model| cost(*model, &sample, self.batch))
            .collect())
    }

    /// The table of a sweep: its own columns, then per point accuracy, NLL and ECE on the test
    /// set, NLL and ECE on each shifted set, and on each OOD set the AUROC and the mean
    /// confidence (max softmax probability; OOD has no labels, so no loss). Returned as
    /// `(<name>.csv, <name>.md)` files.
    pub fn sweep(&self, sweep: &Sweep) -> Result<[(String, Vec<u8>); 2]> {
        let sets = self.sets;
        let mut header = sweep.columns.clone();
        header.extend(["clean_acc", "clean_nll", "clean_ece"].map(String::from));
        for (name, _) in &sets.shift {
            header.extend([format!("{name}_nll"), format!("{name}_ece")]);
        }
        for set in &sets.ood {
            header.extend([
                format!("{}_auroc", set.name()),
                format!("{}_confidence", set.name()),
            ]);
        }
        let mut rows = Vec::with_capacity(sweep.points.len());
        for (place, model) in &sweep.points {
            let model = model.as_ref();
            let predict = |set| predict(model, self.prep.data(set), self.batch, self.device);
            let clean = predict(&sets.test)?;
            let id = id_metrics(&clean)?;
            let mut row = place.clone();
            row.extend([id.accuracy, id.nll, id.ece].map(|x| format!("{x:.6}")));
            for (_, set) in &sets.shift {
                let m = shift_metrics(&predict(set)?)?;
                row.extend([m.nll, m.ece].map(|x| format!("{x:.6}")));
            }
            for set in &sets.ood {
                let ood = predict(set)?;
                let m = ood_metrics(&clean, &ood, self.score)?;
                // Mean max-softmax probability: how confidently the model answers on OOD.
                let msp = scores(&ood, Score::Msp)?;
                let confidence = 1.0 - msp.iter().sum::<f64>() / msp.len().max(1) as f64;
                row.extend([m.auroc, confidence].map(|x| format!("{x:.6}")));
            }
            rows.push(row);
        }
        let csv: String = std::iter::once(&header)
            .chain(&rows)
            .map(|r| r.join(",") + "\n")
            .collect();
        let markdown: String = [
            format!("| {} |\n", header.join(" | ")),
            format!("|{}\n", "---:|".repeat(header.len())),
        ]
        .into_iter()
        .chain(rows.iter().map(|r| format!("| {} |\n", r.join(" | "))))
        .collect();
        Ok([
            (format!("{}.csv", sweep.name), csv.into_bytes()),
            (format!("{}.md", sweep.name), markdown.into_bytes()),
        ])
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
) -> Result<Predictions> {
    let (m, n) = (model.members(), data.len());
    let mut member_probs: Vec<Vec<f32>> = vec![Vec::new(); m];
    let mut mean_logits = Vec::new();
    let indices: Vec<usize> = (0..n).collect();
    for chunk in indices.chunks(batch) {
        let input = data.batch(chunk, None, device).context(data.name())?;
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
    let place = format!("predictions on {}", data.name());
    Ok(Predictions {
        members: MemberProbs::from_f32(&flat, m, n, c).context(&place)?,
        logits: Logits::from_f32(&mean_logits, n, c).context(&place)?,
        labels: data.all_labels().iter().map(|&l| l as usize).collect(),
    })
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    (t.into_data().convert::<f32>().try_into_vec::<f32>())
        .map_err(|e| ExperimentError::invalid(format!("reading predictions: {e:?}")))
}

/// Accuracy, NLL, Brier, ECE, AECE and AURC of the ensemble's mean prediction.
pub fn id_metrics(p: &Predictions) -> Result<IdMetrics> {
    let r = uq_metrics::evaluate(&p.members.mean(), &p.labels, &Options::default())?;
    Ok(IdMetrics {
        accuracy: r.accuracy,
        nll: r.nll,
        brier: r.brier,
        ece: r.ece,
        aece: r.aece,
        aurc: r.aurc,
    })
}

pub fn shift_metrics(p: &Predictions) -> Result<ShiftMetrics> {
    let r = id_metrics(p)?;
    Ok(ShiftMetrics {
        accuracy: r.accuracy,
        nll: r.nll,
        ece: r.ece,
    })
}

/// The uncertainty score of every sample (higher = more likely OOD).
pub fn scores(p: &Predictions, score: Score) -> Result<Vec<f64>> {
    let mean = p.members.mean();
    let input = ScoreInput {
        probs: Some(&mean),
        members: Some(&p.members),
        logits: Some(&p.logits),
    };
    Ok(uq_metrics::score(score, &input)?)
}

pub fn ood_metrics(id: &Predictions, ood: &Predictions, score: Score) -> Result<OodMetrics> {
    let r = uq_metrics::ood_report(&scores(id, score)?, &scores(ood, score)?)?;
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
