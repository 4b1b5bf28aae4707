//! What a method hands back beside its metrics, typed: the runner's wall times and the method's
//! own outputs ([`MethodOutputs`], one variant per method that has any). The report draws a
//! method's outputs by their variant, never by a key.
//!
//! Stored as the entry's `extra` object in `summary.json`, with the keys it had when it was
//! free-form (`build_seconds`, `hetdpt`, `head_scores`, `frozen`, ...), so old and new runs
//! share one format; an unknown key is refused rather than dropped, so a renamed one shows.

use serde::{Deserialize, Serialize};
use uq_metrics::nan_if_null;

/// An entry's `extra`: how long the runner took, and the method's own outputs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "StoredExtra", into = "StoredExtra")]
pub struct Extra {
    /// Wall seconds building the method (training, or reading it back from the cache) and
    /// evaluating it; absent in runs older than the fields.
    pub build_seconds: Option<f64>,
    pub eval_seconds: Option<f64>,
    pub outputs: Option<MethodOutputs>,
}

impl Extra {
    /// Nothing recorded (the entry's `extra` is left out of `summary.json`).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// A method's own results, by method.
#[derive(Debug, Clone, PartialEq)]
pub enum MethodOutputs {
    HetDpt(HetDptOutputs),
    Hydra(HydraOutputs),
    LoraEnsemble(LoraOutputs),
}

/// HetDPT's search and choice: the MAP's fit, the point chosen, the budget and whether it was
/// met. The full report is the run's `<method>-seed<s>-hetdpt.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HetDptOutputs {
    pub choice: HetDptChoice,
    /// The MAP's R² on the points it was fitted to, and left out one at a time (absent in the
    /// earliest runs).
    #[serde(deserialize_with = "nan_if_null")]
    pub r_squared: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loo_r_squared: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loo_max_abs_error: Option<f64>,
    /// The chosen model's speed-up over the unpruned one, by the configured measure.
    #[serde(deserialize_with = "nan_if_null")]
    pub speedup: f64,
    /// What the choice optimised, whether the final model met it, and the speed-up it reached
    /// (absent in runs older than budgets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<HetDptBudget>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_met: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub achieved_speedup: Option<f64>,
    /// No prediction exceeds it: the unpruned model's validation accuracy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prediction_cap: Option<f64>,
    /// Points the search measured beyond the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added_points: Option<usize>,
    pub removal: HetDptRemoval,
}

impl HetDptOutputs {
    /// Whether the final model missed its budget (`false` where the run predates budgets).
    pub fn missed_budget(&self) -> bool {
        self.budget_met == Some(false)
    }
}

/// HetDPT's budget, as the experiment file writes it (`budget = { min_speedup = 1.3 }`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HetDptBudget {
    MinSpeedup(f64),
    MaxAccuracyDrop(f64),
}

impl std::fmt::Display for HetDptBudget {
    /// `min_speedup = 1.3`, as in the experiment file.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MinSpeedup(x) => write!(f, "min_speedup = {x:?}"),
            Self::MaxAccuracyDrop(x) => write!(f, "max_accuracy_drop = {x:?}"),
        }
    }
}

/// The (n_a, n_g) HetDPT chose and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HetDptChoice {
    /// Attention branches and GELUs removed.
    pub n_attn: usize,
    pub n_act: usize,
    #[serde(deserialize_with = "nan_if_null")]
    pub predicted_accuracy: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub speedup: f64,
    pub reason: String,
    /// Points the polynomial scored, whether the chosen one was measured, and the candidates
    /// whose speed was checked in order (absent in the earliest runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub searched: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_point: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checked: Vec<HetDptCandidate>,
}

/// A point of HetDPT's search range whose speed the search checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HetDptCandidate {
    pub n_attn: usize,
    pub n_act: usize,
    #[serde(deserialize_with = "nan_if_null")]
    pub predicted_accuracy: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub flop_speedup: f64,
    pub speedup: Option<f64>,
}

/// The layers the chosen model lacks, per block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HetDptRemoval {
    pub attn: Vec<bool>,
    pub act: Vec<bool>,
}

/// Hydra's head selection: what each member kept and how closely it follows the scores (the
/// measures are absent in runs older than them).
#[derive(Debug, Clone, PartialEq)]
pub struct HydraOutputs {
    /// Per member, the head scores by block and head, and the heads kept per block.
    pub head_scores: Vec<Vec<Vec<f64>>>,
    pub kept_heads: Vec<Vec<Vec<usize>>>,
    /// The members' mean share of each block's top-k heads (1: top-k, k/H: random).
    pub topk_share: Option<f64>,
    /// Per member, the share of the top heads ranked on the whole calibration set, by the
    /// criterion itself and by Taylor importance.
    pub topk_share_whole: Option<Vec<f64>>,
    pub topk_share_taylor: Option<Vec<f64>>,
    /// The members' pairwise Jaccard overlap of kept heads (pairs a < b), and its mean (`None`
    /// with one member).
    pub head_jaccard: Option<Vec<f64>>,
    pub head_jaccard_mean: Option<f64>,
}

/// LoRA-Ensemble's frozen backbone.
#[derive(Debug, Clone, PartialEq)]
pub struct LoraOutputs {
    pub frozen: Frozen,
}

/// Which backbone LoRA-Ensemble's adapters sit on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Frozen {
    /// The pretrained backbone as loaded, with no task training.
    Pretrained,
    /// The seed's base model, trained (or fine-tuned) on the task.
    Base,
}

/// `extra` as stored: every key any method writes, each optional.
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredExtra {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    build_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eval_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hetdpt: Option<HetDptOutputs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head_scores: Option<Vec<Vec<Vec<f64>>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kept_heads: Option<Vec<Vec<Vec<usize>>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    topk_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    topk_share_whole: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    topk_share_taylor: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head_jaccard: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head_jaccard_mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frozen: Option<Frozen>,
}

impl TryFrom<StoredExtra> for Extra {
    type Error = String;

    fn try_from(s: StoredExtra) -> Result<Self, String> {
        let hydra = match (s.head_scores, s.kept_heads) {
            (Some(head_scores), Some(kept_heads)) => Some(HydraOutputs {
                head_scores,
                kept_heads,
                topk_share: s.topk_share,
                topk_share_whole: s.topk_share_whole,
                topk_share_taylor: s.topk_share_taylor,
                head_jaccard: s.head_jaccard,
                head_jaccard_mean: s.head_jaccard_mean,
            }),
            (None, None) => None,
            _ => return Err("extra: `head_scores` and `kept_heads` come together".into()),
        };
        let found: Vec<MethodOutputs> = [
            s.hetdpt.map(MethodOutputs::HetDpt),
            hydra.map(MethodOutputs::Hydra),
            (s.frozen).map(|frozen| MethodOutputs::LoraEnsemble(LoraOutputs { frozen })),
        ]
        .into_iter()
        .flatten()
        .collect();
        if found.len() > 1 {
            return Err("extra: the outputs of more than one method".into());
        }
        Ok(Self {
            build_seconds: s.build_seconds,
            eval_seconds: s.eval_seconds,
            outputs: found.into_iter().next(),
        })
    }
}

impl From<Extra> for StoredExtra {
    fn from(e: Extra) -> Self {
        let mut s = StoredExtra {
            build_seconds: e.build_seconds,
            eval_seconds: e.eval_seconds,
            ..StoredExtra::default()
        };
        match e.outputs {
            None => {}
            Some(MethodOutputs::HetDpt(h)) => s.hetdpt = Some(h),
            Some(MethodOutputs::Hydra(h)) => {
                s.head_scores = Some(h.head_scores);
                s.kept_heads = Some(h.kept_heads);
                s.topk_share = h.topk_share;
                s.topk_share_whole = h.topk_share_whole;
                s.topk_share_taylor = h.topk_share_taylor;
                s.head_jaccard = h.head_jaccard;
                s.head_jaccard_mean = h.head_jaccard_mean;
            }
            Some(MethodOutputs::LoraEnsemble(l)) => s.frozen = Some(l.frozen),
        }
        s
    }
}
