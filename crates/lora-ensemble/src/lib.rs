//! LoRA-Ensemble: a frozen pretrained encoder classifier
//! ([`backbone::Classifier`]: a Vision Transformer on images or a BERT classifier on token
//! sequences) shared by N members, each with its own low-rank adapters and its own classifier.
//!
//! - [`LoraConfig`] (N, rank r = 8, scale s = 1, `init_gain` = 10, [`HeadInit`], `text_tokens`
//!   for text FLOPs) wraps a backbone into a [`LoraEnsemble`]: every block's Q, K, V and output
//!   projection becomes `y = x W0 + b0 + s · (x A_n) B_n` for member n, with A_n `[D_in, r]`
//!   drawn Xavier-uniform with that gain from the seed and B_n `[r, D_out]` = 0, so at
//!   initialisation every member computes the backbone's features. The backbone's parameters
//!   stop requiring gradients, so an optimiser never touches them (weight decay included).
//! - Training: one vectorised pass ([`LoraEnsemble::forward`]): the input
//!   ([`backbone::Input`]) is repeated N times (with its key-padding mask for text), W0 is
//!   applied once to the stacked `[N, B·T, D]` input and the adapter path is one batched
//!   matmul over members (`[N, B·T, D] x [N, D, r] x [N, r, D']`); the member classifiers are
//!   one batched matmul too. Features are read out as the backbone does (ViT: class token
//!   after the final norm; BERT: masked mean pooling).
//! - Evaluation ([`LoraEnsemble::forward_merged`], behind `member_logits`): each member's
//!   `W0 + s · A_n B_n` merged into one weight per projection, the frozen embedding computed
//!   once, members in groups of at most `eval_rows` rows so memory stays bounded. Both paths
//!   equal running each member as its own model with the merged weights.
//! - [`LoraEnsemble`] implements [`seam::EnsembleModel`] (member logits `[N, B, C]`) and
//!   [`seam::Trainable`] (dropout on), so `train::fit` trains it.
//! - [`LoraEnsemble::save_adapters`] / [`LoraEnsemble::load_adapters`] store only the adapters
//!   and member classifiers, beside a backbone checkpoint.
//!
//! Reference recipe (official code, prs-eth/LoRA-Ensemble): AdamW with learning rate 1e-4 and
//! no weight decay, cosine schedule with warm-up, gradient clipping at 1.0; the experiment
//! runner passes it as a `train::TrainConfig`.

mod adapters;
mod config;
mod error;
mod model;
mod store;

pub use adapters::{Adapters, BlockAdapters, LowRank, MemberHeads};
pub use config::{HeadInit, LoraConfig};
pub use error::LoraError;
pub use model::LoraEnsemble;
