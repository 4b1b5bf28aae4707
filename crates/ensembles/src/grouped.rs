//! Packed-Ensembles' grouped LayerNorm: G LayerNorms on contiguous channel slices. (The grouped
//! linear layer is [`backbone::GroupedLinear`], read channel-packed; Hydra's grouped norm keeps a
//! member's own `LayerNorm`, whose epsilon Burn keeps private, and so would add its unit scale to
//! this one's parameters.)

use burn::module::{Module, Param};
use burn::tensor::module::layer_norm;
use burn::tensor::{Device, Tensor};

/// G LayerNorms side by side: each group of `w` channels is normalised on its own and has its
/// own scale and shift.
#[derive(Module, Debug)]
pub struct PackedLayerNorm {
    /// Scale `[G, w]`.
    pub gamma: Param<Tensor<2>>,
    /// Shift `[G, w]`.
    pub beta: Param<Tensor<2>>,
    pub epsilon: f64,
}

impl PackedLayerNorm {
    /// Unit scale, zero shift.
    pub fn init(groups: usize, width: usize, epsilon: f64, device: &Device) -> Self {
        Self {
            gamma: Param::from_tensor(Tensor::ones([groups, width], device)),
            beta: Param::from_tensor(Tensor::zeros([groups, width], device)),
            epsilon,
        }
    }

    /// `[.., G·w]` -> `[.., G·w]`.
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let [groups, width] = self.gamma.dims();
        let dims = x.dims();
        let rows = dims[..D - 1].iter().product::<usize>();
        let x = x.reshape([rows, groups, width]);
        // In the input's dtype: a bf16 evaluation must not meet an f32 constant.
        let unit = Tensor::ones([width], (&x.device(), x.dtype()));
        let normalised = layer_norm(x, unit, None, self.epsilon);
        (normalised * self.gamma.val().unsqueeze::<3>() + self.beta.val().unsqueeze::<3>())
            .reshape(dims)
    }
}
