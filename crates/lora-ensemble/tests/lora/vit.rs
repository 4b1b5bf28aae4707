//! A tiny Vision Transformer backbone.

use backbone::ViTConfig;
use data::{ImageDataset, Normalization, Pixels};
use train::{ImageData, fit};

use super::*;

fn vit_config() -> ViTConfig {
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_num_classes(3)
        .with_dropout(0.1)
}

pub(super) fn backbone(device: &Device) -> Classifier {
    device.seed(3);
    vit_config().init(device).unwrap().into()
}

fn images(batch: usize, device: &Device) -> Input {
    tensor([batch, 1, 8, 8], 7, device).into()
}

#[test]
fn vectorised_forward_equals_looping_over_merged_members() {
    let _guard = serial();
    let device = Device::flex();
    let model = perturb(lora_config().init(backbone(&device), 5).unwrap(), &device);
    assert_vectorised_equals_merged(&model, &images(4, &device), 3);
}

#[test]
fn members_start_with_the_base_features() {
    let _guard = serial();
    let device = Device::flex();
    assert_members_start_at_base(backbone(&device), &images(5, &device), 16);
}

/// Two classes of 8x8 images: a bright top half (class 0) or a bright bottom half (class 1).
fn halves(n: usize) -> ImageDataset {
    let noise = values(n * 64, 11);
    let pixels = (0..n * 64)
        .map(|i| {
            let (image, row) = (i / 64, i % 64 / 8);
            let bright = (row < 4) == (image % 2 == 0);
            (if bright { 0.7 } else { 0.2 }) + 0.2 * noise[i]
        })
        .collect();
    ImageDataset {
        name: "halves".into(),
        pixels: Pixels::F32(pixels),
        labels: (0..n).map(|i| (i % 2) as u32).collect(),
        dims: [1, 8, 8],
        num_classes: 2,
    }
}

#[test]
fn training_moves_adapters_and_heads_but_not_the_backbone() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let model = lora_config().init(backbone(&device), 2).unwrap();
    let set = halves(32);
    let norm = Normalization::new(vec![0.0], vec![1.0]).unwrap();
    let data = ImageData {
        set: &set,
        norm: &norm,
    };
    assert_training_moves_only_adapters(model, |model| {
        fit(model, data, &recipe(16), &fit_options(&device))
            .unwrap()
            .valid()
    });
}

#[test]
fn parameter_count_and_flops_match_their_closed_forms() {
    let _guard = serial();
    let device = Device::flex();
    let backbone = backbone(&device);
    let backbone_params = backbone.num_params();
    let model = lora_config().init(backbone, 0).unwrap();
    let c = vit_config();
    let (l, d, classes) = (c.n_layers, c.d_model, c.num_classes);
    assert_eq!(model.members(), N);
    assert_eq!(
        EnsembleModel::num_params(&model),
        4 * l * N * RANK * (d + d) + N * (d * classes + classes) + backbone_params
    );
    // Evaluation merges the adapters: N backbone passes.
    let expected = N as u64 * c.flops_per_sample();
    assert_eq!(model.flops_per_sample(), expected);
    // The text sequence length does not enter a ViT's count.
    let other = LoraConfig {
        text_tokens: 7,
        ..lora_config()
    }
    .init(model.backbone, 0);
    assert_eq!(other.unwrap().flops_per_sample(), expected);
}

#[test]
fn adapters_round_trip_and_refuse_another_shape() {
    let _guard = serial();
    let device = Device::flex();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("adapters.bpk");
    let model = perturb(lora_config().init(backbone(&device), 9).unwrap(), &device);
    assert_adapters_round_trip(&model, &images(3, &device), &path);
    let deeper = vit_config().with_n_layers(3).init(&device).unwrap().into();
    assert!(LoraEnsemble::load_adapters(deeper, &lora_config(), &path).is_err());
}

#[test]
fn invalid_configs_name_their_field() {
    let _guard = serial();
    let device = Device::flex();
    let backbone = backbone(&device);
    let cases = [
        (LoraConfig::new(0), "LoraConfig.members"),
        (
            LoraConfig {
                rank: 0,
                ..LoraConfig::new(2)
            },
            "LoraConfig.rank",
        ),
        (
            LoraConfig {
                scale: f64::NAN,
                ..LoraConfig::new(2)
            },
            "LoraConfig.scale",
        ),
        (
            LoraConfig {
                init_gain: 0.0,
                ..LoraConfig::new(2)
            },
            "LoraConfig.init_gain",
        ),
        (
            LoraConfig {
                text_tokens: 0,
                ..LoraConfig::new(2)
            },
            "LoraConfig.text_tokens",
        ),
    ];
    for (config, field) in cases {
        let e = config.init(backbone.clone(), 0).unwrap_err();
        assert!(
            matches!(&e, LoraError::InvalidConfig { field: f, .. } if *f == field),
            "{e}"
        );
        assert!(e.to_string().contains(field), "{e}");
    }
}
