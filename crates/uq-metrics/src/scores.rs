//! Per-sample uncertainty scores for OOD detection; every score is "higher = more OOD".

use serde::Serialize;

use crate::classification::top_label;
use crate::error::{MetricsError, Result};
use crate::input::{Logits, MemberProbs, Probs};
use registry::{Entry, Registry};

/// An uncertainty score. Natural logs throughout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Score {
    /// `1 - max_c p[c]` of the (ensemble) prediction.
    Msp,
    /// Predictive entropy `-sum_c p[c] ln p[c]` of the (ensemble) prediction, `0 ln 0 = 0`.
    Entropy,
    /// Mutual information: entropy of the member mean minus the mean member entropy,
    /// clamped at 0 (it is non-negative exactly; rounding can dip below). Needs members.
    MutualInfo,
    /// `-max_c logit[c]`.
    MaxLogit,
    /// Energy `-logsumexp_c logit[c]` (temperature 1): in-distribution inputs get large
    /// logits, hence low energy.
    Energy,
    /// Fraction of the `M (M - 1) / 2` member pairs whose argmaxes differ. Needs M >= 2.
    Disagreement,
    /// Member variance: `(1/M) sum_k ||p_k - mean||^2`, the per-class population variances
    /// across members summed over classes. Needs members.
    MemberVariance,
}

impl Score {
    /// Each score's name (configs and the command line use it) and what it measures, in a line.
    pub const NAMES: Registry<Self> = Registry::new(
        "score",
        &[
            Entry {
                name: "msp",
                about: "one minus the largest class probability of the ensemble's prediction",
                item: Self::Msp,
            },
            Entry {
                name: "entropy",
                about: "entropy of the ensemble's predicted distribution",
                item: Self::Entropy,
            },
            Entry {
                name: "mutual_info",
                about: "predictive entropy minus the members' mean entropy",
                item: Self::MutualInfo,
            },
            Entry {
                name: "max_logit",
                about: "minus the largest (member-mean) logit",
                item: Self::MaxLogit,
            },
            Entry {
                name: "energy",
                about: "minus the log-sum-exp of the (member-mean) logits",
                item: Self::Energy,
            },
            Entry {
                name: "disagreement",
                about: "fraction of member pairs whose predicted classes differ",
                item: Self::Disagreement,
            },
            Entry {
                name: "member_variance",
                about: "variance of the members' probabilities, summed over classes",
                item: Self::MemberVariance,
            },
        ],
    );

    /// Every variant, in declaration order.
    pub const ALL: [Self; 7] = Self::NAMES.values();

    /// The name configs and the command line use.
    pub fn name(self) -> &'static str {
        Self::NAMES.entry_of(self).name
    }

    /// What the score measures, in a line.
    pub fn about(self) -> &'static str {
        Self::NAMES.entry_of(self).about
    }
}

impl std::fmt::Display for Score {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Score {
    type Err = MetricsError;

    fn from_str(s: &str) -> Result<Self> {
        Ok(Self::NAMES.get(s)?.item)
    }
}

/// What a score may be computed from. `Msp` and `Entropy` use `probs` when given, otherwise
/// the mean of `members`; `MutualInfo`, `Disagreement` and `MemberVariance` need `members`;
/// `MaxLogit` and `Energy` need `logits`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScoreInput<'a> {
    pub probs: Option<&'a Probs>,
    pub members: Option<&'a MemberProbs>,
    pub logits: Option<&'a Logits>,
}

/// The per-sample score vector (length N), or `MissingInput` when `input` lacks what it needs.
pub fn score(kind: Score, input: &ScoreInput<'_>) -> Result<Vec<f64>> {
    let missing = |needs| MetricsError::MissingInput {
        score: kind.name(),
        needs,
    };
    let members = || input.members.ok_or_else(|| missing("member probs"));
    let logits = || input.logits.ok_or_else(|| missing("logits"));
    let per_row =
        |rows: std::slice::ChunksExact<'_, f64>, f: fn(&[f64]) -> f64| rows.map(f).collect();
    match kind {
        Score::Msp | Score::Entropy => {
            let f: fn(&[f64]) -> f64 = if kind == Score::Msp {
                |row| 1.0 - top_label(row).1
            } else {
                entropy
            };
            match (input.probs, input.members) {
                (Some(probs), _) => Ok(per_row(probs.rows(), f)),
                (None, Some(m)) => Ok(per_row(m.mean().rows(), f)),
                (None, None) => Err(missing("probs or member probs")),
            }
        }
        Score::MutualInfo => Ok(mutual_info(members()?)),
        Score::Disagreement => match members()? {
            m if m.m() < 2 => Err(missing("member probs with at least 2 members")),
            m => Ok(disagreement(m)),
        },
        Score::MemberVariance => Ok(member_variance(members()?)),
        Score::MaxLogit => Ok(per_row(logits()?.rows(), |row| -top_label(row).1)),
        Score::Energy => Ok(per_row(logits()?.rows(), |row| -log_sum_exp(row))),
    }
}

fn entropy(row: &[f64]) -> f64 {
    -row.iter()
        .filter(|&&p| p > 0.0)
        .map(|&p| p * p.ln())
        .sum::<f64>()
}

pub(crate) fn log_sum_exp(row: &[f64]) -> f64 {
    let max = top_label(row).1;
    max + row.iter().map(|&x| (x - max).exp()).sum::<f64>().ln()
}

/// Per sample, [`Score::MutualInfo`].
pub(crate) fn mutual_info(members: &MemberProbs) -> Vec<f64> {
    let mean = members.mean();
    (0..members.n())
        .map(|i| {
            let member_entropy: f64 = (0..members.m())
                .map(|k| entropy(members.row(k, i)))
                .sum::<f64>()
                / members.m() as f64;
            (entropy(mean.row(i)) - member_entropy).max(0.0)
        })
        .collect()
}

/// Per sample, [`Score::Disagreement`]; needs M >= 2.
pub(crate) fn disagreement(members: &MemberProbs) -> Vec<f64> {
    let m = members.m();
    let pairs = (m * (m - 1)) as f64;
    let mut votes = vec![0usize; members.c()];
    (0..members.n())
        .map(|i| {
            votes.fill(0);
            (0..m).for_each(|k| votes[top_label(members.row(k, i)).0] += 1);
            // Ordered agreeing pairs: sum_c v_c (v_c - 1); ordered pairs overall: M (M - 1).
            let agreeing: usize = votes.iter().map(|&v| v * v.saturating_sub(1)).sum();
            1.0 - agreeing as f64 / pairs
        })
        .collect()
}

fn member_variance(members: &MemberProbs) -> Vec<f64> {
    let mean = members.mean();
    (0..members.n())
        .map(|i| {
            let centre = mean.row(i);
            (0..members.m())
                .map(|k| {
                    members
                        .row(k, i)
                        .iter()
                        .zip(centre)
                        .map(|(p, q)| (p - q) * (p - q))
                        .sum::<f64>()
                })
                .sum::<f64>()
                / members.m() as f64
        })
        .collect()
}
