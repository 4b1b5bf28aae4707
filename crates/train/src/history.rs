//! How a training came about, kept in its checkpoint's state: resumes, recoveries and every
//! epoch's record, and `training.csv`, the epochs as a table.

use serde::{Deserialize, Serialize};

/// How a checkpoint came to be, over every session that trained it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// The epochs from which interrupted trainings were resumed, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed_from: Vec<usize>,
    /// Damaged files found before this checkpoint was trained afresh, where they were set aside.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recovered: Vec<String>,
    /// Every epoch trained so far, in order (a resumed training keeps the earlier ones).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub epochs: Vec<EpochRecord>,
}

/// One training epoch: its mean loss and accuracy over the training batches, its wall time
/// (training alone), and the model's loss and accuracy on the validation set after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EpochRecord {
    /// 1-based.
    pub epoch: usize,
    pub loss: f64,
    pub accuracy: f64,
    pub seconds: f64,
    /// Mean cross-entropy (no label smoothing) on the validation set, in evaluation mode;
    /// absent when the training had no validation set, as in checkpoints written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub val_loss: Option<f64>,
    /// Accuracy on the validation set, as `val_loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub val_accuracy: Option<f64>,
}

/// The checkpoint folder's per-epoch log, for reading beside `state.json`.
pub const TRAINING_CSV: &str = "training.csv";

impl History {
    /// `training.csv`: a header, then one row per epoch; the validation columns are empty for
    /// an epoch without validation.
    pub fn training_csv(&self) -> String {
        let cell = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.6}"));
        let rows = self.epochs.iter().map(|e| {
            format!(
                "{},{:.6},{:.6},{:.3},{},{}\n",
                e.epoch,
                e.loss,
                e.accuracy,
                e.seconds,
                cell(e.val_loss),
                cell(e.val_accuracy)
            )
        });
        std::iter::once("epoch,loss,accuracy,seconds,val_loss,val_accuracy\n".to_string())
            .chain(rows)
            .collect()
    }
}
