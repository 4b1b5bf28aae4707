use backbone::{BackboneError, Gates, Mode, Pooling, ViTConfig, mean_pool};
use burn::module::Module;
use burn::tensor::{Int, Tensor};

use crate::{assert_close, randn, test_device, tiny_bert};

#[test]
fn vit_shapes() {
    let device = test_device();
    let config = ViTConfig::new()
        .with_d_model(16)
        .with_n_heads(2)
        .with_d_mlp(32);
    let model = config.init(&device).unwrap();
    let images = randn([3, 1, 28, 28], &device);
    let mode = Mode::Deterministic;
    assert_eq!(model.embed(images.clone(), mode).dims(), [3, 17, 16]);
    assert_eq!(
        model.features(images.clone(), &Gates::none(), mode).dims(),
        [3, 16]
    );
    assert_eq!(model.forward(images, &Gates::none(), mode).dims(), [3, 10]);
    assert_eq!(model.encoder.layer.len(), 4);
}

#[test]
fn vit_features_equal_the_piecewise_run() {
    let device = test_device();
    let model = ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_heads(2)
        .with_d_mlp(16)
        .init(&device)
        .unwrap();
    let images = randn([2, 1, 8, 8], &device);
    let mode = Mode::Deterministic;
    let mut x = model.embed(images.clone(), mode);
    for block in &model.encoder.layer {
        x = block.forward(x, Default::default(), None, mode);
    }
    let expected = model.norm.forward(x).narrow(1, 0, 1).squeeze_dim::<2>(1);
    assert_close(
        &model.features(images, &Gates::none(), mode),
        &expected,
        1e-5,
    );
}

#[test]
fn vit_tiny_28_parameter_count_matches_the_formula() {
    let config = ViTConfig::vit_tiny_28();
    let model = config.init(&test_device()).unwrap();
    let (d, f, l, p, c) = (64, 256, 4, 7, 10);
    let block = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 2 * 2 * d;
    let expected = (p * p * d + d) + d + 17 * d + l * block + 2 * d + (d * c + c);
    assert_eq!(model.num_params(), expected);
}

#[test]
fn bert_shapes_and_classifier() {
    let device = test_device();
    let config = tiny_bert();
    let model = config.init(&device).unwrap();
    let ids = Tensor::<2, Int>::from_ints([[5, 6, 7, 8], [9, 10, 0, 0]], &device);
    let mask = Tensor::<2, Int>::from_ints([[1, 1, 1, 1], [1, 1, 0, 0]], &device);
    let hidden = model.forward(
        ids.clone(),
        mask.clone(),
        &Gates::none(),
        Mode::Deterministic,
    );
    assert_eq!(hidden.dims(), [2, 4, 8]);
    let classifier = config.init_classifier(2, &device).unwrap();
    assert_eq!(
        classifier
            .forward(ids, mask, &Gates::none(), Mode::Deterministic)
            .dims(),
        [2, 2]
    );
}

#[test]
fn padding_does_not_change_real_tokens_or_the_pooled_feature() {
    let device = test_device();
    let model = tiny_bert().init(&device).unwrap();
    let mode = Mode::Deterministic;
    let padded_ids = Tensor::<2, Int>::from_ints([[3, 4, 5, 0, 0], [7, 8, 9, 10, 11]], &device);
    let padded_mask = Tensor::<2, Int>::from_ints([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], &device);
    let alone_ids = Tensor::<2, Int>::from_ints([[3, 4, 5]], &device);
    let alone_mask = Tensor::<2, Int>::ones([1, 3], &device);

    let padded = model.forward(padded_ids, padded_mask.clone(), &Gates::none(), mode);
    let alone = model.forward(alone_ids, alone_mask.clone(), &Gates::none(), mode);
    let real = padded.clone().narrow(0, 0, 1).narrow(1, 0, 3);
    assert_close(&real, &alone, 1e-5);

    let pooled = mean_pool(padded, padded_mask).narrow(0, 0, 1);
    let expected = alone.clone().mean_dim(1).squeeze_dim::<2>(1);
    assert_close(&pooled, &expected, 1e-5);
    assert_close(&mean_pool(alone, alone_mask), &expected, 1e-5);
}

#[test]
fn cls_pooling_is_the_first_token_through_the_pooler_and_tanh() {
    let device = test_device();
    let config = tiny_bert();
    let model = (config.init_pooled_classifier(2, Pooling::Cls, &device)).unwrap();
    assert_eq!(model.pooling(), Pooling::Cls);
    assert_eq!(
        config.init_classifier(2, &device).unwrap().pooling(),
        Pooling::Mean
    );
    let (gates, mode) = (&Gates::none(), Mode::Deterministic);
    let ids = Tensor::<2, Int>::from_ints([[3, 4, 5, 0], [7, 8, 9, 10]], &device);
    let mask = Tensor::<2, Int>::from_ints([[1, 1, 1, 0], [1, 1, 1, 1]], &device);
    let hidden = model.bert.forward(ids.clone(), mask.clone(), gates, mode);
    let pooled = model.features(ids, mask, gates, mode);
    // By hand: tanh(h[b, 0] · W + bias), W stored [in, out].
    let pooler = model.pooler.as_ref().unwrap();
    let [d_in, d_out] = pooler.weight.dims();
    let w = pooler.weight.val().into_data().try_to_vec::<f32>().unwrap();
    let bias = pooler
        .bias
        .as_ref()
        .unwrap()
        .val()
        .into_data()
        .try_to_vec::<f32>()
        .unwrap();
    let h = hidden.into_data().try_to_vec::<f32>().unwrap();
    let tokens = h.len() / (2 * d_in);
    let expected: Vec<f32> = (0..2)
        .flat_map(|b| (0..d_out).map(move |o| (b, o)))
        .map(|(b, o)| {
            let first = &h[b * tokens * d_in..][..d_in];
            let dot: f32 = (0..d_in).map(|i| first[i] * w[i * d_out + o]).sum();
            (dot + bias[o]).tanh()
        })
        .collect();
    let expected = Tensor::<1>::from_floats(expected.as_slice(), &device).reshape([2, d_out]);
    assert_close(&pooled, &expected, 1e-5);
}

#[test]
fn presets_parse_and_match_their_specs() {
    for name in backbone::PRESETS.names() {
        assert!(ViTConfig::preset(name).is_ok(), "{name}");
    }
    let s16 = ViTConfig::preset("vit_s_16").unwrap();
    assert_eq!(
        (
            s16.image_size,
            s16.patch_size,
            s16.d_model,
            s16.n_layers,
            s16.n_heads,
            s16.d_mlp
        ),
        (224, 16, 384, 12, 6, 1536)
    );
    assert_eq!(s16.num_tokens(), 197);
    let t28 = ViTConfig::preset("vit_tiny_28").unwrap();
    assert_eq!(
        (
            t28.image_size,
            t28.channels,
            t28.patch_size,
            t28.num_tokens()
        ),
        (28, 1, 7, 17)
    );
    let t32 = ViTConfig::preset("vit_tiny_32").unwrap();
    assert_eq!((t32.image_size, t32.channels, t32.patch_size), (32, 3, 4));
}

#[test]
fn unknown_preset_lists_the_valid_names() {
    let err = ViTConfig::preset("vit_huge").unwrap_err();
    assert!(matches!(&err, BackboneError::Unknown(u) if u.name == "vit_huge"));
    let text = err.to_string();
    assert!(text.contains("vit_huge"), "{text}");
    for name in backbone::PRESETS.names() {
        assert!(text.contains(name), "{text}");
    }
}

#[test]
fn invalid_vit_config_names_the_field() {
    let err = ViTConfig::new()
        .with_patch_size(5)
        .init(&test_device())
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("ViTConfig.image_size") && text.contains("patch_size = 5"),
        "{text}"
    );
    let err = ViTConfig::new()
        .with_n_heads(3)
        .init(&test_device())
        .unwrap_err();
    assert!(err.to_string().contains("ViTConfig.n_heads"), "{err}");
}
