use backbone::Classifier;
use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::{Device, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::adapters::{Adapters, BlockAdapters, LowRank, MemberHeads};
use crate::error::LoraError;
use crate::model::LoraEnsemble;

/// How each member's classifier starts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeadInit {
    /// A fresh classifier per member, seeded (uniform ±1/√D, as PyTorch's `nn.Linear`).
    #[default]
    Random,
    /// Every member starts from the backbone's classifier.
    Copy,
}

/// Configuration of a [`LoraEnsemble`]; defaults follow the LoRA-Ensemble paper and its official code.
/// Read from a table, `members` is required, unknown keys are errors, and the two fields the
/// caller sets from its data and memory (`text_tokens`, `eval_rows`) are neither read nor
/// written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoraConfig {
    /// Members N.
    pub members: usize,
    /// Adapter rank r (8).
    #[serde(default = "default_rank")]
    pub rank: usize,
    /// Adapter scale s in `W0 + s · A_n B_n` (1).
    #[serde(default = "default_scale")]
    pub scale: f64,
    /// Gain of the Xavier-uniform draw of every A_n (10; B_n starts at 0).
    #[serde(default = "default_init_gain")]
    pub init_gain: f64,
    /// How the member classifiers start.
    #[serde(default)]
    pub head_init: HeadInit,
    /// Text backbones: the sequence length (in tokens, `[CLS]` and `[SEP]` included) at which
    /// FLOPs per sample are counted, e.g. the mean tokenised length of the test set (128).
    /// Unused for a ViT, whose token count is fixed by its shapes.
    #[serde(skip, default = "default_text_tokens")]
    pub text_tokens: usize,
    /// Evaluation runs members in groups of at most this many rows (members × samples, at
    /// least one member per group): memory of one such pass instead of N members' at once,
    /// while a small batch still runs many members together (256).
    #[serde(skip, default = "default_eval_rows")]
    pub eval_rows: usize,
}

fn default_rank() -> usize {
    8
}
fn default_scale() -> f64 {
    1.0
}
fn default_init_gain() -> f64 {
    10.0
}
fn default_text_tokens() -> usize {
    128
}
fn default_eval_rows() -> usize {
    256
}

impl LoraConfig {
    /// N members, every other field at its default.
    pub fn new(members: usize) -> Self {
        Self {
            members,
            rank: default_rank(),
            scale: default_scale(),
            init_gain: default_init_gain(),
            head_init: HeadInit::default(),
            text_tokens: default_text_tokens(),
            eval_rows: default_eval_rows(),
        }
    }

    /// Checks every field, naming an invalid one.
    pub fn check(&self) -> Result<(), LoraError> {
        if self.members == 0 {
            return Err(LoraError::invalid(
                "LoraConfig.members",
                0,
                "at least 1 member",
            ));
        }
        if self.rank == 0 {
            return Err(LoraError::invalid(
                "LoraConfig.rank",
                0,
                "a rank of at least 1",
            ));
        }
        if self.eval_rows == 0 {
            return Err(LoraError::invalid(
                "LoraConfig.eval_rows",
                0,
                "at least 1 row",
            ));
        }
        if self.text_tokens == 0 {
            return Err(LoraError::invalid(
                "LoraConfig.text_tokens",
                0,
                "at least 1 token",
            ));
        }
        // A zero scale or gain leaves B_n without gradient forever (∂L/∂B_n ∝ s · A_n).
        for (field, value) in [
            ("LoraConfig.scale", self.scale),
            ("LoraConfig.init_gain", self.init_gain),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(LoraError::invalid(field, value, "a finite number > 0"));
            }
        }
        Ok(())
    }

    /// Wraps `backbone` (a ViT or BERT classifier, frozen: its parameters stop requiring
    /// gradients) with N members' adapters on every block's Q, K, V and output projections and
    /// N classifiers, drawn from `seed`. The adapters live on the backbone's device.
    pub fn init(&self, backbone: Classifier, seed: u64) -> Result<LoraEnsemble, LoraError> {
        self.check()?;
        let head = backbone.head();
        let device = head.weight.lazy_device();
        let mut rng = StdRng::seed_from_u64(seed);
        let blocks = backbone
            .encoder()
            .layer
            .iter()
            .map(|block| {
                let attention = &block.attention;
                let mut adapter = |base: &Linear| self.low_rank(base, &mut rng, &device);
                BlockAdapters {
                    query: adapter(&attention.query),
                    key: adapter(&attention.key),
                    value: adapter(&attention.value),
                    output: adapter(&attention.output),
                }
            })
            .collect();
        let heads = match self.head_init {
            HeadInit::Random => self.random_heads(head, &mut rng, &device),
            HeadInit::Copy => self.copied_heads(head, &device),
        };
        Ok(LoraEnsemble {
            backbone: backbone.no_grad(),
            adapters: Adapters { blocks, heads },
            scale: self.scale,
            text_tokens: self.text_tokens,
            eval_rows: self.eval_rows,
        })
    }

    /// A_n ~ Xavier-uniform(gain) over `[D_in, r]` for each member, B_n = 0.
    fn low_rank(&self, base: &Linear, rng: &mut StdRng, device: &Device) -> LowRank {
        let [d_in, d_out] = base.weight.lazy_shape().dims();
        let (n, r) = (self.members, self.rank);
        let bound = self.init_gain * (6.0 / (d_in + r) as f64).sqrt();
        LowRank {
            a: Param::from_tensor(uniform([n, d_in, r], bound, rng, device)),
            b: Param::from_tensor(Tensor::zeros([n, r, d_out], device)),
        }
    }

    fn random_heads(&self, base: &Linear, rng: &mut StdRng, device: &Device) -> MemberHeads {
        let [d, c] = base.weight.lazy_shape().dims();
        let bound = 1.0 / (d as f64).sqrt();
        MemberHeads {
            weight: Param::from_tensor(uniform([self.members, d, c], bound, rng, device)),
            bias: Param::from_tensor(uniform([self.members, c], bound, rng, device)),
        }
    }

    fn copied_heads(&self, base: &Linear, device: &Device) -> MemberHeads {
        let n = self.members;
        let [_, c] = base.weight.lazy_shape().dims();
        // Through host data: the copies must be new leaves, not views of the frozen weight.
        let weight = Tensor::<2>::from_data(base.weight.val().into_data(), device);
        let bias = match &base.bias {
            Some(b) => Tensor::<1>::from_data(b.val().into_data(), device),
            None => Tensor::zeros([c], device),
        };
        MemberHeads {
            weight: Param::from_tensor(weight.unsqueeze_dim::<3>(0).repeat_dim(0, n)),
            bias: Param::from_tensor(bias.unsqueeze_dim::<2>(0).repeat_dim(0, n)),
        }
    }
}

/// A tensor of the given shape, uniform on `[-bound, bound)`, drawn from `rng`.
fn uniform<const D: usize>(
    shape: [usize; D],
    bound: f64,
    rng: &mut StdRng,
    device: &Device,
) -> Tensor<D> {
    let len = shape.iter().product();
    let values: Vec<f32> = (0..len)
        .map(|_| (bound * (2.0 * rng.random::<f64>() - 1.0)) as f32)
        .collect();
    Tensor::from_data(TensorData::new(values, shape), device)
}
