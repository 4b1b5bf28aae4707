use backbone::{
    BlockShape, Classifier, Gates, Input, Mode, ViTConfig, bert_flops, flops_per_sample,
};
use burn::module::Module;
use burn::tensor::{Int, Tensor};

use crate::{assert_close, randn, test_device, tiny_bert};

#[test]
fn classifier_forward_is_the_wrapped_models_forward() {
    let device = test_device();
    let vit = ViTConfig::vit_tiny_28().init(&device).unwrap();
    let images = randn([2, 1, 28, 28], &device);
    let direct = vit.forward(images.clone(), &Gates::none(), Mode::Deterministic);
    let wrapped =
        Classifier::from(vit).forward(Input::Images(images), &Gates::none(), Mode::Deterministic);
    assert_close(&wrapped, &direct, 1e-6);

    let bert = tiny_bert().init_classifier(3, &device).unwrap();
    let ids = Tensor::<2, Int>::from_ints([[5, 6, 7, 8], [9, 10, 0, 0]], &device);
    let mask = Tensor::<2, Int>::from_ints([[1, 1, 1, 1], [1, 1, 0, 0]], &device);
    let direct = bert.forward(
        ids.clone(),
        mask.clone(),
        &Gates::none(),
        Mode::Deterministic,
    );
    let wrapped = Classifier::from(bert).forward(
        Input::Tokens { ids, mask },
        &Gates::none(),
        Mode::Deterministic,
    );
    assert_close(&wrapped, &direct, 1e-6);
}

#[test]
fn flops_match_the_config_formulas() {
    let device = test_device();
    let config = ViTConfig::vit_tiny_28();
    let vit = Classifier::from(config.init(&device).unwrap());
    assert_eq!(vit.flops(999), flops_per_sample(&config));
    let bert = tiny_bert();
    let model = Classifier::from(bert.init_classifier(2, &device).unwrap());
    let full = vec![BlockShape::full(2); 2];
    assert_eq!(model.flops(12), bert_flops(&bert, 12, 2, &full));
}

#[test]
fn freezing_keeps_only_the_head_trainable() {
    let device = test_device().autodiff();
    let model = Classifier::from(tiny_bert().init_classifier(2, &device).unwrap());
    let head_params = model.head().num_params();
    let frozen = model.freeze_all_but_head();
    let ids = Tensor::<2, Int>::from_ints([[5, 6, 7]], &device);
    let mask = Tensor::<2, Int>::ones([1, 3], &device);
    let loss = frozen
        .forward(
            Input::Tokens { ids, mask },
            &Gates::none(),
            Mode::Deterministic,
        )
        .sum();
    let grads = burn::optim::GradientsParams::from_grads(loss.backward(), &frozen);
    assert_eq!(
        grads.len(),
        2,
        "only the head's weight and bias get gradients"
    );
    assert!(head_params > 0);
}

#[test]
#[should_panic(expected = "takes token sequences, not images")]
fn images_into_bert_is_refused() {
    let device = test_device();
    let model = Classifier::from(tiny_bert().init_classifier(2, &device).unwrap());
    model.forward(
        Input::Images(randn([1, 1, 4, 4], &device)),
        &Gates::none(),
        Mode::Deterministic,
    );
}
