//! What a training updates.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Tensor;

struct Trainable(usize);

impl ModuleVisitor for Trainable {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        // Reading a lazily initialised parameter would draw it from the device's random
        // generator out of the order its first forward pass draws it in, changing the weights;
        // one not drawn yet is fresh, so it trains wherever gradients are recorded.
        let (trains, shape) = if param.is_initialized() {
            let value = param.val();
            (value.is_require_grad(), value.shape())
        } else {
            (param.lazy_device().is_autodiff(), param.lazy_shape())
        };
        if trains {
            self.0 += shape.num_elements();
        }
    }
}

/// The parameters of `module` that gradients reach, so the optimiser updates: every parameter
/// of a model on an autodiff device but those made `no_grad` (a frozen backbone); none on a
/// plain device. Draws no lazily initialised weight.
pub fn trainable_params<M: Module>(module: &M) -> usize {
    let mut count = Trainable(0);
    module.visit(&mut count);
    count.0
}
