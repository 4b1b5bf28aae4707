//! A whole Hugging Face BERT or RoBERTa checkpoint ([`load_bert`]): `BertModel` /
//! `RobertaModel` (the pooler read as [`Pooling::Cls`]) or `...ForSequenceClassification`
//! (pooler or RoBERTa's `classifier.dense`, then the classifier), told apart by its tensors.

use std::collections::BTreeMap;
use std::path::Path;

use backbone::{BertClassifier, BertConfig, Pooling};
use burn::tensor::Device;

use super::config::HfBertConfig;
use super::encoder::{map_encoder, prefix};
use crate::config_json::locate;
use crate::error::ImportError;
use crate::mapping::{Loader, Source};
use crate::safetensors::SafeTensors;

/// A BERT-family checkpoint imported: its configuration, the model and whether the checkpoint
/// had a classifier.
#[derive(Debug)]
pub struct BertCheckpoint {
    /// `config.json` as read (`model_type`, `pad_token_id`, the sizes).
    pub hf: HfBertConfig,
    /// The architecture read from the checkpoint.
    pub config: BertConfig,
    /// The model holding the checkpoint's weights: with a pooler ([`Pooling::Cls`]) when the
    /// checkpoint has one (`pooler.dense`, or RoBERTa's `classifier.dense`), else mean pooling.
    pub model: BertClassifier,
    /// Whether the checkpoint had a classifier (its logits are then `model.forward`). Without
    /// one, `model.classifier` is a fresh placeholder `D -> 1` and only `model.features` (the
    /// pooler output, or the mean-pooled hidden states of a checkpoint without a pooler)
    /// belongs to the checkpoint.
    pub classifier: bool,
}

/// Pre-training heads a checkpoint may carry beside the encoder (`BertForPreTraining`'s
/// `cls.*`, `RobertaForMaskedLM`'s `lm_head.*`): left unused, as `transformers` leaves them when
/// it loads such a checkpoint into `BertModel` or `RobertaModel`.
const PRETRAINING_HEADS: [&str; 2] = ["cls.", "lm_head."];

/// Where one model type keeps its heads: the pooler and the classifier.
struct Heads {
    /// The pooler's name and whether it sits under the encoder's prefix.
    pooler: (&'static str, bool),
    /// The classifier's name (outside the prefix).
    classifier: &'static str,
}

impl Heads {
    fn of(hf: &HfBertConfig, classifier: bool) -> Self {
        match (hf.is_roberta(), classifier) {
            // RobertaClassificationHead: dense + tanh over <s>, then out_proj; no pooler. (Its
            // dropout before the dense layer is not modelled: the classifier's one dropout sits
            // after the tanh, which changes only training and MC dropout, not inference.)
            (true, true) => Self {
                pooler: ("classifier.dense", false),
                classifier: "classifier.out_proj",
            },
            (true, false) => Self {
                pooler: ("pooler.dense", true),
                classifier: "classifier.out_proj",
            },
            (false, _) => Self {
                pooler: ("pooler.dense", true),
                classifier: "classifier",
            },
        }
    }
}

/// Reads a Hugging Face BERT or RoBERTa checkpoint: a folder with `config.json` and
/// `model.safetensors`, or a `.safetensors` file with `config.json` beside it; `BertModel`,
/// `BertForSequenceClassification`, `RobertaModel` or `RobertaForSequenceClassification`, told
/// apart by the tensors (a classifier's weight), the architecture by `config.json` alone.
/// RoBERTa's position table loses its first `pad_token_id + 1` rows (see
/// [`HfBertConfig::position_offset`]). Every failure names the file and, for tensors, every
/// missing, unexpected or mis-shaped key.
pub fn load_bert(path: &Path, device: &Device) -> Result<BertCheckpoint, ImportError> {
    let (config_path, weights) = locate(path)?;
    let hf = HfBertConfig::read(&config_path)?;
    let file = SafeTensors::read(&weights)?;
    let prefix = prefix(&file);
    let head = file.shape(&format!("{}.weight", Heads::of(&hf, true).classifier));
    let classifier = head.is_some();
    let heads = Heads::of(&hf, classifier);
    let (pooler, under_prefix) = heads.pooler;
    let pooler_key = format!("{}{pooler}.weight", if under_prefix { prefix } else { "" });
    let pooling = match classifier || file.shape(&pooler_key).is_some() {
        true => Pooling::Cls,
        false => Pooling::Mean,
    };
    // The labels are the config's word on the classifier's width; the tensor's shape is
    // checked against it by the mapping.
    let num_classes = (hf.id2label.as_ref().map(BTreeMap::len))
        .or(hf.num_labels)
        .or(head.map(|shape| shape[0]))
        .filter(|_| classifier)
        .unwrap_or(1);
    let config = BertConfig::from(hf.clone());
    let mut model = config
        .init_pooled_classifier(num_classes, pooling, device)
        .map_err(|error| ImportError::Config {
            path: weights.clone(),
            error,
        })?;
    let mut load = Loader::new(&file, prefix);
    map_encoder(&mut load, &mut model.bert, hf.position_offset());
    if let Some(dense) = &mut model.pooler {
        load.prefix = if under_prefix { prefix } else { "" };
        load.linear(pooler, dense);
    }
    if classifier {
        load.prefix = "";
        load.linear(heads.classifier, &mut model.classifier);
    }
    let mut unused: Vec<String> = (file.names().into_iter())
        .filter(|name| PRETRAINING_HEADS.iter().any(|head| name.starts_with(head)))
        .map(String::from)
        .collect();
    unused.push(format!("{prefix}embeddings.position_ids"));
    load.prefix = "";
    load.finish(&unused.iter().map(String::as_str).collect::<Vec<_>>())?;
    Ok(BertCheckpoint {
        hf,
        config,
        model,
        classifier,
    })
}
