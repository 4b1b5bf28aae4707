//! Predictions of a model on one set: member logits and probabilities, kept once per set so that
//! every metric (and a temperature-scaled copy) comes from the same forward passes.

use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor};
use seam::EnsembleModel;
use train::Data;
use uq_metrics::{Features, Logits, MemberProbs, member_softmax, scale_logits};

use crate::error::{ErrorContext, Result};

/// A method's predictions on one set.
#[derive(Debug, Clone)]
pub struct Predictions {
    pub members: MemberProbs,
    /// Each member's logits `[N, C]`.
    pub member_logits: Vec<Logits>,
    /// The members' mean logits (for logit-based OOD scores).
    pub logits: Logits,
    pub labels: Vec<usize>,
    /// Each member's features `[N, D]`, when asked for (the feature-space detectors).
    pub member_features: Vec<Features>,
}

impl Predictions {
    /// The predictions with every member's logits divided by `t`: a temperature-scaled
    /// ensemble is the mean of its members' scaled softmax.
    pub fn scaled(&self, t: f64) -> Result<Self> {
        let member_logits = (self.member_logits.iter())
            .map(|z| scale_logits(z, t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            members: member_softmax(&member_logits)?,
            member_logits,
            logits: scale_logits(&self.logits, t)?,
            labels: self.labels.clone(),
            member_features: self.member_features.clone(),
        })
    }
}

/// Runs `model` over `data` in batches of `batch`, keeping the members' features too when
/// `features` is set.
pub fn predict(
    model: &dyn EnsembleModel,
    data: Data<'_>,
    batch: usize,
    device: &Device,
    features: bool,
) -> Result<Predictions> {
    let (m, n) = (model.members(), data.len());
    let mut member_probs: Vec<Vec<f32>> = vec![Vec::new(); m];
    let mut member_logits: Vec<Vec<f32>> = vec![Vec::new(); m];
    let mut member_features: Vec<Vec<f32>> = vec![Vec::new(); if features { m } else { 0 }];
    let mut mean_logits = Vec::new();
    let indices: Vec<usize> = (0..n).collect();
    for chunk in indices.chunks(batch) {
        let input = data.batch(chunk, None, device).context(data.name())?;
        let out = model.member_outputs(input);
        if features {
            split_members(&mut member_features, to_vec(out.features)?);
        }
        let logits = out.logits;
        let probs = softmax(logits.clone(), 2);
        let mean: Tensor<2> = logits.clone().mean_dim(0).squeeze_dim(0);
        mean_logits.extend(to_vec(mean)?);
        split_members(&mut member_probs, to_vec(probs)?);
        split_members(&mut member_logits, to_vec(logits)?);
    }
    let c = mean_logits.len() / n.max(1);
    let place = format!("predictions on {}", data.name());
    let member_logits = (member_logits.iter())
        .map(|z| Logits::from_f32(z, n, c))
        .collect::<Result<Vec<_>, _>>()
        .context(&place)?;
    let member_features = (member_features.iter())
        .map(|x| Features::from_f32(x, n, x.len() / n.max(1)))
        .collect::<Result<Vec<_>, _>>()
        .context(format!("features of the {place}"))?;
    Ok(Predictions {
        members: MemberProbs::from_f32(&member_probs.concat(), m, n, c).context(&place)?,
        member_logits,
        logits: Logits::from_f32(&mean_logits, n, c).context(&place)?,
        labels: data.all_labels().iter().map(|&l| l as usize).collect(),
        member_features,
    })
}

/// Appends each member's rows of a `[M, B, C]` batch to its own list.
fn split_members(members: &mut [Vec<f32>], batch: Vec<f32>) {
    let per_member = batch.len() / members.len();
    for (k, member) in members.iter_mut().enumerate() {
        member.extend_from_slice(&batch[k * per_member..(k + 1) * per_member]);
    }
}

fn to_vec<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    (t.into_data().convert::<f32>().try_into_vec::<f32>()).context("reading predictions")
}
