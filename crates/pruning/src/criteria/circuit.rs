//! `circuit`: the head criterion of Headmap-style greedy circuit discovery
//! (Wang et al. 2025).
//!
//! Blocks are walked in order. In block l each head h is masked together with the heads already
//! chosen, and the objective is measured on the first `samples` validation samples; the `n` heads
//! whose masking hurts most join the circuit and stay masked for the later blocks.
//!
//! Harm of masking (higher = worse):
//! - `loss`: the mean cross-entropy on the in-distribution samples;
//! - `ood`: 1 - AUROC of the uncertainty 1 - MSP between in-distribution and OOD samples;
//! - `avg`: the mean of `1 - exp(-loss)` (one minus the geometric-mean probability of the true
//!   label, so in [0, 1]) and `1 - AUROC` (already in [0, 1]).
//!
//! Score of a head: its marginal harm (over the chosen heads alone) min-max scaled to [0, 1]
//! over the model, plus 2 for the heads in the circuit, which so rank above all others.

use std::num::NonZeroUsize;

use backbone::{Classifier, Gates, Input, Mode};
use burn::tensor::activation::softmax;
use burn::tensor::{Device, Tensor, TensorData};
use serde::Deserialize;
use train::cross_entropy;

use registry::Entry;

use super::shared::grid;
use crate::calibration::Calibration;
use crate::criterion::{Criterion, CriterionEntry, Registered, ScoreContext};
use crate::error::PruningError;
use crate::params::read_params;
use crate::scores::Scores;
use crate::units::UnitKind;

const KINDS: &[UnitKind] = &[UnitKind::Head];

pub(crate) const CRITERION: CriterionEntry = Entry {
    name: "circuit",
    about: "greedy circuit discovery, block by block (objective = loss | ood | avg, \
            objectives = [..] per member, samples, n heads per block)",
    item: Registered {
        kinds: KINDS,
        build: |params| Circuit::from_params(params).map(|c| Box::new(c) as _),
    },
};

const DEFAULT_SAMPLES: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Objective {
    Loss,
    Ood,
    Avg,
}

/// `importance_params` as the experiment file writes them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// One objective for every member...
    objective: Option<Objective>,
    /// ...or one per member, cycled.
    objectives: Option<Vec<Objective>>,
    samples: Option<NonZeroUsize>,
    n: Option<NonZeroUsize>,
}

struct Circuit {
    /// Member m uses `objectives[m % len]`.
    objectives: Vec<Objective>,
    samples: usize,
    /// Heads added per block; `None` = half the heads (at least 1).
    n: Option<usize>,
}

impl Circuit {
    fn from_params(table: &toml::Table) -> Result<Self, PruningError> {
        let params: Params = read_params("circuit", table)?;
        let objectives = match (params.objective, params.objectives) {
            (Some(_), Some(_)) => {
                return Err(PruningError::invalid(
                    "circuit.objectives",
                    "given together with circuit.objective",
                    "either `objective` or `objectives`, not both",
                ));
            }
            (_, Some(many)) if many.is_empty() => {
                return Err(PruningError::invalid(
                    "circuit.objectives",
                    "[]",
                    "a non-empty array of \"loss\", \"ood\" or \"avg\"",
                ));
            }
            (Some(one), None) => vec![one],
            (None, Some(many)) => many,
            (None, None) => vec![Objective::Loss],
        };
        Ok(Self {
            objectives,
            samples: params.samples.map_or(DEFAULT_SAMPLES, NonZeroUsize::get),
            n: params.n.map(NonZeroUsize::get),
        })
    }
}

impl Criterion for Circuit {
    fn name(&self) -> &'static str {
        CRITERION.name
    }

    fn kinds(&self) -> &'static [UnitKind] {
        KINDS
    }

    fn varies_by_member(&self) -> bool {
        self.objectives.len() > 1
    }

    fn scores(
        &self,
        model: &Classifier,
        kind: UnitKind,
        data: &Calibration,
        ctx: &ScoreContext,
    ) -> Result<Scores, PruningError> {
        let (layers, heads) = grid(model, kind)?;
        let device = data.check(model)?;
        let n = self.n.unwrap_or((heads / 2).max(1));
        if n > heads {
            return Err(PruningError::invalid(
                "circuit.n",
                n,
                format!("at most the {heads} heads of a block"),
            ));
        }
        let objective = self.objectives[ctx.member % self.objectives.len()];
        let data = data.take(self.samples);
        if objective != Objective::Loss && data.ood.is_empty() {
            return Err(PruningError::invalid(
                "circuit.objective",
                format!("{objective:?}").to_lowercase(),
                "OOD calibration data (Calibration.ood is empty); or use objective = \"loss\"",
            ));
        }
        let eval = Evaluator {
            model,
            data: &data,
            device,
            objective,
        };

        let mut mask = vec![vec![1.0f32; heads]; layers];
        let mut harm = vec![vec![0.0; heads]; layers];
        let mut chosen = vec![vec![false; heads]; layers];
        for l in 0..layers {
            let base = eval.harm(&mask)?;
            for h in 0..heads {
                mask[l][h] = 0.0;
                harm[l][h] = eval.harm(&mask)? - base;
                mask[l][h] = 1.0;
            }
            let mut order: Vec<usize> = (0..heads).collect();
            order.sort_by(|&a, &b| harm[l][b].total_cmp(&harm[l][a]));
            for &h in &order[..n] {
                chosen[l][h] = true;
                mask[l][h] = 0.0;
            }
        }

        let scaled = Scores(harm).min_max();
        let scores = (scaled.0.into_iter().zip(&chosen))
            .map(|(row, picked)| {
                row.into_iter()
                    .zip(picked)
                    .map(|(d, &c)| if c { d + 2.0 } else { d })
                    .collect()
            })
            .collect();
        Ok(Scores(scores))
    }
}

/// Measures the objective's harm with a given head mask.
struct Evaluator<'a> {
    model: &'a Classifier,
    data: &'a Calibration,
    device: Device,
    objective: Objective,
}

impl Evaluator<'_> {
    fn harm(&self, mask: &[Vec<f32>]) -> Result<f64, PruningError> {
        let (layers, heads) = (mask.len(), mask[0].len());
        let flat: Vec<f32> = mask.iter().flatten().copied().collect();
        let gates = Gates {
            heads: Some(Tensor::from_data(
                TensorData::new(flat, [layers, heads]),
                &self.device,
            )),
            ..Gates::none()
        };
        let logits =
            |input: &Input| (self.model).forward(input.clone(), &gates, Mode::Deterministic);
        let loss = || {
            let (mut sum, mut count) = (0.0, 0);
            for (input, labels) in &self.data.batches {
                let n = labels.dims()[0];
                let mean: f32 = cross_entropy(logits(input).unsqueeze_dim(0), labels.clone(), 0.0)
                    .into_scalar();
                sum += mean as f64 * n as f64;
                count += n;
            }
            sum / count as f64
        };
        let auroc = || {
            // Uncertainty 1 - MSP; OOD is the positive class.
            let uncertainty = |input: &Input| -> Vec<f64> {
                let msp = softmax(logits(input), 1).max_dim(1);
                let values = msp.into_data().convert::<f64>().try_to_vec::<f64>();
                values
                    .unwrap_or_default()
                    .into_iter()
                    .map(|p| 1.0 - p)
                    .collect()
            };
            let id: Vec<f64> = self
                .data
                .batches
                .iter()
                .flat_map(|(x, _)| uncertainty(x))
                .collect();
            let ood: Vec<f64> = self.data.ood.iter().flat_map(uncertainty).collect();
            uq_metrics::auroc(&id, &ood).map_err(|source| PruningError::Metric {
                what: "circuit: AUROC of 1 - MSP",
                source,
            })
        };
        Ok(match self.objective {
            Objective::Loss => loss(),
            Objective::Ood => 1.0 - auroc()?,
            Objective::Avg => ((1.0 - (-loss()).exp()) + (1.0 - auroc()?)) / 2.0,
        })
    }
}
