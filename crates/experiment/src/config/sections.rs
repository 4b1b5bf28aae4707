//! The sections of an experiment file, each rejecting unknown keys, with their defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use uq_metrics::{ConformalScore, OodScore};

use super::source::DataSource;
use super::zero_shot::ZeroShotSection;
use crate::methods::Recalibration;
use runtime::Backend;

/// `[eval]`: what the evaluation adds to every method, and how methods are compared and timed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalSection {
    /// `temperature` adds a temperature-scaled entry `<method>+ts` for every method (a method's
    /// own `calibration` key does it for that method alone).
    pub calibration: Recalibration,
    /// The method every other is compared with, paired by seed (a `[[method]]` name, default
    /// [`report::DEFAULT_REFERENCE`]; absent from the run: none).
    pub reference: String,
    /// The method the report's ratios (cost, training) and gains are relative to, a
    /// `[[method]]` name; left out, [`report::DEFAULT_BASELINE`] where the run has it, else
    /// none ([`EvalSection::baseline`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Equivalence margins by metric (`id.accuracy`, `ood.auroc`, `ood.<set>.auroc`, ...),
    /// overriding [`report::compare::DEFAULT_MARGINS`].
    pub margins: BTreeMap<String, f64>,
    /// Miscoverage level α of the split conformal prediction sets (in (0, 1)).
    pub conformal_alpha: f64,
    /// Conformal score: `thr` (1 − p of the label) or `aps` (cumulative mass up to the label).
    pub conformal_score: ConformalScore,
    /// Round-robin rounds of latency timing (each model timed once per round at the evaluation
    /// batch, and at batch 1 a few times).
    pub timing_rounds: usize,
    /// `bf16` also evaluates every method with its weights and inputs in bf16, as
    /// `<method>+bf16`, timed beside the f32 entries.
    pub precision: Precision,
    /// Write every method's raw predictions (member probabilities and logits, labels) on each
    /// set as `.npy` files beside the results: `<method>-seed<s>-<set>-probs.npy`, ...
    pub save_predictions: bool,
}

impl EvalSection {
    /// The baseline's name: the one written, else the default.
    pub fn baseline(&self) -> &str {
        self.baseline.as_deref().unwrap_or(report::DEFAULT_BASELINE)
    }
}

/// The floating-point precision evaluation adds beside f32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// f32 only.
    #[default]
    F32,
    /// f32, and every method again in bf16.
    Bf16,
}

impl Default for EvalSection {
    fn default() -> Self {
        Self {
            calibration: Recalibration::None,
            reference: report::DEFAULT_REFERENCE.into(),
            baseline: None,
            margins: BTreeMap::new(),
            conformal_alpha: 0.1,
            conformal_score: ConformalScore::Thr,
            timing_rounds: 9,
            precision: Precision::F32,
            save_predictions: false,
        }
    }
}

/// `[experiment]`: name, seeds, device.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSection {
    pub name: String,
    /// One full run (training, methods, evaluation) per seed; results give mean ± std over them.
    #[serde(default = "default_seeds")]
    pub seeds: Vec<u64>,
    /// `flex` (CPU, default), `ndarray`, `wgpu`, `cuda`, `tch` or `tch-cuda`, as compiled in.
    #[serde(default)]
    pub backend: Backend,
    /// The backend's devices (GPU numbers) to train on: the main process on the first, one
    /// worker process on each of the others, one job a device at a time. Empty: the default
    /// device. A CPU backend is one device (`[0]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<usize>,
}

/// `[data]`: the in-distribution set, OOD sets and shift corruptions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSection {
    /// A catalog name (`uqformer list` shows them) or a set on disk (`{ path = "..." }`).
    pub dataset: DataSource,
    /// Fraction of the training set held out for validation (seeded split).
    #[serde(default = "default_val_fraction")]
    pub val_fraction: f64,
    /// OOD sets evaluated against the in-distribution test set, each a catalog name or a set
    /// on disk (its test split, else its validation split, else the whole tree).
    #[serde(default)]
    pub ood: Vec<DataSource>,
    /// OOD sets by group (`near`, `far`): the report adds each group's mean AUROC and FPR95.
    #[serde(default)]
    pub ood_groups: OodGroups,
    /// Corrupted copies of the test set.
    #[serde(default)]
    pub shift: Vec<ShiftSpec>,
    #[serde(default = "default_eval_batch")]
    pub eval_batch_size: usize,
    /// OOD scores (higher = more likely OOD), one name or a list: output scores (msp, entropy,
    /// mutual_info, max_logit, energy, ...) and feature-space detectors (mahalanobis, knn,
    /// ...). The first is the run's headline score (its metrics fill each entry's `ood`).
    #[serde(default = "default_score")]
    pub ood_score: ScoreList,
    /// Use a seeded stratified subset of this many training images (quick runs).
    #[serde(default)]
    pub train_limit: Option<usize>,
    /// Likewise for every evaluation set (ID test, OOD, shifted).
    #[serde(default)]
    pub test_limit: Option<usize>,
    /// Datasets shipped as one file (the text sets): the stratified fraction held out as the
    /// test set, drawn with a fixed seed so that every experiment seed tests on the same texts.
    #[serde(default = "default_test_fraction")]
    pub test_fraction: f64,
    /// Text: longest token sequence, `[CLS]` and `[SEP]` included (longer texts are cut).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: usize,
    /// Images: every set (training, test, OOD) resized to this side as it is loaded, bilinear
    /// (e.g. 56 on 28x28 data gives DINOv2-S/14 a 4x4 grid of patches); absent: as stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_size: Option<usize>,
    /// Images: the preprocessing's overrides (`[data.preprocess]`), over the checkpoint's
    /// `preprocessor_config.json` when `[backbone] checkpoint` has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preprocess: Option<PreprocessSection>,
    /// Image folders' evaluation sets (test split, OOD folders) read from disk batch by batch
    /// at every pass (true), or read into memory once (false: faster for a small folder that
    /// every method reads again).
    #[serde(default = "default_stream", skip_serializing_if = "is_true")]
    pub stream: bool,
}

/// `[data.preprocess]`: how images are sized and normalised, each key replacing the
/// checkpoint's value (or, without a checkpoint, `image_size` and the training set's mean / std).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreprocessSection {
    /// Image folders: the shorter side resized to this many pixels.
    pub resize: Option<usize>,
    /// Image folders: the centre crop's side, after the resize.
    pub crop: Option<usize>,
    /// Per-channel (R, G, B) mean of the [0, 1] pixels, subtracted; given with `std`.
    pub mean: Option<[f32; 3]>,
    /// Per-channel standard deviation, divided by; given with `mean`.
    pub std: Option<[f32; 3]>,
}

/// `[data] ood_score`: one score or a list, parsed as the file is read (an unknown name, an
/// empty list or a repeat is refused naming the field); the first is the run's headline score.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreList(Vec<OodScore>);

impl ScoreList {
    /// The scores in order, the headline first (never empty).
    pub fn scores(&self) -> &[OodScore] {
        &self.0
    }

    /// The headline score.
    pub fn primary(&self) -> OodScore {
        self.0[0]
    }
}

/// Written as read: one name, or a list of them.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Written {
    One(String),
    Many(Vec<String>),
}

impl<'de> Deserialize<'de> for ScoreList {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let names = match Written::deserialize(d)? {
            Written::One(name) => vec![name],
            Written::Many(names) => names,
        };
        if names.is_empty() {
            return Err(D::Error::custom(
                "data.ood_score: an empty list; expected at least one score",
            ));
        }
        let mut scores = Vec::with_capacity(names.len());
        for name in &names {
            let score: OodScore =
                (name.parse()).map_err(|e| D::Error::custom(format!("data.ood_score: {e}")))?;
            if scores.contains(&score) {
                return Err(D::Error::custom(format!(
                    "data.ood_score: `{name}` is listed twice"
                )));
            }
            scores.push(score);
        }
        Ok(Self(scores))
    }
}

impl Serialize for ScoreList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let name = |score: &OodScore| score.name().to_string();
        match self.0.as_slice() {
            [one] => Written::One(name(one)),
            many => Written::Many(many.iter().map(name).collect()),
        }
        .serialize(s)
    }
}

/// `[data] ood_groups`: which OOD sets are near and which far from the in-distribution data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OodGroups {
    /// Semantically new classes that share the in-distribution data's look.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub near: Vec<String>,
    /// Data of another kind altogether.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub far: Vec<String>,
}

impl OodGroups {
    /// The groups and their sets, near first; groups without sets left out.
    pub fn groups(&self) -> Vec<(&'static str, &[String])> {
        [("near", &self.near[..]), ("far", &self.far[..])]
            .into_iter()
            .filter(|(_, sets)| !sets.is_empty())
            .collect()
    }
}

/// One corruption at one or more severities (1..=5).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShiftSpec {
    pub corruption: String,
    pub severities: Vec<u8>,
}

/// `[backbone]`: a named preset or pretrained weights, its dropout, and optional overrides of the
/// preset's shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackboneSection {
    /// A ViT preset (`uqformer list`), trained from scratch; images only, unless `pretrained`.
    #[serde(default)]
    pub preset: Option<String>,
    /// Pretrained weights: a folder under the data root, fine-tuned with a fresh classifier head
    /// (the checkpoint gives the architecture). Text datasets need a Hugging Face BERT checkpoint
    /// there (`vocab.txt` with `config.json` and `model.safetensors`, e.g. `all-minilm-l6-v2`, or
    /// with one ONNX graph, e.g. `paraphrase-minilm-l3-v2`); image
    /// datasets a DINOv2 ONNX file (one `*.onnx`, e.g. `dinov2-s`), at the dataset's image size
    /// (a multiple of its patch size).
    #[serde(default)]
    pub pretrained: Option<String>,
    /// Pretrained weights from a path: a `transformers` ViT, DeiT or BERT folder (`config.json`
    /// with `model.safetensors`; BERT with its `vocab.txt`) or a timm ViT / DeiT state dict,
    /// fine-tuned with a fresh head like `pretrained`; or a `transformers` CLIP folder (with its
    /// tokenizer), the zero-shot classifier `zero_shot` describes; images at the checkpoint's own
    /// size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<PathBuf>,
    /// A CLIP `checkpoint`'s class names and prompt templates: the base model is its zero-shot
    /// classifier, used as it is (never trained). Required for a CLIP checkpoint, refused for
    /// any other backbone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_shot: Option<ZeroShotSection>,
    #[serde(default)]
    pub dropout: f64,
    #[serde(default)]
    pub attention_dropout: f64,
    pub patch_size: Option<usize>,
    pub d_model: Option<usize>,
    pub n_layers: Option<usize>,
    pub n_heads: Option<usize>,
    pub d_mlp: Option<usize>,
}

fn default_seeds() -> Vec<u64> {
    vec![0]
}
fn default_val_fraction() -> f64 {
    0.1
}
fn default_eval_batch() -> usize {
    256
}
fn default_score() -> ScoreList {
    ScoreList(vec![OodScore::Output(uq_metrics::Score::Msp)])
}
fn default_test_fraction() -> f64 {
    0.2
}
fn default_max_tokens() -> usize {
    128
}

fn default_stream() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl BackboneSection {
    /// Whether the backbone starts from pretrained weights (`pretrained` or `checkpoint`).
    pub fn is_pretrained(&self) -> bool {
        self.pretrained.is_some() || self.checkpoint.is_some()
    }
}
