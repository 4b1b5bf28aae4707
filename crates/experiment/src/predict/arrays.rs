//! What a prediction reads and gives: an input array with the file it came from, and the
//! outputs gathered batch by batch.

use std::path::Path;

use burn::tensor::Tensor;

use crate::error::{ErrorContext as _, Result};

/// An input array, row-major, with the file it was read from (named in errors).
#[derive(Debug, Clone)]
pub struct Input<'a, T> {
    pub path: &'a Path,
    pub shape: Vec<usize>,
    pub values: Vec<T>,
}

/// A checkpoint's outputs `[rows, width]`, row-major, gathered batch by batch.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// What they are ("logits", "pooled features", "logits_per_image").
    pub what: &'static str,
    pub rows: usize,
    pub width: usize,
    pub values: Vec<f32>,
}

impl Outputs {
    /// No outputs yet, of a checkpoint with or without a classifier.
    pub(super) fn new(classifier: bool) -> Self {
        Self {
            what: match classifier {
                true => "logits",
                false => "pooled features",
            },
            rows: 0,
            width: 0,
            values: Vec::new(),
        }
    }

    /// Appends one batch's outputs `[B, width]`.
    pub(super) fn push(&mut self, batch: Tensor<2>) -> Result<()> {
        let [rows, width] = batch.dims();
        let values = batch.into_data().convert::<f32>().try_into_vec::<f32>();
        self.values
            .extend(values.context("reading the outputs back")?);
        (self.rows, self.width) = (self.rows + rows, width);
        Ok(())
    }
}
