//! The prunable units of a transformer encoder, and how many of each a model has per block.

use std::fmt;

use backbone::{Classifier, Gates};
use burn::tensor::Tensor;
use registry::{Entry, Registry};
use serde::{Deserialize, Serialize};

/// A kind of unit that pruning can remove. Scores, plans and masks hold one value per unit,
/// `[block][unit within the block]`: H per block for heads, the MLP's hidden width for neurons,
/// one per block for the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum UnitKind {
    /// One attention head: its Q/K/V columns and output-projection rows.
    Head,
    /// A block's whole attention branch (its norm kept in a post-norm block).
    Attention,
    /// A block's whole MLP branch.
    Mlp,
    /// A block's MLP activation: the MLP becomes one linear map (`fc2∘fc1`, merged by HetDPT).
    Gelu,
    /// One hidden neuron of a block's MLP: a column of `fc1` and a row of `fc2`.
    Neuron,
    /// A whole block: its attention and MLP branches together.
    Block,
}

impl UnitKind {
    /// Every unit kind, by its name in experiment files.
    pub const NAMES: Registry<Self> = Registry::new(
        "unit kind",
        &[
            Entry {
                name: "head",
                about: "one attention head (Q/K/V columns, output rows)",
                item: Self::Head,
            },
            Entry {
                name: "attention",
                about: "a block's attention branch",
                item: Self::Attention,
            },
            Entry {
                name: "mlp",
                about: "a block's MLP branch",
                item: Self::Mlp,
            },
            Entry {
                name: "gelu",
                about: "a block's MLP activation (the MLP becomes one linear map)",
                item: Self::Gelu,
            },
            Entry {
                name: "neuron",
                about: "one hidden neuron of a block's MLP",
                item: Self::Neuron,
            },
            Entry {
                name: "block",
                about: "a whole block (attention and MLP branches)",
                item: Self::Block,
            },
        ],
    );

    /// Every unit kind, in the registry's order.
    pub const ALL: [Self; 6] = Self::NAMES.values();

    /// The name experiment files use.
    pub fn name(self) -> &'static str {
        Self::NAMES.entry_of(self).name
    }

    /// Units of this kind in each block of `model`.
    pub fn per_block(self, model: &Classifier) -> Vec<usize> {
        (model.encoder().layer.iter())
            .map(|block| match self {
                Self::Head => block.attention.n_heads,
                Self::Neuron => block.mlp.fc1.weight.dims()[1],
                Self::Attention | Self::Mlp | Self::Gelu | Self::Block => 1,
            })
            .collect()
    }

    /// Whether removing units of this kind leaves a smaller model (`prune_heads`,
    /// `prune_neurons`, `drop_blocks`) rather than the same model with gates at 0.
    pub fn physical(self) -> bool {
        matches!(self, Self::Head | Self::Neuron | Self::Block)
    }

    /// Gates `values` `[L, U]` on every unit of this kind (for block-level kinds U = 1); a
    /// block is gated through both its branches, by the same value.
    pub fn gates(self, values: Tensor<2>) -> Gates {
        let [layers, _] = values.dims();
        let per_block = || values.clone().reshape([layers]);
        match self {
            Self::Head => Gates {
                heads: Some(values),
                ..Gates::none()
            },
            Self::Neuron => Gates {
                neurons: Some(values),
                ..Gates::none()
            },
            Self::Attention => Gates {
                attn: Some(per_block()),
                ..Gates::none()
            },
            Self::Mlp => Gates {
                mlp: Some(per_block()),
                ..Gates::none()
            },
            Self::Gelu => Gates {
                act: Some(per_block()),
                ..Gates::none()
            },
            Self::Block => Gates {
                attn: Some(per_block()),
                mlp: Some(per_block()),
                ..Gates::none()
            },
        }
    }
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TryFrom<String> for UnitKind {
    type Error = registry::Unknown;

    fn try_from(name: String) -> Result<Self, Self::Error> {
        Ok(Self::NAMES.get(&name)?.item)
    }
}

impl From<UnitKind> for String {
    fn from(kind: UnitKind) -> Self {
        kind.name().into()
    }
}

/// The kinds listed for messages and `uqformer list`: `head, neuron`.
pub fn listed(kinds: &[UnitKind]) -> String {
    kinds
        .iter()
        .map(|k| k.name())
        .collect::<Vec<_>>()
        .join(", ")
}
