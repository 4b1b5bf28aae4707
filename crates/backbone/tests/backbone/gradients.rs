use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::tensor::{Device, Tensor};

use crate::{randn, values};

fn tiny_vit(device: &Device) -> VisionTransformer {
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_num_classes(3)
        .init(device)
        .unwrap()
}

/// A scalar loss of the logits that depends on the gates non-linearly.
fn loss(model: &VisionTransformer, images: &Tensor<4>, gates: &Gates) -> Tensor<1> {
    let logits = model.forward(images.clone(), gates, Mode::Deterministic);
    burn::tensor::activation::log_softmax(logits, 1)
        .narrow(1, 0, 1)
        .sum()
        .neg()
}

#[test]
fn head_gate_gradient_matches_finite_difference() {
    let device = Device::flex().autodiff();
    let model = tiny_vit(&device);
    let images = randn([2, 1, 8, 8], &device);
    let heads = Tensor::<2>::from_floats([[1.0, 0.8], [0.6, 1.0]], &device);
    let gates = |heads: Tensor<2>| Gates {
        heads: Some(heads),
        attn: Some(Tensor::ones([2], &device).require_grad()),
        act: Some(Tensor::ones([2], &device).require_grad()),
        mlp: Some(Tensor::ones([2], &device).require_grad()),
        neurons: Some(Tensor::ones([2, 16], &device).require_grad()),
    };

    let tracked = heads.clone().require_grad();
    let g = gates(tracked.clone());
    let grads = loss(&model, &images, &g).backward();
    let grad = values(&tracked.grad(&grads).expect("head gate gradient"));
    assert!(grad.iter().all(|v| v.is_finite()) && grad.iter().any(|v| v.abs() > 1e-6));
    for gate in [&g.attn, &g.act, &g.mlp] {
        let grad = values(
            &gate
                .as_ref()
                .unwrap()
                .grad(&grads)
                .expect("layer gate gradient"),
        );
        assert!(grad.iter().any(|v| v.abs() > 1e-6), "{grad:?}");
    }
    let neurons = g.neurons.as_ref().unwrap().grad(&grads);
    let neurons = values(&neurons.expect("neuron gate gradient"));
    assert!(
        neurons.iter().filter(|v| v.abs() > 1e-6).count() > 16,
        "{neurons:?}"
    );

    // Central difference on entry (1, 0), computed without the tape.
    let eps = 1e-2;
    let bump = Tensor::<2>::from_floats([[0.0, 0.0], [eps, 0.0]], &device);
    let at = |h: Tensor<2>| values(&loss(&model, &images, &gates(h)))[0];
    let numeric = (at(heads.clone() + bump.clone()) - at(heads - bump)) / (2.0 * eps);
    let analytic = grad[2];
    assert!(
        (numeric - analytic).abs() <= 1e-2 * (1e-2 + analytic.abs()),
        "analytic {analytic} vs finite difference {numeric}"
    );
}
