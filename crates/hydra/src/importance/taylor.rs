//! `taylor`: first-order Taylor importance on head gates (Molchanov et al. 2019).

use backbone::{Classifier, Gates, Mode};
use burn::tensor::Tensor;
use train::cross_entropy;

use super::scores::HeadScores;
use super::shared::grid;
use super::strategy::{Parameterless, ScoreContext, Scored, Strategy, no_params};
use crate::calibration::Calibration;
use crate::error::HydraError;

pub(super) const STRATEGY: Strategy = no_params::<Taylor>();

struct Taylor;

impl Parameterless for Taylor {
    const NAME: &'static str = "taylor";
    const ABOUT: &'static str =
        "sum over calibration batches of (dLoss/dg)^2 for a gate g = 1 on each head";

    fn scores(model: &Classifier, data: &Calibration, _ctx: &ScoreContext) -> Scored {
        let (layers, heads) = grid(model)?;
        let device = data.check(model)?;
        // Only the gates are tracked: the plain-device weights and inputs enter the graph as
        // constants, so the backward pass computes nothing but the gate gradients.
        let tracked = device.clone().autodiff();
        let mut total = Tensor::<2>::zeros([layers, heads], &device);
        for (input, labels) in &data.batches {
            let gates = Tensor::<2>::ones([layers, heads], &tracked).require_grad();
            let head_gates = Gates {
                heads: Some(gates.clone()),
                ..Gates::none()
            };
            let logits = model.forward(input.clone(), &head_gates, Mode::Deterministic);
            let loss = cross_entropy(logits.unsqueeze_dim(0), labels.clone(), 0.0);
            let grad = gates.grad(&loss.backward()).ok_or_else(|| {
                HydraError::invalid(
                    "taylor",
                    "no gradient reached the head gates",
                    "a model whose forward uses Gates.heads",
                )
            })?;
            total = total + grad.powi_scalar(2);
        }
        Ok(HeadScores::from_tensor(total))
    }
}
