//! `taylor`: first-order Taylor importance on unit gates (Molchanov et al. 2019), for every
//! unit kind: the gates that switch the kind off (`UnitKind::gates`) are held at 1 and the
//! squared gradient of the loss with respect to each is summed over the calibration batches.

use backbone::{Classifier, Mode};
use burn::tensor::Tensor;
use train::cross_entropy;

use super::shared::{gate_gradient, grid};
use crate::calibration::Calibration;
use crate::criterion::{CriterionEntry, Parameterless, ScoreContext, Scored, no_params};
use crate::scores::Scores;
use crate::units::UnitKind;

pub(crate) const CRITERION: CriterionEntry = no_params::<Taylor>();

struct Taylor;

impl Parameterless for Taylor {
    const NAME: &'static str = "taylor";
    const ABOUT: &'static str =
        "sum over calibration batches of (dLoss/dg)^2 for a gate g = 1 on each unit";
    const KINDS: &'static [UnitKind] = &UnitKind::ALL;

    fn scores(model: &Classifier, kind: UnitKind, data: &Calibration, _: &ScoreContext) -> Scored {
        let (layers, width) = grid(model, kind)?;
        let device = data.check(model)?;
        // Only the gates are tracked: the plain-device weights and inputs enter the graph as
        // constants, so the backward pass computes nothing but the gate gradients.
        let tracked = device.clone().autodiff();
        let mut total = Tensor::<2>::zeros([layers, width], &device);
        for (input, labels) in &data.batches {
            let gates = Tensor::<2>::ones([layers, width], &tracked).require_grad();
            let logits = model.forward(
                input.clone(),
                &kind.gates(gates.clone()),
                Mode::Deterministic,
            );
            let loss = cross_entropy(logits.unsqueeze_dim(0), labels.clone(), 0.0);
            let grad = gate_gradient(&gates, loss, "taylor", kind)?;
            total = total + grad.powi_scalar(2);
        }
        Ok(Scores::from_tensor(total))
    }
}
