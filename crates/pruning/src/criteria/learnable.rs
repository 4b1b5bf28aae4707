//! `learnable`: HetDPT's learnable gate scores, for every unit kind. One real score θ per unit,
//! binarised in the forward pass (`g = [θ > 0]`, straight-through gradient) on the gates that
//! switch the kind off, trained by plain SGD against the task loss plus a sparsity pressure
//! `λ·Σ g` over the calibration batches (cycled for `steps` steps); the model's weights stay
//! frozen. The score of a unit is its final θ.
//!
//! Every θ starts at `init`. The pressure lowers all of them at the same rate `lr·λ`, so on its
//! own it ranks nothing: it takes gates across zero, and a gate that is off feels the loss's
//! gradient at 0, which pushes a unit the model misses back up in proportion to how much it is
//! missed. A unit nothing misses sinks by the pressure alone and ends lowest. HetDPT's removal
//! rounds (`hetdpt::removal_order`) train these scores one kind at a time, removing one unit a
//! round; this criterion is their one-round form, a ranking of all units at once.

use backbone::{Classifier, Mode};
use burn::tensor::{Tensor, TensorData};
use serde::Deserialize;
use train::cross_entropy;

use registry::Entry;

use super::shared::{gate_gradient, grid};
use crate::calibration::Calibration;
use crate::criterion::{Criterion, CriterionEntry, Registered, ScoreContext, Scored};
use crate::error::PruningError;
use crate::params::read_params;
use crate::scores::Scores;
use crate::units::UnitKind;

/// Binary gates `[θ > 0]` with a straight-through gradient: the forward pass sees 0 or 1, the
/// gradient reaches θ unchanged (HetDPT's removal rounds gate the same way).
pub fn straight_through<const D: usize>(theta: &Tensor<D>) -> Tensor<D> {
    let binary = theta.clone().greater_elem(0.0).float();
    binary + theta.clone() - theta.clone().detach()
}

pub(crate) const CRITERION: CriterionEntry = Entry {
    name: "learnable",
    about: "HetDPT's learnable gates: straight-through binary gate scores trained against the \
            loss plus a sparsity pressure (steps, lr, sparsity, init)",
    item: Registered {
        kinds: &UnitKind::ALL,
        build: |params| Learnable::from_params(params).map(|c| Box::new(c) as _),
    },
};

/// `importance_params` as the experiment file writes them; the defaults are HetDPT's.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    steps: Option<usize>,
    lr: Option<f64>,
    sparsity: Option<f64>,
    init: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Learnable {
    /// SGD steps, one calibration batch each.
    steps: usize,
    lr: f64,
    /// λ of the pressure `λ·Σ g`.
    sparsity: f64,
    /// Every score's starting value.
    init: f64,
}

impl Default for Learnable {
    fn default() -> Self {
        Self {
            steps: 30,
            lr: 1.0,
            sparsity: 0.05,
            init: 0.5,
        }
    }
}

impl Learnable {
    fn from_params(table: &toml::Table) -> Result<Self, PruningError> {
        let p: Params = read_params("learnable", table)?;
        let d = Self::default();
        let out = Self {
            steps: p.steps.unwrap_or(d.steps),
            lr: p.lr.unwrap_or(d.lr),
            sparsity: p.sparsity.unwrap_or(d.sparsity),
            init: p.init.unwrap_or(d.init),
        };
        if out.steps == 0 {
            return Err(PruningError::invalid("learnable steps", 0, "at least 1"));
        }
        for (field, v) in [("lr", out.lr), ("sparsity", out.sparsity)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(PruningError::invalid(
                    format!("learnable {field}"),
                    v,
                    "a finite number above 0",
                ));
            }
        }
        if !out.init.is_finite() {
            return Err(PruningError::invalid(
                "learnable init",
                out.init,
                "a finite number",
            ));
        }
        Ok(out)
    }
}

impl Criterion for Learnable {
    fn name(&self) -> &'static str {
        CRITERION.name
    }

    fn kinds(&self) -> &'static [UnitKind] {
        CRITERION.item.kinds
    }

    fn scores(
        &self,
        model: &Classifier,
        kind: UnitKind,
        data: &Calibration,
        _: &ScoreContext,
    ) -> Scored {
        let (layers, width) = grid(model, kind)?;
        let device = data.check(model)?;
        // Only the scores are tracked: the weights enter the graph as constants.
        let tracked = device.autodiff();
        let mut theta = vec![self.init; layers * width];
        for (input, labels) in data.batches.iter().cycle().take(self.steps) {
            let values: Vec<f32> = theta.iter().map(|&t| t as f32).collect();
            let leaf = Tensor::<2>::from_data(TensorData::new(values, [layers, width]), &tracked)
                .require_grad();
            let gates = straight_through(&leaf);
            let pressure = gates.clone().sum().mul_scalar(self.sparsity);
            let logits = model.forward(input.clone(), &kind.gates(gates), Mode::Deterministic);
            let loss = cross_entropy(logits.unsqueeze_dim(0), labels.clone(), 0.0) + pressure;
            let grad = gate_gradient(&leaf, loss, "learnable", kind)?;
            let grad = Scores::from_tensor(grad).0.concat();
            for (t, g) in theta.iter_mut().zip(grad) {
                *t -= self.lr * g;
            }
        }
        Ok(Scores(theta.chunks(width).map(<[f64]>::to_vec).collect()))
    }
}
