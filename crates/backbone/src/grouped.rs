//! Grouped layers: M independent copies of a layer applied to M streams `[M, R, ·]` at once
//! (fused Hydra members, the members' stems); Packed-Ensembles read the same layer with its
//! groups side by side on the channel axis ([`GroupedLinear::forward_packed`]).

use burn::module::{Module, Param};
use burn::nn::{LayerNorm, Linear};
use burn::tensor::{Device, Distribution, Tensor};

use crate::error::BackboneError;

/// A grouped fully-connected layer: group g maps stream g `[R, in]` to `[R, out]` with its own
/// weight, as one batched matmul `[M, R, in] × [M, in, out]` (block-diagonal over members).
///
/// One group is shared by all streams (an averaged MLP): then all rows go through a single
/// matmul. An input with one stream is broadcast over the groups (the shared patch pixels).
#[derive(Module, Debug)]
pub struct GroupedLinear {
    /// `[G, in, out]`.
    pub weight: Param<Tensor<3>>,
    /// `[G, 1, out]`.
    pub bias: Param<Tensor<3>>,
}

impl GroupedLinear {
    /// `groups` maps of `d_in` -> `d_out` each, initialised as Burn's Linear is for one group:
    /// weight and bias uniform in ±1/√d_in (device RNG, weight first).
    pub fn init(groups: usize, d_in: usize, d_out: usize, device: &Device) -> Self {
        let bound = 1.0 / (d_in.max(1) as f64).sqrt();
        let uniform = Distribution::Uniform(-bound, bound);
        Self {
            weight: Param::from_tensor(Tensor::random([groups, d_in, d_out], uniform, device)),
            bias: Param::from_tensor(Tensor::random([groups, 1, d_out], uniform, device)),
        }
    }

    /// Stacks per-group `[in, out]` weights and `[out]` biases (all of equal shapes).
    pub fn stack(weights: Vec<Tensor<2>>, biases: Vec<Tensor<1>>) -> Self {
        let biases = biases.into_iter().map(|b| b.unsqueeze::<2>()).collect();
        Self {
            weight: Param::from_tensor(Tensor::stack(weights, 0)),
            bias: Param::from_tensor(Tensor::stack(biases, 0)),
        }
    }

    /// The groups of `linears`, a missing bias read as zeros.
    pub fn of(linears: &[&Linear]) -> Self {
        let (weights, biases) = linears.iter().map(|l| weight_and_bias(l)).unzip();
        Self::stack(weights, biases)
    }

    /// `[M, R, in] -> [M, R, out]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [groups, d_in, d_out] = self.weight.dims();
        let [streams, rows, _] = x.dims();
        if groups == 1 && streams > 1 {
            let x = x.reshape([1, streams * rows, d_in]);
            let y = kernels::matmul_add(x, self.weight.val(), self.bias.val());
            return y.reshape([streams, rows, d_out]);
        }
        let x = if streams == 1 {
            x.expand([groups, rows, d_in])
        } else {
            x
        };
        kernels::matmul_add(x, self.weight.val(), self.bias.val())
    }

    /// The groups side by side on the channel axis, `[.., G·in]` -> `[.., G·out]`: group g maps
    /// input channels `g·in..(g+1)·in` to output channels `g·out..(g+1)·out` (one Linear with a
    /// block-diagonal weight), as [`Self::forward`] on the channel slices taken as streams.
    pub fn forward_packed<const D: usize>(&self, x: Tensor<D>) -> Tensor<D> {
        let [groups, d_in, d_out] = self.weight.dims();
        let mut dims = x.dims();
        let rows = dims[..D - 1].iter().product::<usize>();
        let streams = x.reshape([rows, groups, d_in]).swap_dims(0, 1);
        dims[D - 1] = groups * d_out;
        self.forward(streams).swap_dims(0, 1).reshape(dims)
    }
}

/// A Linear's weight `[in, out]` and bias `[out]` (zeros when it has none).
pub fn weight_and_bias(linear: &Linear) -> (Tensor<2>, Tensor<1>) {
    let weight = linear.weight.val();
    let [_, d_out] = weight.dims();
    let bias = match &linear.bias {
        Some(b) => b.val(),
        None => Tensor::zeros([d_out], &weight.device()),
    };
    (weight, bias)
}

/// One LayerNorm per stream: a single normalisation of all streams, then each stream's affine
/// (unless it was folded into the layer that reads the norm, see [`GroupedLayerNorm::fold`]).
#[derive(Module, Debug)]
pub struct GroupedLayerNorm {
    /// The members' normalisation without affine (gamma 1, no beta).
    pub normalise: LayerNorm,
    /// `[M, 1, D]`.
    pub gamma: Param<Tensor<3>>,
    /// `[M, 1, D]`.
    pub beta: Param<Tensor<3>>,
    /// False once the affine lives in the next layer's weights: the norm only normalises.
    pub affine: bool,
}

impl GroupedLayerNorm {
    /// Groups `norms` (one per member). Burn keeps a LayerNorm's epsilon private, so the
    /// normaliser is a member's own norm with its affine removed, and the norms must agree in
    /// everything their `Display` shows (width, epsilon, bias).
    pub fn of(norms: &[&LayerNorm], what: &str) -> Result<Self, BackboneError> {
        let first = norms[0];
        if let Some((m, other)) = norms
            .iter()
            .enumerate()
            .find(|(_, n)| n.to_string() != first.to_string())
        {
            return Err(BackboneError::invalid(
                format!("member {m} {what}"),
                other,
                format!("{first}, as in member 0"),
            ));
        }
        let gamma: Vec<_> = norms
            .iter()
            .map(|n| n.gamma.val().unsqueeze::<2>())
            .collect();
        let beta: Vec<_> = norms
            .iter()
            .map(|n| match &n.beta {
                Some(b) => b.val().unsqueeze::<2>(),
                None => n.gamma.val().zeros_like().unsqueeze::<2>(),
            })
            .collect();
        let mut normalise = first.clone();
        normalise.gamma = Param::from_tensor(first.gamma.val().ones_like());
        normalise.beta = None;
        Ok(Self {
            normalise,
            gamma: Param::from_tensor(Tensor::stack(gamma, 0)),
            beta: Param::from_tensor(Tensor::stack(beta, 0)),
            affine: true,
        })
    }

    /// `[M, R, D] -> [M, R, D]`.
    pub fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let normalised = self.normalise.forward(x);
        match self.affine {
            true => normalised * self.gamma.val() + self.beta.val(),
            false => normalised,
        }
    }

    /// Moves this norm's affine into `next`, the layer that reads only its output:
    /// `(n·γ + β) W + b = n (diag(γ) W) + (β W + b)` per member, two element-wise passes fewer
    /// per call. A shared group of `next` (an averaged MLP) becomes one group per member, since
    /// the members' γ and β differ; its FLOPs stay the same.
    pub fn fold(&mut self, next: GroupedLinear) -> GroupedLinear {
        if !self.affine {
            return next;
        }
        let [members, _, d] = self.gamma.dims();
        let [groups, d_in, d_out] = next.weight.dims();
        let weight = next.weight.val().expand([members, d_in, d_out]);
        let bias = next.bias.val().expand([members, 1, d_out]);
        debug_assert!(d == d_in && (groups == members || groups == 1));
        // γ as a column [M, D, 1] scales W's rows; β [M, 1, D] × W [M, D, out] adds to b.
        let scaled = weight.clone() * self.gamma.val().swap_dims(1, 2);
        let shifted = self.beta.val().matmul(weight) + bias;
        self.affine = false;
        GroupedLinear {
            weight: Param::from_tensor(scaled),
            bias: Param::from_tensor(shifted),
        }
    }
}

/// Whether `key` (tensors read back as data, so compared bit for bit) is the same for every
/// member.
pub(crate) fn all_equal<T, K: PartialEq>(members: &[&T], key: impl Fn(&T) -> K) -> bool {
    let Some((first, rest)) = members.split_first() else {
        return true;
    };
    let first = key(first);
    rest.iter().all(|m| key(m) == first)
}
