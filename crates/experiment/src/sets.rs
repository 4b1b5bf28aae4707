//! The data stage: the experiment's sets loaded once, then per seed the training and validation
//! splits, the limits, the shifted copies of the test set, and how samples become model input.

use data::mix;
use data::{
    Catalog, Corruption, Dataset, ImageDataset, Modality, Normalization, SubsetSize, WordPiece,
    corrupt, stratified_subset, train_val_split,
};
use train::Data;

pub use crate::prep::Prep;

use crate::cache::Splits;
use crate::config::ExperimentConfig;
use crate::error::{ErrorContext, ExperimentError, Result};
use crate::eval_set::EvalSet;
use crate::pixels::PixelSpec;
use crate::sources::{self, FolderRead};

/// The data sets every seed draws from, loaded once (the evaluation splits of image folders
/// left on disk, unless `[data] stream = false`).
pub struct Loaded {
    pub train_full: Dataset,
    pub test: EvalSet,
    pub ood: Vec<EvalSet>,
    /// Images: the mean / std given by the checkpoint or `[data.preprocess]`; `None`: fitted
    /// on each seed's training split.
    pub normalization: Option<Normalization>,
}

/// The seed of the fixed test split of single-file datasets: the same for every experiment seed.
const TEST_SPLIT_SEED: u64 = 0x7E57;

/// Loads the in-distribution and OOD sets `[data]` names: catalog names from `data_root`, sets
/// on disk from their paths.
pub fn load(config: &ExperimentConfig, data_root: &std::path::Path) -> Result<Loaded> {
    let catalog = Catalog::new(data_root);
    let data = &config.data;
    let name = data.dataset.name();
    match config.modality()? {
        Modality::Image => {
            let pixels = PixelSpec::new(config)?;
            let read = FolderRead {
                geometry: pixels.geometry.as_ref(),
                stream: data.stream,
            };
            let splits = sources::images(&catalog, &data.dataset, read)?;
            let train_full = splits.train.ok_or_else(|| {
                ExperimentError::invalid(format!("data.dataset: `{name}` has no training split"))
            })?;
            let mut ood = Vec::with_capacity(data.ood.len());
            for source in &data.ood {
                let set = sources::images(&catalog, source, read)?.test;
                if set.image_dims() != Some(train_full.dims) {
                    return Err(ExperimentError::invalid(format!(
                        "data.ood: `{}` has images {:?}, the training set {:?}",
                        source.name(),
                        set.image_dims(),
                        train_full.dims
                    )));
                }
                ood.push(set);
            }
            // Sets read from an image tree are already at their side.
            let side = data.image_size;
            let sized = |set: ImageDataset| match side {
                Some(side) if set.dims[1..] != [side, side] => {
                    data::resize(&set, side, set.dims[0]).context("data.image_size")
                }
                _ => Ok(set),
            };
            let sized_eval = |set: EvalSet| match set {
                EvalSet::Memory(Dataset::Images(images)) => {
                    Ok(EvalSet::Memory(Dataset::Images(sized(images)?)))
                }
                other => Ok(other),
            };
            Ok(Loaded {
                train_full: Dataset::Images(sized(train_full)?),
                test: sized_eval(splits.test)?,
                ood: ood.into_iter().map(sized_eval).collect::<Result<_>>()?,
                normalization: pixels.normalization,
            })
        }
        Modality::Text => {
            let (full, test) = sources::texts(&catalog, &data.dataset)?;
            let (train_full, test) = match test {
                Some(test) => (full, test),
                None => {
                    let (train, test) =
                        train_val_split(&full.labels, data.test_fraction, TEST_SPLIT_SEED, true)
                            .context(format!("data.test_fraction: {name}"))?;
                    (full.subset(&train), full.subset(&test))
                }
            };
            let ood: Vec<Dataset> = (data.ood.iter())
                .map(|ood| Ok(Dataset::Text(sources::texts(&catalog, ood)?.0)))
                .collect::<Result<Vec<_>>>()?;
            if data.preprocess.is_some() {
                return Err(ExperimentError::invalid(
                    "data.preprocess: sizes images; this dataset is text",
                ));
            }
            Ok(Loaded {
                train_full: Dataset::Text(train_full),
                test: EvalSet::Memory(Dataset::Text(test)),
                ood: ood.into_iter().map(EvalSet::Memory).collect(),
                normalization: None,
            })
        }
    }
}

/// The evaluation sets of one seed (raw pixels or texts; [`Prep`] turns them into model input):
/// the test set, the OOD sets and the shifted test sets `<corruption>-<severity>` (images).
pub struct EvalSets {
    pub test: EvalSet,
    pub ood: Vec<EvalSet>,
    pub shift: Vec<(String, Dataset)>,
}

/// One seed's data: what it trains on, validates on, evaluates on, and how samples become input.
pub struct SeedData {
    pub train: Dataset,
    /// The held-out split of the training set (`data.val_fraction`).
    pub val: Dataset,
    pub sets: EvalSets,
    pub prep: Prep,
    /// Text: mean tokenised test length (FLOPs are counted at it); 0 for images.
    pub text_tokens: usize,
}

impl SeedData {
    /// Splits, limits and corrupts `loaded` for `seed`; `tokenizer` is the pretrained text
    /// backbone's (text datasets only).
    pub fn new(
        config: &ExperimentConfig,
        loaded: &Loaded,
        seed: u64,
        tokenizer: Option<WordPiece>,
    ) -> Result<Self> {
        let (train, val, sets) = split(config, loaded, seed)?;
        let prep = match (&train, tokenizer) {
            (Dataset::Images(images), _) => Prep::Pixels(match &loaded.normalization {
                Some(given) => given.clone(),
                None => Normalization::fit(images)?,
            }),
            (Dataset::Text(_), Some(tokenizer)) => Prep::Tokens {
                tokenizer,
                max_tokens: config.data.max_tokens,
            },
            (Dataset::Text(_), None) => {
                return Err(ExperimentError::invalid(
                    "backbone.pretrained: a text dataset needs the tokenizer of a pretrained \
                     text backbone",
                ));
            }
        };
        let text_tokens = prep.mean_tokens(&sets.test)?;
        Ok(Self {
            train,
            val,
            sets,
            prep,
            text_tokens,
        })
    }

    /// The training split, ready for batching.
    pub fn train(&self) -> Data<'_> {
        self.prep.data(&self.train)
    }

    /// The training split and the validation split (when there is one), ready for batching.
    pub fn splits(&self) -> Splits<'_> {
        Splits::new(self.train(), self.prep.data(&self.val))
    }
}

/// The seed's training and validation splits and the evaluation sets.
fn split(
    config: &ExperimentConfig,
    loaded: &Loaded,
    seed: u64,
) -> Result<(Dataset, Dataset, EvalSets)> {
    let data = &config.data;
    let full = &loaded.train_full;
    let (train_idx, val_idx) = train_val_split(full.labels(), data.val_fraction, seed, true)?;
    let val = full.subset(&val_idx);
    let mut train = full.subset(&train_idx);
    if let Some(limit) = data.train_limit {
        train = limited(&train, limit, seed)?;
    }
    let test = limited_eval(&loaded.test, data.test_limit, seed)?;
    let mut shift = Vec::new();
    // Corruptions need every pixel: a test set on disk is read into memory for them.
    let images = match data.shift.is_empty() {
        true => None,
        false => test.images()?,
    };
    if let Some(images) = &images {
        for spec in &data.shift {
            let corruption: Corruption = spec.corruption.parse()?;
            for &severity in &spec.severities {
                let set = corrupt(images, corruption, severity, mix(seed, severity as u64))?;
                shift.push((
                    format!("{}-{severity}", corruption.name()),
                    Dataset::Images(set),
                ));
            }
        }
    }
    let ood = (loaded.ood.iter())
        .map(|set| limited_eval(set, data.test_limit, seed))
        .collect::<Result<_>>()?;
    Ok((train, val, EvalSets { test, ood, shift }))
}

/// An evaluation set cut to a seeded stratified subset of at most `limit` samples.
fn limited_eval(set: &EvalSet, limit: Option<usize>, seed: u64) -> Result<EvalSet> {
    let picked = match limit {
        Some(n) => subset_indices(set.labels(), n, seed, set.name())?,
        None => None,
    };
    Ok(picked.map_or_else(|| set.clone(), |idx| set.subset(&idx)))
}

/// A seeded stratified subset of at most `n` samples.
fn limited(set: &Dataset, n: usize, seed: u64) -> Result<Dataset> {
    let picked = subset_indices(set.labels(), n, seed, set.name())?;
    Ok(picked.map_or_else(|| set.clone(), |idx| set.subset(&idx)))
}

/// The positions of a seeded stratified subset of at most `n` of `labels`; `None`: all.
fn subset_indices(labels: &[u32], n: usize, seed: u64, name: &str) -> Result<Option<Vec<usize>>> {
    if n >= labels.len() {
        return Ok(None);
    }
    Ok(Some(
        stratified_subset(labels, SubsetSize::Total(n), seed).context(name)?,
    ))
}
