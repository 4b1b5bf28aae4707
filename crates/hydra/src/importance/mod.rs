//! The head-importance seam: the [`HeadImportance`] trait, the registry TOML names resolve
//! through, and the helpers strategies share. One file per strategy.

use backbone::{Block, BlockGates, Classifier, Mode};
use burn::tensor::{Bool, Tensor};
use serde::{Deserialize, Serialize};

use crate::calibration::Calibration;
use crate::error::HydraError;

/// Scores `[L][H]`, higher = more important.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeadScores(pub Vec<Vec<f64>>);

impl HeadScores {
    /// Rows of a `[L, H]` tensor.
    pub(crate) fn from_tensor(t: Tensor<2>) -> Self {
        let [_, heads] = t.dims();
        let values = t
            .into_data()
            .convert::<f64>()
            .try_to_vec::<f64>()
            .unwrap_or_default();
        Self(values.chunks(heads.max(1)).map(<[f64]>::to_vec).collect())
    }

    /// The scores min-max scaled to [0, 1] over all heads (all 0 when they are equal).
    pub(crate) fn min_max(&self) -> Self {
        let all = self.0.iter().flatten();
        let lo = all.clone().copied().fold(f64::INFINITY, f64::min);
        let span = all.copied().fold(f64::NEG_INFINITY, f64::max) - lo;
        let scale = |s: f64| if span > 0.0 { (s - lo) / span } else { 0.0 };
        Self(
            self.0
                .iter()
                .map(|row| row.iter().map(|&s| scale(s)).collect())
                .collect(),
        )
    }
}

/// What a strategy may vary on: the run's seed and which member it scores for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScoreContext {
    pub seed: u64,
    pub member: usize,
}

/// A head-importance strategy: maps (model, data) to a score per (block, head).
pub trait HeadImportance: Send + Sync {
    /// The registry name.
    fn name(&self) -> &'static str;

    /// Scores every head of `model` (whose blocks must all have the same number of heads).
    fn scores(
        &self,
        model: &Classifier,
        data: &Calibration,
        ctx: &ScoreContext,
    ) -> Result<HeadScores, HydraError>;

    /// Whether the scores depend on `ctx.member` (so [`crate::plan_members`] scores every
    /// member even without bootstrap); false unless a strategy says otherwise.
    fn varies_by_member(&self) -> bool {
        false
    }
}

/// A registry entry: a strategy parses its own parameters from a TOML table.
#[derive(Debug, Clone, Copy)]
pub struct Strategy {
    pub name: &'static str,
    /// One line for `uqformer list` and error messages.
    pub about: &'static str,
    pub build: fn(&toml::Table) -> Result<Box<dyn HeadImportance>, HydraError>,
}

/// Declares each strategy's module (`<name>.rs`, exporting `STRATEGY`) and lists it in
/// [`STRATEGIES`], in order.
macro_rules! registry {
    ($($module:ident),+ $(,)?) => {
        $(mod $module;)+

        /// Every registered strategy. A new one is a file in `src/importance/` and its module's
        /// name in the `registry!` line.
        pub const STRATEGIES: &[Strategy] = &[$($module::STRATEGY),+];
    };
}

registry!(taylor, circuit, magnitude, random, activation, confidence);

/// Builds the strategy called `name` with its parameters `params`.
pub fn strategy(name: &str, params: &toml::Table) -> Result<Box<dyn HeadImportance>, HydraError> {
    match STRATEGIES.iter().find(|s| s.name == name) {
        Some(s) => (s.build)(params),
        None => Err(HydraError::UnknownStrategy {
            name: name.to_string(),
            valid: STRATEGIES.iter().map(|s| s.name).collect(),
        }),
    }
}

/// A strategy's parameter table, checked against the keys it accepts.
pub(crate) struct Params<'a> {
    strategy: &'static str,
    table: &'a toml::Table,
}

impl<'a> Params<'a> {
    /// Rejects any key not in `valid`.
    pub(crate) fn new(
        strategy: &'static str,
        table: &'a toml::Table,
        valid: &'static [&'static str],
    ) -> Result<Self, HydraError> {
        if let Some(key) = table.keys().find(|k| !valid.contains(&k.as_str())) {
            return Err(HydraError::UnknownParam {
                strategy,
                param: key.clone(),
                valid,
            });
        }
        Ok(Self { strategy, table })
    }

    fn wrong(&self, key: &str, value: &toml::Value, expected: &str) -> HydraError {
        HydraError::invalid(format!("{}.{key}", self.strategy), value, expected)
    }

    /// A positive integer, if present.
    pub(crate) fn positive(&self, key: &str) -> Result<Option<usize>, HydraError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(v @ toml::Value::Integer(i)) => match usize::try_from(*i) {
                Ok(n) if n > 0 => Ok(Some(n)),
                _ => Err(self.wrong(key, v, "a positive integer")),
            },
            Some(v) => Err(self.wrong(key, v, "a positive integer")),
        }
    }

    /// A string, if present.
    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>, HydraError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.wrong(key, v, "a string")),
        }
    }

    /// A non-empty array of strings, if present.
    pub(crate) fn strings(&self, key: &str) -> Result<Option<Vec<&'a str>>, HydraError> {
        let Some(value) = self.table.get(key) else {
            return Ok(None);
        };
        let expected = "a non-empty array of strings";
        let items = value
            .as_array()
            .ok_or_else(|| self.wrong(key, value, expected))?;
        let strings: Option<Vec<&str>> = items.iter().map(toml::Value::as_str).collect();
        match strings {
            Some(s) if !s.is_empty() => Ok(Some(s)),
            _ => Err(self.wrong(key, value, expected)),
        }
    }
}

/// `(L, H)` of a model whose blocks all have H heads (strategies score unpruned models).
pub(crate) fn grid(model: &Classifier) -> Result<(usize, usize), HydraError> {
    let layers = &model.encoder().layer;
    let heads = layers.first().map_or(0, |b| b.attention.n_heads);
    if let Some((l, b)) = layers
        .iter()
        .enumerate()
        .find(|(_, b)| b.attention.n_heads != heads)
    {
        return Err(HydraError::invalid(
            format!("model block {l} heads"),
            b.attention.n_heads,
            format!("{heads} heads, as in block 0 (head importance scores an unpruned model)"),
        ));
    }
    if heads == 0 {
        return Err(HydraError::invalid(
            "model blocks",
            "none",
            "at least one block with heads",
        ));
    }
    Ok((layers.len(), heads))
}

/// Per block and head, the mean over every token of the calibration data that counts (all of
/// an image's, a sequence's unpadded ones) of `stat(block, the block's input, key padding)`, a
/// `[B·T, H]` value per token and head; the blocks run as usual in between. Scores `[L, H]`.
pub(crate) fn token_means(
    model: &Classifier,
    data: &Calibration,
    stat: impl Fn(&Block, Tensor<3>, Option<Tensor<2, Bool>>) -> Tensor<2>,
) -> Result<HeadScores, HydraError> {
    let (layers, heads) = grid(model)?;
    let device = data.check(model)?;
    let mode = Mode::Deterministic;
    let mut sum = Tensor::<2>::zeros([layers, heads], &device);
    let mut tokens_seen = 0.0;
    for (input, _) in &data.batches {
        let key_padding = input.key_padding();
        let mut x = model.embed(input, mode);
        let [b, t, _] = x.dims();
        let real = match &key_padding {
            Some(padding) => padding.clone().bool_not().float().reshape([b * t, 1]),
            None => Tensor::ones([b * t, 1], &device),
        };
        let mut per_block = Vec::with_capacity(layers);
        for block in &model.encoder().layer {
            let values = stat(block, x.clone(), key_padding.clone());
            per_block.push((values * real.clone()).sum_dim(0).reshape([heads]));
            x = block.forward(x, BlockGates::default(), key_padding.clone(), mode);
        }
        tokens_seen += real.sum().into_scalar::<f32>() as f64;
        sum = sum + Tensor::stack(per_block, 0);
    }
    Ok(HeadScores::from_tensor(
        sum.div_scalar(tokens_seen.max(1.0)),
    ))
}

/// What a block's attention reads: its input, normalised first in a pre-norm block.
pub(crate) fn attention_input(block: &Block, x: Tensor<3>) -> Tensor<3> {
    if block.norm_first {
        block.norm1.forward(x)
    } else {
        x
    }
}
