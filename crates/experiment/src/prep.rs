//! How a run's samples become model input: images normalised with the training statistics, or
//! texts tokenised. Kept apart from the data stage so that methods can prepare data they derive
//! without depending on the experiment's schema.

use data::{Dataset, Normalization, WordPiece};
use train::{Data, DiskData, ImageData, TextData};

use crate::error::{ErrorContext, Result};
use crate::eval_set::EvalSet;

/// How a run's samples become model input: images normalised with the training statistics, or
/// texts tokenised.
// One per run, so the size of the tokenizer's variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Prep {
    Pixels(Normalization),
    Tokens {
        tokenizer: WordPiece,
        max_tokens: usize,
    },
}

impl Prep {
    /// `set` ready for batching.
    ///
    /// # Panics
    /// If `set` is of the other modality (the runner prepares each run's sets one way).
    pub fn data<'a>(&'a self, set: &'a Dataset) -> Data<'a> {
        match (self, set) {
            (Self::Pixels(norm), Dataset::Images(set)) => Data::Images(ImageData { set, norm }),
            (
                Self::Tokens {
                    tokenizer,
                    max_tokens,
                },
                Dataset::Text(set),
            ) => Data::Text(TextData {
                set,
                tokenizer,
                max_tokens: *max_tokens,
            }),
            _ => panic!("{}: prepared for the other modality", set.name()),
        }
    }

    /// An evaluation set ready for batching: one in memory as [`Prep::data`], one on disk read
    /// batch by batch and normalised alike.
    ///
    /// # Panics
    /// If `set` is of the other modality.
    pub fn set_data<'a>(&'a self, set: &'a EvalSet) -> Data<'a> {
        match (self, set) {
            (_, EvalSet::Memory(set)) => self.data(set),
            (Self::Pixels(norm), EvalSet::Disk(set)) => Data::Disk(DiskData { set, norm }),
            _ => panic!("{}: prepared for the other modality", set.name()),
        }
    }

    /// Text: the mean tokenised length of `set` (`[CLS]`, `[SEP]` and the cut included),
    /// rounded; 0 for images (on disk or not).
    pub fn mean_tokens(&self, set: &EvalSet) -> Result<usize> {
        let (
            Self::Tokens {
                tokenizer,
                max_tokens,
            },
            EvalSet::Memory(Dataset::Text(texts)),
        ) = (self, set)
        else {
            return Ok(0);
        };
        let mut total = 0;
        for text in &texts.texts {
            total += tokenizer
                .encode(text, *max_tokens)
                .context(&texts.name)?
                .ids
                .len();
        }
        Ok((total as f64 / texts.len().max(1) as f64).round() as usize)
    }
}
