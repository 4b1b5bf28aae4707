//! Training for uqformer models: [`fit`] runs AdamW with linear warm-up and cosine decay,
//! optional label smoothing, per-parameter gradient-norm clipping and seeded augmentation
//! (random padded crop, flips), shows a progress line (loss, accuracy, throughput, ETA), stops
//! with a clear error naming the first step whose loss was not finite (losses are read back to
//! the host a window of steps at a time, so a GPU is not stalled every step), and writes a
//! [`Checkpoint`] (Burn records, written atomically, with checksums in its state file) after
//! every epoch, from which a restarted run resumes (given a validation set, each epoch's record
//! also holds the model's loss and accuracy on it, measured in evaluation mode); a damaged checkpoint is set aside and the
//! model trained from scratch.
//!
//! Any `seam::Trainable` model (member logits `[M, B, C]`) can be trained; the Vision Transformer
//! is one, and ensemble methods with trainable members implement it too.

mod adamw;
mod checkpoint;
mod config;
mod error;
mod history;
mod inputs;
pub mod interrupt;
mod loss;
mod params;
mod progress;
mod readings;
mod schedule;
mod trainer;
mod validate;

pub use adamw::FusedAdamW;
pub use checkpoint::{Checkpoint, CheckpointState, Damage, FileCheck, Loaded, TrainTotals};
pub use config::TrainConfig;
pub use error::TrainError;
pub use history::{EpochRecord, History, TRAINING_CSV};
pub use inputs::{Data, DiskData, ImageData, TextData};
pub use loss::{cross_entropy, distillation};
pub use params::trainable_params;
pub use progress::{Progress, epoch_lines};
pub use schedule::cosine_with_warmup;
pub use trainer::{Distill, FitOptions, FitReport, fit, fit_with_report};
