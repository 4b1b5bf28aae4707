//! Presets of the Vision Transformers trained from scratch: named constructors of [`ViTConfig`]
//! and [`PRESETS`], the registry experiment files name them by. Pretrained checkpoints' shapes
//! come with their importers.

use registry::{Entry, Registry};

use crate::error::BackboneError;
use crate::vit::ViTConfig;

/// Every preset (`[backbone] preset = "<name>"`), with its constructor.
pub const PRESETS: Registry<fn() -> ViTConfig> = Registry::new(
    "ViT preset",
    &[
        Entry {
            name: "vit_tiny_28",
            about: "28x28x1, patch 7, width 64, 4 blocks, 4 heads (the quick start's model)",
            item: ViTConfig::vit_tiny_28,
        },
        Entry {
            name: "vit_tiny_32",
            about: "32x32x3, patch 4, width 192, 6 blocks, 3 heads",
            item: ViTConfig::vit_tiny_32,
        },
        Entry {
            name: "vit_s_16",
            about: "ViT-S/16 at 224x224x3: width 384, 12 blocks, 6 heads, 1000 classes",
            item: ViTConfig::vit_s_16,
        },
    ],
);

impl ViTConfig {
    /// 28x28x1 (Fashion-MNIST): patch 7 (16 patches), width 64, 4 blocks, 4 heads, MLP 256;
    /// 205k parameters, 7.1 MFLOPs per image: the quick start's model (its recipe and test
    /// accuracy are in `experiments/quickstart.toml`).
    pub fn vit_tiny_28() -> Self {
        Self::new()
    }

    /// 32x32x3 (CIFAR-like): patch 4 (64 patches), width 192, 6 blocks, 3 heads, MLP 768.
    pub fn vit_tiny_32() -> Self {
        Self::new()
            .with_image_size(32)
            .with_channels(3)
            .with_patch_size(4)
            .with_d_model(192)
            .with_n_layers(6)
            .with_n_heads(3)
            .with_d_mlp(768)
    }

    /// ViT-S/16 at 224x224x3: width 384, 12 blocks, 6 heads, MLP 1536, 1000 classes.
    pub fn vit_s_16() -> Self {
        Self::new()
            .with_image_size(224)
            .with_channels(3)
            .with_patch_size(16)
            .with_d_model(384)
            .with_n_layers(12)
            .with_n_heads(6)
            .with_d_mlp(1536)
            .with_num_classes(1000)
    }

    /// The preset called `name` (one of [`PRESETS`]).
    pub fn preset(name: &str) -> Result<Self, BackboneError> {
        Ok((PRESETS.get(name)?.item)())
    }
}
