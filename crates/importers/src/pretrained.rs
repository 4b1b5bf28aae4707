//! The pretrained backbones `[backbone] pretrained = "<name>"` can name, one entry each in
//! [`PRETRAINED`]: its architecture, a line for `uqformer list`, and its loader, which reads
//! the checkpoint folder `<data root>/<name>` (put there by `datasets/fetch <name>`) into a
//! [`Checkpoint`] fitted to a [`Target`]. The runner and `uqformer list` read the same table.

use std::path::{Path, PathBuf};

use backbone::{Architecture, BertClassifier, BertConfig, Classifier, Dropout, ViTConfig};
use burn::nn::LinearConfig;
use burn::tensor::Device;
use registry::{Entry, Registry};

use crate::bert::BertWeights;
use crate::dinov2::load_dinov2_onnx;
use crate::error::ImportError;
use crate::onnx_structure::onnx_files;

/// What a pretrained backbone is fitted to: the training set's classes and images, and the
/// fine-tuning dropouts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// Classes of the fresh head.
    pub num_classes: usize,
    /// `[channels, side]` of the square images of an image backbone; `None` for texts.
    pub images: Option<[usize; 2]>,
    /// Dropout on embeddings and on attention/MLP outputs.
    pub dropout: f64,
    /// Dropout on attention probabilities.
    pub attention_dropout: f64,
}

/// A fresh model from a seed, on a device: the pretrained weights and a head drawn from the
/// seed (the caller seeds the device).
pub type CheckpointInit = dyn Fn(u64, &Device) -> Result<Classifier, ImportError> + Send + Sync;

/// A checkpoint folder read and fitted to a [`Target`].
pub struct Checkpoint {
    /// The fitted model's configuration (a [`BertConfig`] or [`ViTConfig`]), which a cache key
    /// records.
    pub config: serde_json::Value,
    /// The Vision Transformer's configuration, for an image backbone.
    pub vit: Option<ViTConfig>,
    /// The WordPiece vocabulary file, for a text backbone.
    pub vocab: Option<PathBuf>,
    /// Builds the model.
    pub init: Box<CheckpointInit>,
}

/// Reads a checkpoint folder (named in messages by the backbone's name) for a target.
type Loader = fn(&Path, &str, &Target) -> Result<Checkpoint, ImportError>;

/// A pretrained backbone; its entry in [`PRETRAINED`] gives its name (the `[backbone]
/// pretrained` value and its folder under the data root) and its line for `uqformer list`.
pub struct Pretrained {
    /// Its family, which decides what it reads and which methods apply.
    pub architecture: Architecture,
    load: Loader,
}

impl Pretrained {
    /// Reads `<data_root>/<name>` (`name`: its entry's) into a checkpoint fitted to `target`.
    pub fn open(
        &self,
        name: &str,
        data_root: &Path,
        target: &Target,
    ) -> Result<Checkpoint, ImportError> {
        (self.load)(&data_root.join(name), name, target)
    }
}

/// Every pretrained backbone.
pub const PRETRAINED: Registry<Pretrained> = Registry::new(
    "pretrained backbone",
    &[
        Entry {
            name: "all-minilm-l6-v2",
            about: "all-MiniLM-L6-v2, a 6-block BERT (safetensors)",
            item: Pretrained {
                architecture: Architecture::Bert,
                load: hf_bert,
            },
        },
        Entry {
            name: "paraphrase-minilm-l3-v2",
            about: "paraphrase-MiniLM-L3-v2, a 3-block BERT (ONNX)",
            item: Pretrained {
                architecture: Architecture::Bert,
                load: hf_bert,
            },
        },
        Entry {
            name: "dinov2-s",
            about: "DINOv2-S/14, a 12-block ViT (ONNX)",
            item: Pretrained {
                architecture: Architecture::Vit,
                load: dinov2_onnx,
            },
        },
    ],
);

/// all-MiniLM-L6-v2's shape (what its `config.json` gives, and [`BertConfig`]'s defaults):
/// vocabulary 30522, width 384, 6 blocks, 12 heads, MLP 1536, 512 positions, LayerNorm eps
/// 1e-12; for a model of that shape without the weights (benchmarks, tests).
pub fn minilm_l6() -> BertConfig {
    BertConfig::new()
}

/// A Hugging Face BERT folder: `vocab.txt` (checked first) and either `config.json` with
/// `model.safetensors` or one ONNX graph ([`BertWeights::find`]).
pub(crate) fn hf_bert(dir: &Path, _name: &str, target: &Target) -> Result<Checkpoint, ImportError> {
    let vocab = dir.join("vocab.txt");
    std::fs::metadata(&vocab)
        .map_err(|e| ImportError::caused(&vocab, "cannot read the vocabulary", e))?;
    let weights = BertWeights::find(dir)?;
    let mut bert = weights.config()?;
    bert.dropout = target.dropout;
    bert.attention_dropout = target.attention_dropout;
    let classes = target.num_classes;
    let config = serde_json::to_value(&bert).expect("a BertConfig serialises");
    let init = move |_: u64, device: &Device| {
        let encoder = weights.load(&bert, device)?;
        Ok(BertClassifier {
            bert: encoder,
            pooler: None,
            dropout: Dropout { prob: bert.dropout },
            classifier: LinearConfig::new(bert.d_model, classes).init(device),
        }
        .into())
    };
    Ok(Checkpoint {
        config,
        vit: None,
        vocab: Some(vocab),
        init: Box::new(init),
    })
}

/// A folder holding one DINOv2 `.onnx` graph; the ViT's shape comes from the graph, fitted to
/// the images' side, channels and classes.
fn dinov2_onnx(dir: &Path, name: &str, target: &Target) -> Result<Checkpoint, ImportError> {
    let fail = |what: String| ImportError::file(dir, what);
    let Some([channels, side]) = target.images else {
        return Err(fail(format!("`{name}` is a backbone for images")));
    };
    let mut files = onnx_files(dir).map_err(|e| {
        let what = format!("cannot read the folder; run `datasets/fetch {name}`");
        ImportError::caused(dir, what, e)
    })?;
    let path = match files.len() {
        1 => files.remove(0),
        n => return Err(fail(format!("expected one *.onnx file, found {n}"))),
    };
    let flex = Device::flex();
    let (vit, _) = load_dinov2_onnx(&path, side, channels, target.num_classes, 0, &flex)?;
    let (dropout, attention_dropout) = (target.dropout, target.attention_dropout);
    let vit = vit
        .with_dropout(dropout)
        .with_attention_dropout(attention_dropout);
    let shape = vit.clone();
    let init = move |seed: u64, device: &Device| {
        let (_, model) = load_dinov2_onnx(
            &path,
            shape.image_size,
            shape.channels,
            shape.num_classes,
            seed,
            device,
        )?;
        Ok(Classifier::from(model).with_dropout(dropout, attention_dropout))
    };
    Ok(Checkpoint {
        config: serde_json::to_value(&vit).expect("a ViTConfig serialises"),
        vit: Some(vit),
        vocab: None,
        init: Box::new(init),
    })
}
