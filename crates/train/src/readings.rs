//! The steps' losses and correct counts, read back to the host a window of steps at a time.
//!
//! Reading a value waits for the device to finish everything queued before it. On the GPU
//! backends a read every step would stall the device once a step and keep the host from
//! preparing the next batch while the device runs this one; on flex, which computes as it is
//! called, the reads cost nothing either way. Reading a window at once changes no computed value.

use std::time::{Duration, Instant};

use burn::tensor::{Int, Tensor};

use crate::error::TrainError;
use crate::progress::Progress;

/// At most this many steps between reads...
const MAX_STEPS: usize = 32;
/// ...and at most this long, so the progress line of a slow model still moves.
const MAX_WAIT: Duration = Duration::from_millis(500);

/// Steps not yet read back: each one's mean loss, correct predictions and batch size.
pub(crate) struct Readings {
    losses: Vec<Tensor<1>>,
    correct: Vec<Tensor<1, Int>>,
    sizes: Vec<usize>,
    /// The step (within its epoch) of the first pending entry.
    first_step: usize,
    last_read: Instant,
}

impl Readings {
    pub fn new() -> Self {
        Self {
            losses: Vec::new(),
            correct: Vec::new(),
            sizes: Vec::new(),
            first_step: 0,
            last_read: Instant::now(),
        }
    }

    /// Keeps step `step`'s loss (off the autodiff graph) and correct count.
    pub fn push(&mut self, step: usize, loss: Tensor<1>, correct: Tensor<1, Int>, size: usize) {
        if self.sizes.is_empty() {
            self.first_step = step;
        }
        self.losses.push(loss);
        self.correct.push(correct);
        self.sizes.push(size);
    }

    /// Whether the window is full or has waited long enough.
    pub fn due(&self) -> bool {
        self.sizes.len() >= MAX_STEPS || self.last_read.elapsed() >= MAX_WAIT
    }

    /// Reads the pending steps back in one transfer each for losses and counts, checks them in
    /// order and records them in `progress`. The first non-finite loss is an error naming its
    /// step; the steps after it ran on, but their parameters are thrown away with the error.
    pub fn read(
        &mut self,
        progress: &mut Progress,
        label: &str,
        epoch: usize,
    ) -> Result<(), TrainError> {
        self.last_read = Instant::now();
        if self.sizes.is_empty() {
            return Ok(());
        }
        let losses = Tensor::cat(std::mem::take(&mut self.losses), 0)
            .into_data()
            .convert::<f32>()
            .try_into_vec::<f32>()
            .expect("converted to f32");
        let correct = Tensor::cat(std::mem::take(&mut self.correct), 0)
            .into_data()
            .convert::<i64>()
            .try_into_vec::<i64>()
            .expect("converted to i64");
        let sizes = std::mem::take(&mut self.sizes);
        for (j, ((loss, correct), size)) in losses.into_iter().zip(correct).zip(sizes).enumerate() {
            let step = self.first_step + j;
            let loss = loss as f64;
            if !loss.is_finite() {
                return Err(TrainError::NonFiniteLoss {
                    label: label.to_string(),
                    epoch,
                    step,
                    loss,
                });
            }
            progress.step(step, loss, correct as usize, size);
        }
        progress.show();
        Ok(())
    }
}
