//! Training for uqformer models: [`fit`] runs AdamW with linear warm-up and cosine decay,
//! optional label smoothing, per-parameter gradient-norm clipping and seeded augmentation
//! (random padded crop, flips), shows a progress line (loss, accuracy, throughput, ETA), stops
//! with a clear error on a non-finite loss, and writes a [`Checkpoint`] (Burn records, written
//! atomically) after every epoch, from which a restarted run resumes.
//!
//! Any [`Trainable`] model (member logits `[M, B, C]`) can be trained; the Vision Transformer
//! is one, and ensemble methods with trainable members implement it too.

mod atomic;
mod checkpoint;
mod config;
mod error;
mod loss;
mod params;
mod progress;
mod schedule;
mod trainer;

pub use atomic::{atomic_write, with_path};
pub use checkpoint::{Checkpoint, CheckpointState, TrainTotals};
pub use config::TrainConfig;
pub use error::TrainError;
pub use loss::{cross_entropy, distillation};
pub use params::trainable_params;
pub use progress::Progress;
pub use schedule::cosine_with_warmup;
pub use trainer::{Data, Distill, FitOptions, ImageData, TextData, Trainable, fit, mix};
