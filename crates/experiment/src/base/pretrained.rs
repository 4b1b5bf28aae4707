//! A pretrained backbone as a base model: the entry of [`importers::PRETRAINED`] that
//! `[backbone] pretrained = "<name>"` names, fitted to the training set and the experiment's
//! dropouts, its checkpoint folder `<data root>/<name>` read into a [`BaseSpec`].

use std::path::Path;

use backbone::InputKind;
use data::{Dataset, WordPiece};
use importers::{Pretrained, Target};

use super::{BaseSpec, image_side};
use crate::config::ExperimentConfig;
use crate::error::{ErrorContext, ExperimentError, Result};

/// The base-model recipe of the pretrained backbone `entry` for the training set `data`.
pub fn load(
    config: &ExperimentConfig,
    data_root: &Path,
    entry: &Pretrained,
    data: &Dataset,
) -> Result<BaseSpec> {
    let images = match (entry.architecture.reads(), data) {
        (InputKind::Images, Dataset::Images(train)) => Some([train.dims[0], image_side(train)?]),
        (InputKind::Tokens, Dataset::Text(_)) => None,
        (serves, _) => {
            return Err(ExperimentError::invalid(format!(
                "backbone.pretrained: `{}` is a backbone for {serves}, not this dataset's",
                entry.name
            )));
        }
    };
    let target = Target {
        num_classes: data.num_classes(),
        images,
        dropout: config.backbone.dropout,
        attention_dropout: config.backbone.attention_dropout,
    };
    let checkpoint = entry
        .open(data_root, &target)
        .context("backbone.pretrained")?;
    let tokenizer = (checkpoint.vocab.as_deref())
        .map(WordPiece::from_vocab_file)
        .transpose()
        .context("backbone.pretrained")?;
    let init = checkpoint.init;
    let mut spec = BaseSpec::pretrained(entry.name, checkpoint.config, move |seed, device| {
        init(seed, device).context("backbone.pretrained")
    });
    spec.vit = checkpoint.vit;
    spec.tokenizer = tokenizer;
    Ok(spec)
}
