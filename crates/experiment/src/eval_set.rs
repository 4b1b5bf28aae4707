//! An evaluation set (test, OOD): held in memory, or an image folder left on disk and read
//! batch by batch at each pass, so that a folder of any size is evaluated in bounded memory.

use data::{Dataset, DiskImages, ImageDataset};

use crate::error::Result;

/// An evaluation set: in memory, or images read from disk batch by batch.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalSet {
    Memory(Dataset),
    Disk(DiskImages),
}

impl EvalSet {
    pub fn name(&self) -> &str {
        match self {
            Self::Memory(d) => d.name(),
            Self::Disk(d) => &d.name,
        }
    }

    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels().len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels().is_empty()
    }

    /// One label per example.
    pub fn labels(&self) -> &[u32] {
        match self {
            Self::Memory(d) => d.labels(),
            Self::Disk(d) => d.labels(),
        }
    }

    /// Image shape `[C, H, W]`; `None` for texts.
    pub fn image_dims(&self) -> Option<[usize; 3]> {
        match self {
            Self::Memory(Dataset::Images(d)) => Some(d.dims),
            Self::Memory(Dataset::Text(_)) => None,
            Self::Disk(d) => Some(d.dims()),
        }
    }

    /// The examples at `indices`, in that order (a set on disk stays there). Panics if an index
    /// is out of range.
    pub fn subset(&self, indices: &[usize]) -> Self {
        match self {
            Self::Memory(d) => Self::Memory(d.subset(indices)),
            Self::Disk(d) => Self::Disk(d.subset(indices)),
        }
    }

    /// The images in memory (a set on disk read whole), for what needs every pixel at once
    /// (the shifted copies of the test set); `None` for texts.
    pub fn images(&self) -> Result<Option<ImageDataset>> {
        Ok(match self {
            Self::Memory(Dataset::Images(d)) => Some(d.clone()),
            Self::Memory(Dataset::Text(_)) => None,
            Self::Disk(d) => Some(d.load()?),
        })
    }
}
