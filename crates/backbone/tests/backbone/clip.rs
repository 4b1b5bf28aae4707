//! The pieces CLIP adds to the blocks: quick-GELU, causal attention, the ViT's LayerNorm before
//! its blocks and its patch embedding without bias, which leave a plain ViT's config as it was.

use backbone::{
    Activation, AttentionConfig, ClipConfig, ClipTextConfig, MlpConfig, Mode, ViTConfig,
    padding_mask,
};
use burn::config::Config;
use burn::tensor::activation::sigmoid;
use burn::tensor::{Int, Tensor};

use crate::{assert_close, randn, test_device};

#[test]
fn quick_gelu_is_x_times_sigmoid_of_1_702_x() {
    let device = test_device();
    let mlp = MlpConfig::new(4, 8)
        .with_activation(Activation::QuickGelu)
        .init(&device)
        .unwrap();
    let x = randn([2, 3, 4], &device);
    let z = mlp.fc1.forward(x.clone());
    let expected = mlp
        .fc2
        .forward(z.clone() * sigmoid(z.clone().mul_scalar(1.702)));
    assert_close(&mlp.forward(x.clone(), None), &expected, 1e-5);
    // The gate interpolates between quick-GELU and the identity as it does for GELU.
    let half = z.clone() * sigmoid(z.clone().mul_scalar(1.702)) * 0.5 + z * 0.5;
    let gated = mlp.forward(x, Some(Tensor::from_floats([0.5], &device)));
    assert_close(&gated, &mlp.fc2.forward(half), 1e-5);
}

/// Query i of causal attention sees keys 0..=i only: its output is that of plain attention on
/// the first i + 1 tokens; with padding, that of the prefix without the padded keys.
#[test]
fn causal_attention_sees_only_earlier_keys() {
    let device = test_device();
    let mut attention = AttentionConfig::new(8, 2)
        .with_causal(true)
        .init(&device)
        .unwrap();
    let x = randn([2, 5, 8], &device);
    let causal = attention.forward(x.clone(), None, None, Mode::Deterministic);
    attention.causal = false;
    for i in 0..5 {
        let prefix = x.clone().narrow(1, 0, i + 1);
        let plain = attention.forward(prefix, None, None, Mode::Deterministic);
        let want = plain.narrow(1, i, 1);
        assert_close(&causal.clone().narrow(1, i, 1), &want, 1e-5);
    }
    // Row 1 has padding at key 1: query 2 sees keys 0 and 2.
    let mask = Tensor::<2, Int>::from_ints([[1, 1, 1, 1, 1], [1, 0, 1, 1, 1]], &device);
    attention.causal = true;
    let padded = attention.forward(
        x.clone(),
        None,
        Some(padding_mask(mask)),
        Mode::Deterministic,
    );
    attention.causal = false;
    let row = x.narrow(0, 1, 1);
    let kept = Tensor::cat(vec![row.clone().narrow(1, 0, 1), row.narrow(1, 2, 1)], 1);
    let plain = attention.forward(kept, None, None, Mode::Deterministic);
    let query_2 = padded.narrow(0, 1, 1).narrow(1, 2, 1);
    assert_close(&query_2, &plain.narrow(1, 1, 1), 1e-5);
}

/// CLIP's vision tower is a ViT with a LayerNorm before its blocks, no patch bias and
/// quick-GELU, set by `ClipConfig` and not by `ViTConfig`: a ViT's config, whose JSON is its cache
/// fingerprint, and a ViT built from one are as before.
#[test]
fn clip_vision_pieces_leave_plain_vits_unchanged() {
    let device = test_device();
    let json = br#"{"image_size":16,"channels":3,"patch_size":4,"d_model":16,"n_layers":1,
        "n_heads":2,"d_mlp":32,"num_classes":1,"dropout":0.0,"attention_dropout":0.0,
        "layer_norm_eps":0.00001,"distilled":false}"#;
    let vit = ViTConfig::load_binary(json).unwrap();
    let compact: String = String::from_utf8_lossy(json).split_whitespace().collect();
    assert_eq!(
        vit.to_string().split_whitespace().collect::<String>(),
        compact
    );
    let plain = vit.init(&device).unwrap();
    assert!(plain.pre_norm.is_none() && plain.patch_embed.bias.is_some());
    assert_eq!(plain.encoder.layer[0].mlp.activation, Activation::Gelu);
    let text = ClipTextConfig::new(10, 6, 8, 1, 2, 16, 9);
    let clip = ClipConfig::new(vit, text, 4).init(&device).unwrap();
    let vision = &clip.vision;
    assert!(vision.pre_norm.is_some() && vision.patch_embed.bias.is_none());
    assert_eq!(
        vision.encoder.layer[0].mlp.activation,
        Activation::QuickGelu
    );
    assert!(clip.text.encoder.layer[0].attention.causal);
    // The LayerNorm before the blocks normalises every embedded token.
    let tokens = vision.embed(randn([2, 3, 16, 16], &device), Mode::Deterministic);
    let mean = tokens.mean_dim(2).abs().max().into_scalar::<f32>();
    assert!(mean < 1e-4, "token mean {mean}");
}
