//! Grouped layers equal G separate layers on channel slices (a block-diagonal weight).

use backbone::GroupedLinear;
use burn::nn::{LayerNormConfig, Linear};
use burn::tensor::{Device, Distribution, Tensor, TensorData};
use ensembles::PackedLayerNorm;

use crate::{assert_close, param, row, serial, values};

#[test]
fn grouped_linear_is_separate_layers_and_a_block_diagonal_layer() {
    let _guard = serial();
    let device = Device::flex();
    device.seed(1);
    let (groups, d_in, d_out) = (3, 2, 4);
    let layer = GroupedLinear::init(groups, d_in, d_out, &device);
    let x = Tensor::<3>::random(
        [2, 5, groups * d_in],
        Distribution::Normal(0.0, 1.0),
        &device,
    );
    let y = layer.forward_packed(x.clone());

    let separate: Vec<Tensor<3>> = (0..groups)
        .map(|g| {
            let dense = Linear {
                weight: param(layer.weight.val().narrow(0, g, 1).squeeze_dim(0)),
                bias: Some(param(row(&layer.bias.val().squeeze_dim(1), g))),
            };
            dense.forward(x.clone().narrow(2, g * d_in, d_in))
        })
        .collect();
    assert_close(&y, &Tensor::cat(separate, 2), 1e-6);

    // The same map as one dense layer whose weight is zero off the diagonal blocks.
    let blocks = values(&layer.weight.val());
    let (rows, cols) = (groups * d_in, groups * d_out);
    let mut dense = vec![0.0f32; rows * cols];
    for g in 0..groups {
        for i in 0..d_in {
            for o in 0..d_out {
                dense[(g * d_in + i) * cols + g * d_out + o] = blocks[(g * d_in + i) * d_out + o];
            }
        }
    }
    let block_diagonal = Linear {
        weight: param(Tensor::from_data(
            TensorData::new(dense, [rows, cols]),
            &device,
        )),
        bias: Some(param(layer.bias.val().reshape([cols]))),
    };
    assert_close(&y, &block_diagonal.forward(x), 1e-5);
}

#[test]
fn grouped_layer_norm_is_separate_layer_norms() {
    let _guard = serial();
    let device = Device::flex();
    device.seed(2);
    let (groups, width, eps) = (3, 4, 1e-5);
    let mut norm = PackedLayerNorm::init(groups, width, eps, &device);
    let normal = Distribution::Normal(0.0, 1.0);
    norm.gamma = param(Tensor::random([groups, width], normal, &device));
    norm.beta = param(Tensor::random([groups, width], normal, &device));
    // Groups with very different scales: a shared normalisation would mix them.
    let x = Tensor::<3>::random([2, 3, groups * width], normal, &device)
        * Tensor::<1>::from_floats(
            [
                1.0, 1.0, 1.0, 1.0, 10.0, 10.0, 10.0, 10.0, 0.1, 0.1, 0.1, 0.1,
            ],
            &device,
        )
        .unsqueeze::<3>();
    let separate: Vec<Tensor<3>> = (0..groups)
        .map(|g| {
            let mut single = LayerNormConfig::new(width).with_epsilon(eps).init(&device);
            single.gamma = param(row(&norm.gamma.val(), g));
            single.beta = Some(param(row(&norm.beta.val(), g)));
            single.forward(x.clone().narrow(2, g * width, width))
        })
        .collect();
    assert_close(&norm.forward(x), &Tensor::cat(separate, 2), 1e-5);
}
