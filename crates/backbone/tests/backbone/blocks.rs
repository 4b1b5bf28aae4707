use backbone::{BlockConfig, BlockGates, Gates, MlpConfig, Mode};
use burn::tensor::Tensor;

use crate::{assert_close, randn, test_device};

#[test]
fn act_gate_zero_makes_the_mlp_linear() {
    let device = test_device();
    let mlp = MlpConfig::new(4, 8).init(&device).unwrap();
    let x = randn([2, 3, 4], &device);
    let out = mlp.forward(x.clone(), Some(Tensor::zeros([1], &device)));
    // fc2(fc1(x)) with plain matmuls on the stored [in, out] weights.
    let affine = |x: Tensor<3>, l: &burn::nn::Linear| {
        x.matmul(l.weight.val().unsqueeze::<3>()) + l.bias.as_ref().unwrap().val().unsqueeze::<3>()
    };
    let expected = affine(affine(x.clone(), &mlp.fc1), &mlp.fc2);
    assert_close(&out, &expected, 1e-5);

    let with_gelu = mlp.forward(x.clone(), None);
    let gate_one = mlp.forward(x, Some(Tensor::ones([1], &device)));
    assert_close(&gate_one, &with_gelu, 1e-6);
    assert!((with_gelu - expected).abs().max().into_scalar::<f32>() > 1e-3);
}

#[test]
fn act_gate_interpolates_between_gelu_and_identity() {
    let device = test_device();
    let mlp = MlpConfig::new(4, 8).init(&device).unwrap();
    let x = randn([1, 5, 4], &device);
    let z = mlp.fc1.forward(x.clone());
    let mix = burn::tensor::activation::gelu(z.clone()).mul_scalar(0.3) + z.mul_scalar(0.7);
    let expected = mlp.fc2.forward(mix);
    let out = mlp.forward(x, Some(Tensor::from_floats([0.3], &device)));
    assert_close(&out, &expected, 1e-5);
}

#[test]
fn attn_gate_zero_leaves_only_the_mlp_branch() {
    let device = test_device();
    let x = randn([2, 3, 8], &device);
    let gates = || BlockGates {
        attn: Some(Tensor::zeros([1], &device)),
        ..BlockGates::default()
    };
    let pre = BlockConfig::new(8, 2, 16, true).init(&device).unwrap();
    let out = pre.forward(x.clone(), gates(), None, Mode::Deterministic);
    let expected = x.clone() + pre.mlp.forward(pre.norm2.forward(x.clone()), None);
    assert_close(&out, &expected, 1e-5);

    let post = BlockConfig::new(8, 2, 16, false).init(&device).unwrap();
    let out = post.forward(x.clone(), gates(), None, Mode::Deterministic);
    let h = post.norm1.forward(x);
    let expected = post.norm2.forward(h.clone() + post.mlp.forward(h, None));
    assert_close(&out, &expected, 1e-5);
}

#[test]
fn blocks_follow_the_pre_and_post_norm_formulas() {
    let device = test_device();
    let x = randn([2, 3, 8], &device);
    for norm_first in [true, false] {
        let block = BlockConfig::new(8, 2, 16, norm_first)
            .init(&device)
            .unwrap();
        let attn = |h| block.attention.forward(h, None, None, Mode::Deterministic);
        let mlp = |h| block.mlp.forward(h, None);
        let expected = if norm_first {
            let y = x.clone() + attn(block.norm1.forward(x.clone()));
            y.clone() + mlp(block.norm2.forward(y))
        } else {
            let y = block.norm1.forward(x.clone() + attn(x.clone()));
            block.norm2.forward(y.clone() + mlp(y))
        };
        let out = block.forward(x.clone(), BlockGates::default(), None, Mode::Deterministic);
        assert_close(&out, &expected, 1e-5);
    }
}

#[test]
fn encoder_with_unit_gates_equals_no_gates_and_slices_per_block() {
    let device = test_device();
    let encoder = BlockConfig::new(8, 2, 16, true)
        .init_encoder(3, &device)
        .unwrap();
    let x = randn([2, 3, 8], &device);
    let plain = encoder.forward(x.clone(), &Gates::none(), None, Mode::Deterministic);
    let ones = encoder.forward(
        x.clone(),
        &Gates::ones(3, 2, &device),
        None,
        Mode::Deterministic,
    );
    assert_close(&ones, &plain, 1e-6);

    // Removing block 1's attention through the [L] gate equals running the blocks by hand.
    let gates = Gates {
        attn: Some(Tensor::from_floats([1.0, 0.0, 1.0], &device)),
        ..Gates::none()
    };
    let out = encoder.forward(x.clone(), &gates, None, Mode::Deterministic);
    let mut y = encoder.layer[0].forward(x, BlockGates::default(), None, Mode::Deterministic);
    let b1 = &encoder.layer[1];
    y = y.clone() + b1.mlp.forward(b1.norm2.forward(y), None);
    y = encoder.layer[2].forward(y, BlockGates::default(), None, Mode::Deterministic);
    assert_close(&out, &y, 1e-5);
}

#[test]
fn gate_shapes_are_checked() {
    let device = test_device();
    assert!(Gates::ones(3, 2, &device).check(3, 2).is_ok());
    let err = Gates::ones(3, 2, &device)
        .check(3, 4)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Gates.heads") && err.contains("[3, 4]"),
        "{err}"
    );
    let bad_act = Gates {
        act: Some(Tensor::ones([2], &device)),
        ..Gates::none()
    };
    let err = bad_act.check(3, 2).unwrap_err().to_string();
    assert!(err.contains("Gates.act"), "{err}");
}
