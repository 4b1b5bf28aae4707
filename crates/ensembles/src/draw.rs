//! Drawing lazily initialised weights now.
//!
//! Burn's layer initialisers are lazy: a Linear or Conv2d weight is drawn from the device RNG
//! at its first use, not when the layer is built. The ensembles draw every weight inside `init`
//! instead, right after seeding the device, so the weights depend on the seed alone.

use burn::module::{Module, ModuleVisitor, Param};
use burn::tensor::Tensor;

struct Touch;

impl ModuleVisitor for Touch {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        // Reading the value runs the pending initialiser (once, shared by all clones).
        let _ = param.val();
    }
}

/// Draws every pending parameter of `module`, in field order.
pub(crate) fn now<M: Module>(module: M) -> M {
    module.visit(&mut Touch);
    module
}
