//! A removal order of attention branches and GELUs, and how it was made: HetDPT's removal
//! rounds ([`Round`]) or a criterion of the pruning seam ([`Ranked`]).

use serde::Serialize;

/// The two kinds of removable layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Attention,
    Activation,
}

/// One removal round of `kind`: its candidates' initial and trained scores (null where already
/// removed) and the block whose layer was removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Round {
    pub kind: Kind,
    pub removed: usize,
    pub initial: Vec<Option<f64>>,
    pub scores: Vec<Option<f64>>,
}

/// The removal order of each kind (block indices, first removed first) and the rounds that
/// produced it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RemovalOrder {
    pub attn: Vec<usize>,
    pub act: Vec<usize>,
    pub rounds: Vec<Round>,
    /// Gate-score steps taken over all rounds, and the training images they saw.
    pub steps: u64,
    pub samples: u64,
    /// The criterion's scores, when a criterion of the pruning seam made the order (`rounds`
    /// is then empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranked: Option<Ranked>,
}

/// What the criterion scored: its name and a score per block for each kind (higher = more
/// important).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ranked {
    pub criterion: String,
    pub attn: Vec<f64>,
    pub act: Vec<f64>,
}
