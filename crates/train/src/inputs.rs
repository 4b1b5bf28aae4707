//! Training data of either modality, batched into model inputs (normalised, augmented images;
//! tokenised texts) with their labels.

use backbone::Input;
use burn::tensor::{Device, Int, Tensor, TensorData};
use data::{
    AugmentConfig, DiskImages, ImageDataset, Normalization, TextDataset, WordPiece, augment,
};
use rand::rngs::StdRng;

use crate::error::TrainError;

/// Images and the normalisation applied to every batch.
#[derive(Debug, Clone, Copy)]
pub struct ImageData<'a> {
    pub set: &'a ImageDataset,
    pub norm: &'a Normalization,
}

impl ImageData<'_> {
    /// The normalised batch `[B, C, H, W]` for `indices`, augmented when `augment` is given.
    pub fn batch(
        &self,
        indices: &[usize],
        augment_with: Option<(&AugmentConfig, &mut StdRng)>,
        device: &Device,
    ) -> Result<Tensor<4>, TrainError> {
        let [c, h, w] = self.set.dims;
        let mut x = self.set.batch_f32(indices);
        if let Some((config, rng)) = augment_with {
            for image in x.chunks_exact_mut(c * h * w) {
                augment(image, self.set.dims, config, rng)
                    .map_err(|e| TrainError::data(&self.set.name, e))?;
            }
        }
        self.norm
            .apply(&mut x, c, h * w)
            .map_err(|e| TrainError::data(&self.set.name, e))?;
        Ok(Tensor::from_data(
            TensorData::new(x, [indices.len(), c, h, w]),
            device,
        ))
    }

    pub fn labels(&self, indices: &[usize], device: &Device) -> Tensor<1, Int> {
        labels(&self.set.labels, indices, device)
    }
}

/// Images left on disk, each batch decoded when asked for, and the normalisation applied to it.
#[derive(Debug, Clone, Copy)]
pub struct DiskData<'a> {
    pub set: &'a DiskImages,
    pub norm: &'a Normalization,
}

impl DiskData<'_> {
    /// The batch for `indices`: the images decoded into bytes, then scaled, augmented and
    /// normalised by [`ImageData::batch`], so that it equals the batch of the same images held
    /// in memory.
    pub fn batch(
        &self,
        indices: &[usize],
        augment_with: Option<(&AugmentConfig, &mut StdRng)>,
        device: &Device,
    ) -> Result<Tensor<4>, TrainError> {
        let set = (self.set.read(indices)).map_err(|source| TrainError::Data {
            set: self.set.name.clone(),
            source,
        })?;
        let all: Vec<usize> = (0..indices.len()).collect();
        let norm = self.norm;
        ImageData { set: &set, norm }.batch(&all, augment_with, device)
    }
}

/// Texts and the tokenizer that turns every batch into ids and a mask.
#[derive(Debug, Clone, Copy)]
pub struct TextData<'a> {
    pub set: &'a TextDataset,
    pub tokenizer: &'a WordPiece,
    /// Longest sequence, `[CLS]` and `[SEP]` included; longer texts are cut.
    pub max_tokens: usize,
}

impl TextData<'_> {
    /// Ids and mask `[B, T]` for `indices`, padded to the longest text of the batch.
    pub fn batch(&self, indices: &[usize], device: &Device) -> Result<Input, TrainError> {
        let texts: Vec<&str> = indices
            .iter()
            .map(|&i| self.set.texts[i].as_str())
            .collect();
        let encoded = (self.tokenizer.encode_batch(&texts, self.max_tokens))
            .map_err(|e| TrainError::data(&self.set.name, e))?;
        let tokens = encoded.first().map_or(0, |e| e.ids.len());
        let tensor = |rows: Vec<i64>| {
            Tensor::<2, Int>::from_data(TensorData::new(rows, [indices.len(), tokens]), device)
        };
        let ids = encoded.iter().flat_map(|e| e.ids.iter().map(|&i| i as i64));
        let mask = encoded
            .iter()
            .flat_map(|e| e.attention_mask.iter().map(|&m| m as i64));
        Ok(Input::Tokens {
            ids: tensor(ids.collect()),
            mask: tensor(mask.collect()),
        })
    }
}

/// Labelled training or evaluation data of either modality, batched into [`Input`]s.
#[derive(Debug, Clone, Copy)]
pub enum Data<'a> {
    Images(ImageData<'a>),
    /// Images read from disk batch by batch (evaluation sets too large to hold).
    Disk(DiskData<'a>),
    Text(TextData<'a>),
}

impl<'a> From<ImageData<'a>> for Data<'a> {
    fn from(d: ImageData<'a>) -> Self {
        Self::Images(d)
    }
}

impl<'a> From<TextData<'a>> for Data<'a> {
    fn from(d: TextData<'a>) -> Self {
        Self::Text(d)
    }
}

impl Data<'_> {
    pub fn name(&self) -> &str {
        match self {
            Self::Images(d) => &d.set.name,
            Self::Disk(d) => &d.set.name,
            Self::Text(d) => &d.set.name,
        }
    }

    pub fn len(&self) -> usize {
        self.all_labels().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every sample's label.
    pub fn all_labels(&self) -> &[u32] {
        match self {
            Self::Images(d) => &d.set.labels,
            Self::Disk(d) => d.set.labels(),
            Self::Text(d) => &d.set.labels,
        }
    }

    /// The input for `indices`; images are augmented when `augment` is given (texts never).
    pub fn batch(
        &self,
        indices: &[usize],
        augment_with: Option<(&AugmentConfig, &mut StdRng)>,
        device: &Device,
    ) -> Result<Input, TrainError> {
        match self {
            Self::Images(d) => d.batch(indices, augment_with, device).map(Input::Images),
            Self::Disk(d) => d.batch(indices, augment_with, device).map(Input::Images),
            Self::Text(d) => d.batch(indices, device),
        }
    }

    pub fn labels(&self, indices: &[usize], device: &Device) -> Tensor<1, Int> {
        labels(self.all_labels(), indices, device)
    }
}

fn labels(all: &[u32], indices: &[usize], device: &Device) -> Tensor<1, Int> {
    let labels: Vec<i64> = indices.iter().map(|&i| all[i] as i64).collect();
    Tensor::from_data(TensorData::new(labels, [indices.len()]), device)
}
