//! The pretrained backbones `[backbone] pretrained = "<name>"` can name, one line each in
//! [`PRETRAINED`]: the modality it serves and its loader, which reads the checkpoint folder
//! `<data root>/<name>` (put there by `datasets/fetch <name>`). The runner, the config check and
//! `uqformer list` read the same table.

use std::path::{Path, PathBuf};

use backbone::{BertClassifier, BertConfig, Classifier, Dropout};
use burn::nn::LinearConfig;
use burn::tensor::Device;
use data::{Dataset, Modality, WordPiece};

use super::{BaseSpec, image_side};
use crate::config::ExperimentConfig;
use crate::error::{Context, ExperimentError, Result};

/// Reads a pretrained backbone's folder into the base-model recipe for a training set.
type Loader = fn(&ExperimentConfig, &Path, &str, &Dataset) -> Result<BaseSpec>;

/// A pretrained backbone.
pub struct Pretrained {
    /// The `[backbone] pretrained` value and the folder name under the data root.
    pub name: &'static str,
    /// The datasets it serves.
    pub modality: Modality,
    /// A one-line description for `uqformer list`.
    pub about: &'static str,
    pub(super) load: Loader,
}

/// Every pretrained backbone.
pub const PRETRAINED: &[Pretrained] = &[
    Pretrained {
        name: "all-minilm-l6-v2",
        modality: Modality::Text,
        about: "all-MiniLM-L6-v2, a 6-block BERT (safetensors)",
        load: hf_bert,
    },
    Pretrained {
        name: "dinov2-s",
        modality: Modality::Image,
        about: "DINOv2-S/14, a 12-block ViT (ONNX)",
        load: dinov2_onnx,
    },
];

/// The registered backbone called `name`, or an error listing them.
pub fn find(name: &str) -> Result<&'static Pretrained> {
    PRETRAINED.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<_> = PRETRAINED.iter().map(|p| p.name).collect();
        ExperimentError::invalid(format!(
            "backbone.pretrained: unknown backbone {name:?}; valid: {}",
            names.join(", ")
        ))
    })
}

/// A Hugging Face BERT folder (`config.json`, `model.safetensors`, `vocab.txt`).
fn hf_bert(config: &ExperimentConfig, dir: &Path, name: &str, data: &Dataset) -> Result<BaseSpec> {
    let Dataset::Text(texts) = data else {
        return Err(wrong_modality(name, Modality::Text));
    };
    let tokenizer =
        WordPiece::from_vocab_file(&dir.join("vocab.txt")).context("backbone.pretrained")?;
    let hf = importers::HfBertConfig::read(&dir.join("config.json"));
    let mut bert = BertConfig::from(hf.context("backbone.pretrained")?);
    bert.dropout = config.backbone.dropout;
    bert.attention_dropout = config.backbone.attention_dropout;
    let (weights, classes) = (dir.join("model.safetensors"), texts.num_classes);
    let mut spec = BaseSpec::pretrained(name, bert.clone(), move |_, device| {
        let encoder = importers::load_bert_safetensors(&weights, &bert, device)
            .context("backbone.pretrained")?;
        Ok(BertClassifier {
            bert: encoder,
            dropout: Dropout { prob: bert.dropout },
            classifier: LinearConfig::new(bert.d_model, classes).init(device),
        }
        .into())
    });
    spec.tokenizer = Some(tokenizer);
    Ok(spec)
}

/// A folder holding one DINOv2 `.onnx` graph; the ViT's shape comes from the graph, fitted to
/// the images' side, channels and classes.
fn dinov2_onnx(
    config: &ExperimentConfig,
    dir: &Path,
    name: &str,
    data: &Dataset,
) -> Result<BaseSpec> {
    let Dataset::Images(train) = data else {
        return Err(wrong_modality(name, Modality::Image));
    };
    let fail = |what: String| {
        ExperimentError::invalid(format!("backbone.pretrained: {}: {what}", dir.display()))
    };
    let entries = std::fs::read_dir(dir).map_err(|e| {
        fail(format!(
            "cannot read the folder ({e}); run `datasets/fetch {name}`"
        ))
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "onnx"))
        .collect();
    let path = match files.len() {
        1 => files.remove(0),
        n => return Err(fail(format!("expected one *.onnx file, found {n}"))),
    };
    let side = image_side(train)?;
    let (vit, _) = importers::load_dinov2_onnx(
        &path,
        side,
        train.dims[0],
        train.num_classes,
        0,
        &Device::flex(),
    )
    .context("backbone.pretrained")?;
    let (dropout, attention_dropout) = (config.backbone.dropout, config.backbone.attention_dropout);
    let vit = vit
        .with_dropout(dropout)
        .with_attention_dropout(attention_dropout);
    let shape = vit.clone();
    let mut spec = BaseSpec::pretrained(name, &vit, move |seed, device| {
        let (_, model) = importers::load_dinov2_onnx(
            &path,
            shape.image_size,
            shape.channels,
            shape.num_classes,
            seed,
            device,
        )
        .context("backbone.pretrained")?;
        Ok(Classifier::from(model).with_dropout(dropout, attention_dropout))
    });
    spec.vit = Some(vit);
    Ok(spec)
}

fn wrong_modality(name: &str, serves: Modality) -> ExperimentError {
    ExperimentError::invalid(format!(
        "backbone.pretrained: `{name}` is a backbone for {serves:?} datasets, not this one's"
    ))
}
