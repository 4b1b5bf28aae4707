//! Grouped layers: G independent maps on contiguous channel slices (a block-diagonal weight),
//! the building blocks of Packed-Ensembles.

use burn::module::{Module, Param};
use burn::tensor::module::layer_norm;
use burn::tensor::{Device, Distribution, Tensor};

/// G linear maps side by side: group g maps input channels `g·i..(g+1)·i` to output channels
/// `g·o..(g+1)·o`, i.e. one Linear whose `[G·i, G·o]` weight is block-diagonal.
#[derive(Module, Debug)]
pub struct GroupedLinear {
    /// `[G, i, o]`, group g's weight in Burn's `[in, out]` layout.
    pub weight: Param<Tensor<3>>,
    /// `[G, o]`.
    pub bias: Param<Tensor<2>>,
}

impl GroupedLinear {
    /// `groups` maps of `d_in` -> `d_out` channels each, initialised as Burn's Linear is for one
    /// group: weight and bias uniform in ±1/√d_in (device RNG).
    pub fn init(groups: usize, d_in: usize, d_out: usize, device: &Device) -> Self {
        let bound = 1.0 / (d_in.max(1) as f64).sqrt();
        let uniform = Distribution::Uniform(-bound, bound);
        Self {
            weight: Param::from_tensor(Tensor::random([groups, d_in, d_out], uniform, device)),
            bias: Param::from_tensor(Tensor::random([groups, d_out], uniform, device)),
        }
    }

    /// `[.., G·i]` -> `[.., G·o]`.
    pub fn forward<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let [groups, d_in, d_out] = self.weight.dims();
        let mut dims = x.dims();
        let rows = dims[..D - 1].iter().product::<usize>();
        // One batched matmul over the groups: [G, rows, i] x [G, i, o].
        let y = x
            .reshape([rows, groups, d_in])
            .swap_dims(0, 1)
            .matmul(self.weight.val())
            + self.bias.val().unsqueeze_dim::<3>(1);
        dims[D - 1] = groups * d_out;
        y.swap_dims(0, 1).reshape(dims)
    }
}

/// G LayerNorms side by side: each group of `w` channels is normalised on its own and has its
/// own scale and shift.
#[derive(Module, Debug)]
pub struct GroupedLayerNorm {
    /// Scale `[G, w]`.
    pub gamma: Param<Tensor<2>>,
    /// Shift `[G, w]`.
    pub beta: Param<Tensor<2>>,
    pub epsilon: f64,
}

impl GroupedLayerNorm {
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
        let unit = Tensor::ones([width], &x.device());
        let normalised = layer_norm(x, unit, None, self.epsilon);
        (normalised * self.gamma.val().unsqueeze::<3>() + self.beta.val().unsqueeze::<3>())
            .reshape(dims)
    }
}
