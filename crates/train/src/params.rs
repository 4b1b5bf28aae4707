//! What a training updates.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Tensor;

struct Trainable(usize);

impl ModuleVisitor for Trainable {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let value = param.val();
        if value.is_require_grad() {
            self.0 += value.shape().num_elements();
        }
    }
}

/// The parameters of `module` that gradients reach, so the optimiser updates: every parameter
/// of a model on an autodiff device but those made `no_grad` (a frozen backbone); none on a
/// plain device.
pub fn trainable_params<M: Module>(module: &M) -> usize {
    let mut count = Trainable(0);
    module.visit(&mut count);
    count.0
}
