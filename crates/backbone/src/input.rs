//! What a classifier reads: a batch of images or of token sequences.

use burn::tensor::{Bool, Device, Int, Tensor};

use crate::attention::padding_mask;

/// One batch of model input. Every model in uqformer takes an `Input`, so one evaluation and
/// training path serves images and text.
// Both variants are tensor handles; boxing the larger one would only add an indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Input {
    /// Normalised images `[B, C, H, W]`.
    Images(Tensor<4>),
    /// Token ids `[B, T]` and the attention mask `[B, T]` (1 = token, 0 = padding).
    Tokens {
        ids: Tensor<2, Int>,
        mask: Tensor<2, Int>,
    },
}

/// What an [`Input`] holds, and so what a model reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    Images,
    Tokens,
}

impl std::fmt::Display for InputKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Images => "images",
            Self::Tokens => "token sequences",
        })
    }
}

impl From<Tensor<4>> for Input {
    fn from(images: Tensor<4>) -> Self {
        Self::Images(images)
    }
}

impl Input {
    /// Samples in the batch.
    pub fn batch_size(&self) -> usize {
        match self {
            Self::Images(x) => x.dims()[0],
            Self::Tokens { ids, .. } => ids.dims()[0],
        }
    }

    pub fn kind(&self) -> InputKind {
        match self {
            Self::Images(_) => InputKind::Images,
            Self::Tokens { .. } => InputKind::Tokens,
        }
    }

    pub fn device(&self) -> Device {
        match self {
            Self::Images(x) => x.device(),
            Self::Tokens { ids, .. } => ids.device(),
        }
    }

    /// The images.
    ///
    /// # Panics
    /// For token input: a model built for images was given text (the experiment runner refuses
    /// such a pairing before it runs).
    pub fn images(self) -> Tensor<4> {
        match self {
            Self::Images(x) => x,
            Self::Tokens { .. } => panic!("this model takes images, not token sequences"),
        }
    }

    /// The key-padding mask `[B, T]` (true = padding) of token input; `None` for images.
    pub fn key_padding(&self) -> Option<Tensor<2, Bool>> {
        match self {
            Self::Images(_) => None,
            Self::Tokens { mask, .. } => Some(padding_mask(mask.clone())),
        }
    }

    /// The same input off the autodiff graph (a constant, e.g. for a frozen teacher).
    pub fn inner(self) -> Self {
        self.map(Tensor::inner, Tensor::inner)
    }

    /// Samples `start..start + len`.
    pub fn narrow(self, start: usize, len: usize) -> Self {
        self.map(|x| x.narrow(0, start, len), |t| t.narrow(0, start, len))
    }

    /// The batch repeated `times` times, copy-major: rows `k·B..(k+1)·B` are copy k.
    pub fn repeat(self, times: usize) -> Self {
        self.map(|x| x.repeat_dim(0, times), |t| t.repeat_dim(0, times))
    }

    /// The samples at `indices` (repeats allowed).
    pub fn select(self, indices: Tensor<1, Int>) -> Self {
        self.map(
            |x| x.select(0, indices.clone()),
            |t| t.select(0, indices.clone()),
        )
    }

    /// At least `n` samples by repeating the batch, then the first `n` (cost probes).
    pub fn resized(self, n: usize) -> Self {
        let b = self.batch_size();
        self.repeat(n.div_ceil(b)).narrow(0, n)
    }

    fn map(
        self,
        images: impl Fn(Tensor<4>) -> Tensor<4>,
        tokens: impl Fn(Tensor<2, Int>) -> Tensor<2, Int>,
    ) -> Self {
        match self {
            Self::Images(x) => Self::Images(images(x)),
            Self::Tokens { ids, mask } => Self::Tokens {
                ids: tokens(ids),
                mask: tokens(mask),
            },
        }
    }
}
