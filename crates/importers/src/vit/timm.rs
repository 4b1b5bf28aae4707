//! timm's `vit_*` and `deit_*` state dicts saved as safetensors (`patch_embed.proj`, `cls_token`,
//! `dist_token`, `pos_embed`, `blocks.N.{norm1, attn.qkv, attn.proj, norm2, mlp.fc1, mlp.fc2}`,
//! `norm`, `head`, `head_dist`), with the `config.json` timm's `save_for_hf` writes beside them.
//!
//! A state dict has no configuration, so the architecture is read from the tensors' shapes:
//! width, channels and patch from the patch projection, the image side from the position table
//! (a square grid after the class and distillation tokens), depth from the blocks present, MLP
//! width, qkv bias and classes from their tensors. What shapes cannot tell is read from
//! `config.json`'s `model_args` (the arguments timm rebuilds the model with): the heads
//! `num_heads`, required. Every other `model_args` field must agree with the tensors or be one
//! this import computes (class-token pooling, no LayerScale, no register tokens, ...): any other
//! is refused by name. The LayerNorm epsilon is timm's ViT default, 1e-6: timm records no
//! other in `config.json`.

use std::path::Path;

use backbone::{Block, ViTConfig};
use burn::tensor::Device;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::checkpoint::{OuterNames, VitCheckpoint, init, load_outer};
use crate::config_json::{check_supported, read_json};
use crate::error::ImportError;
use crate::mapping::{Loader, Source, set, transposed};
use crate::safetensors::SafeTensors;

/// timm's ViT LayerNorm epsilon (`partial(nn.LayerNorm, eps=1e-6)`).
const LAYER_NORM_EPS: f64 = 1e-6;

const NAMES: OuterNames = OuterNames {
    patch: "patch_embed.proj",
    cls_token: "cls_token",
    distillation_token: "dist_token",
    positions: "pos_embed",
    norm: "norm",
    head: "head",
    distillation_head: "head_dist",
};

/// The fields of timm's `config.json` the import reads.
#[derive(Deserialize)]
struct TimmConfig {
    global_pool: Option<String>,
    #[serde(default)]
    model_args: Map<String, Value>,
}

/// Imports a timm state dict (`config` and `weights` located by `super::format::load_vit`).
pub(super) fn load(
    config: &Path,
    weights: &Path,
    device: &Device,
) -> Result<VitCheckpoint, ImportError> {
    let timm: TimmConfig = read_json(config)?;
    check_supported(
        config,
        "global_pool",
        timm.global_pool.as_deref(),
        &["token"],
    )?;
    let file = SafeTensors::read(weights)?;
    let shapes = Shapes::read(&file)?;
    let n_heads = (timm.model_args.get("num_heads").and_then(Value::as_u64)).ok_or_else(|| {
        ImportError::file(
            config,
            "model_args.num_heads: missing or not a whole number; expected the heads per block, \
             which the tensors' shapes cannot tell",
        )
    })?;
    shapes.check_model_args(config, &timm.model_args)?;
    let config = shapes.vit(n_heads as usize);
    let mut model = init(weights, &config, device)?;
    let mut load = Loader::new(&file, "");
    load_outer(&mut load, &NAMES, &mut model, shapes.classes.is_some(), "");
    for (i, block) in model.encoder.layer.iter_mut().enumerate() {
        load_block(&mut load, &format!("blocks.{i}."), block, shapes.qkv_bias);
    }
    load.finish(&[])?;
    Ok(VitCheckpoint {
        config,
        model,
        classifier: shapes.classes.is_some(),
    })
}

/// One block, its fused `attn.qkv` (`[3D, D]`, query rows first) split into the three
/// projections.
fn load_block(load: &mut Loader, prefix: &str, block: &mut Block, qkv_bias: bool) {
    let name = |suffix: &str| format!("{prefix}{suffix}");
    let attention = &mut block.attention;
    let d = attention.query.weight.lazy_shape()[0];
    let weights = load.take(&name("attn.qkv.weight"), &[3 * d, d]);
    let biases = match qkv_bias {
        true => load.take(&name("attn.qkv.bias"), &[3 * d]),
        false => Some(vec![0.0; 3 * d]),
    };
    let projections = [
        &mut attention.query,
        &mut attention.key,
        &mut attention.value,
    ];
    for (j, linear) in projections.into_iter().enumerate() {
        if let Some(w) = &weights {
            set(
                &mut linear.weight,
                transposed(&w[j * d * d..(j + 1) * d * d], d, d),
            );
        }
        if let (Some(b), Some(bias)) = (&biases, &mut linear.bias) {
            set(bias, b[j * d..(j + 1) * d].to_vec());
        }
    }
    load.linear(&name("attn.proj"), &mut attention.output);
    load.layer_norm(&name("norm1"), &mut block.norm1);
    load.linear(&name("mlp.fc1"), &mut block.mlp.fc1);
    load.linear(&name("mlp.fc2"), &mut block.mlp.fc2);
    load.layer_norm(&name("norm2"), &mut block.norm2);
}

/// The architecture the tensors' shapes give.
struct Shapes {
    d_model: usize,
    channels: usize,
    patch: usize,
    image_size: usize,
    n_layers: usize,
    d_mlp: usize,
    qkv_bias: bool,
    distilled: bool,
    /// The head's width, when there is a head.
    classes: Option<usize>,
}

impl Shapes {
    fn read(file: &SafeTensors) -> Result<Self, ImportError> {
        let shape = |name: &str| file.shape(name);
        let fail = |name: &str, expected: &str| {
            let found = shape(name).map_or("no such tensor".into(), |s| format!("shape {s:?}"));
            ImportError::file(file.path(), format!("{name}: {found}; expected {expected}"))
        };
        let (d_model, channels, patch) = match shape("patch_embed.proj.weight") {
            Some(&[d, c, p, q]) if p == q => (d, c, p),
            _ => return Err(fail("patch_embed.proj.weight", "[D, C, P, P]")),
        };
        let distilled = shape("dist_token").is_some();
        let readout = 1 + usize::from(distilled);
        let grid = match shape("pos_embed") {
            Some(&[1, t, d]) if d == d_model && t > readout => square_root(t - readout),
            _ => None,
        };
        let Some(grid) = grid else {
            let expected = format!("[1, {readout} + G², {d_model}] (class token first)");
            return Err(fail("pos_embed", &expected));
        };
        let n_layers = (0..)
            .take_while(|i| shape(&format!("blocks.{i}.norm1.weight")).is_some())
            .count();
        let d_mlp = match shape("blocks.0.mlp.fc1.weight") {
            Some(&[f, d]) if d == d_model => f,
            _ => return Err(fail("blocks.0.mlp.fc1.weight", &format!("[F, {d_model}]"))),
        };
        Ok(Self {
            d_model,
            channels,
            patch,
            image_size: grid * patch,
            n_layers,
            d_mlp,
            qkv_bias: shape("blocks.0.attn.qkv.bias").is_some(),
            distilled,
            classes: shape("head.weight").map(|s| s[0]),
        })
    }

    fn vit(&self, n_heads: usize) -> ViTConfig {
        ViTConfig::new()
            .with_image_size(self.image_size)
            .with_patch_size(self.patch)
            .with_channels(self.channels)
            .with_d_model(self.d_model)
            .with_n_layers(self.n_layers)
            .with_n_heads(n_heads)
            .with_d_mlp(self.d_mlp)
            .with_num_classes(self.classes.unwrap_or(1))
            .with_layer_norm_eps(LAYER_NORM_EPS)
            .with_distilled(self.distilled)
    }

    /// Refuses a `model_args` field that disagrees with the tensors or asks for something this
    /// import does not compute, naming it and what was expected.
    fn check_model_args(&self, path: &Path, args: &Map<String, Value>) -> Result<(), ImportError> {
        let side = Value::from(self.image_size);
        for (key, value) in args {
            let expected: Option<Value> = match key.as_str() {
                "embed_dim" => Some(self.d_model.into()),
                "depth" => Some(self.n_layers.into()),
                "patch_size" => Some(self.patch.into()),
                "in_chans" => Some(self.channels.into()),
                "num_classes" => Some(self.classes.unwrap_or(0).into()),
                "img_size" if value.is_array() => Some(Value::from(vec![side.clone(); 2])),
                "img_size" => Some(side.clone()),
                "mlp_ratio" => Some((self.d_mlp as f64 / self.d_model as f64).into()),
                "qkv_bias" => Some(self.qkv_bias.into()),
                "class_token" => Some(true.into()),
                "global_pool" => Some("token".into()),
                "no_embed_class" | "pre_norm" | "qk_norm" | "dynamic_img_size" => {
                    Some(false.into())
                }
                "fc_norm" | "init_values" if value.is_null() || *value == false => None,
                "fc_norm" | "init_values" => Some(Value::Null),
                "reg_tokens" => Some(0.into()),
                // Read above; and what only training uses (dropout rates, initialisation).
                "num_heads" | "drop_rate" | "pos_drop_rate" | "patch_drop_rate"
                | "proj_drop_rate" | "attn_drop_rate" | "drop_path_rate" | "weight_init" => None,
                _ => {
                    return Err(ImportError::file(
                        path,
                        format!("model_args.{key} = {value}: not supported by this import"),
                    ));
                }
            };
            if let Some(expected) = expected.filter(|e| !same(e, value)) {
                return Err(ImportError::file(
                    path,
                    format!(
                        "model_args.{key} = {value}: expected {expected} (what the tensors \
                         have, or the only value this import computes)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// JSON values equal, numbers compared as f64 (`2` and `2.0` alike).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// `g` with `g² = n`, if there is one.
fn square_root(n: usize) -> Option<usize> {
    let g = (n as f64).sqrt().round() as usize;
    (g * g == n).then_some(g)
}
