//! In-memory datasets: images stored row-major `[N, C, H, W]`, texts as strings.

/// Pixel storage: raw bytes as read from disk, or floats after a transformation.
#[derive(Debug, Clone, PartialEq)]
pub enum Pixels {
    /// Bytes in 0..=255; read as `value / 255`.
    U8(Vec<u8>),
    /// Floats, used as they are (corrupted images lie in [0, 1]).
    F32(Vec<f32>),
}

impl Pixels {
    fn len(&self) -> usize {
        match self {
            Pixels::U8(v) => v.len(),
            Pixels::F32(v) => v.len(),
        }
    }

    /// Appends `range` of the buffer to `out` as floats in [0, 1] (for U8).
    fn extend_f32(&self, range: std::ops::Range<usize>, out: &mut Vec<f32>) {
        match self {
            Pixels::U8(v) => out.extend(v[range].iter().map(|&b| f32::from(b) / 255.0)),
            Pixels::F32(v) => out.extend_from_slice(&v[range]),
        }
    }
}

/// A labelled image classification dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageDataset {
    /// Name used in reports, e.g. `fashion_mnist_small`.
    pub name: String,
    /// Pixels, row-major `[N, C, H, W]`.
    pub pixels: Pixels,
    /// One label per image, each `< num_classes`.
    pub labels: Vec<u32>,
    /// Image shape `[C, H, W]`.
    pub dims: [usize; 3],
    /// Number of classes.
    pub num_classes: usize,
}

impl ImageDataset {
    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Values per image, `C * H * W`.
    pub fn image_size(&self) -> usize {
        self.dims.iter().product()
    }

    /// The images at `indices`, in that order (repeats allowed). Panics if an index is out of range.
    pub fn subset(&self, indices: &[usize]) -> Self {
        let size = self.image_size();
        let pixels = match &self.pixels {
            Pixels::U8(v) => Pixels::U8(gather(v, indices, size)),
            Pixels::F32(v) => Pixels::F32(gather(v, indices, size)),
        };
        Self {
            name: self.name.clone(),
            pixels,
            labels: indices.iter().map(|&i| self.labels[i]).collect(),
            dims: self.dims,
            num_classes: self.num_classes,
        }
    }

    /// Image `i` as floats `[C, H, W]` (bytes scaled to [0, 1]). Panics if `i` is out of range.
    pub fn image_f32(&self, i: usize) -> Vec<f32> {
        self.batch_f32(&[i])
    }

    /// The images at `indices` as one flat `[B, C, H, W]` float buffer (bytes scaled to [0, 1]).
    /// Panics if an index is out of range.
    pub fn batch_f32(&self, indices: &[usize]) -> Vec<f32> {
        let size = self.image_size();
        let mut out = Vec::with_capacity(indices.len() * size);
        for &i in indices {
            assert!(
                i < self.len(),
                "image index {i} out of range for {} images",
                self.len()
            );
            self.pixels.extend_f32(i * size..(i + 1) * size, &mut out);
        }
        out
    }

    /// The same dataset with float pixels.
    pub fn to_f32(&self) -> Self {
        let mut values = Vec::with_capacity(self.pixels.len());
        self.pixels.extend_f32(0..self.pixels.len(), &mut values);
        Self {
            pixels: Pixels::F32(values),
            ..self.clone_without_pixels()
        }
    }

    /// Number of images per class, indexed by label (length `num_classes`).
    pub fn class_counts(&self) -> Vec<usize> {
        let mut counts = vec![0; self.num_classes];
        for &label in &self.labels {
            counts[label as usize] += 1;
        }
        counts
    }

    /// A copy of everything but the pixels (left empty), for building transformed datasets.
    pub(crate) fn clone_without_pixels(&self) -> Self {
        Self {
            name: self.name.clone(),
            pixels: Pixels::F32(Vec::new()),
            labels: self.labels.clone(),
            dims: self.dims,
            num_classes: self.num_classes,
        }
    }
}

/// A labelled text classification dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct TextDataset {
    /// Name used in reports, e.g. `sentiment_tweets`.
    pub name: String,
    /// One text per example.
    pub texts: Vec<String>,
    /// One label per example, each `< num_classes`.
    pub labels: Vec<u32>,
    /// Number of classes.
    pub num_classes: usize,
}

impl TextDataset {
    /// Number of examples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no examples.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The examples at `indices`, in that order. Panics if an index is out of range.
    pub fn subset(&self, indices: &[usize]) -> Self {
        Self {
            name: self.name.clone(),
            texts: indices.iter().map(|&i| self.texts[i].clone()).collect(),
            labels: indices.iter().map(|&i| self.labels[i]).collect(),
            num_classes: self.num_classes,
        }
    }
}

/// A dataset read from disk with its class names: label `i` is `classes[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WithClasses<T> {
    /// The examples.
    pub set: T,
    /// One name per class, in label order.
    pub classes: Vec<String>,
}

/// A labelled dataset of either modality, for code that only needs names, labels and subsets.
#[derive(Debug, Clone, PartialEq)]
pub enum Dataset {
    Images(ImageDataset),
    Text(TextDataset),
}

impl Dataset {
    pub fn name(&self) -> &str {
        match self {
            Self::Images(d) => &d.name,
            Self::Text(d) => &d.name,
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
            Self::Images(d) => &d.labels,
            Self::Text(d) => &d.labels,
        }
    }

    pub fn num_classes(&self) -> usize {
        match self {
            Self::Images(d) => d.num_classes,
            Self::Text(d) => d.num_classes,
        }
    }

    /// The examples at `indices`, in that order. Panics if an index is out of range.
    pub fn subset(&self, indices: &[usize]) -> Self {
        match self {
            Self::Images(d) => Self::Images(d.subset(indices)),
            Self::Text(d) => Self::Text(d.subset(indices)),
        }
    }
}

fn gather<T: Copy>(values: &[T], indices: &[usize], size: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(indices.len() * size);
    for &i in indices {
        out.extend_from_slice(&values[i * size..(i + 1) * size]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three 1x1x2 images: image i holds bytes [10 i, 10 i + 1].
    fn tiny() -> ImageDataset {
        ImageDataset {
            name: "tiny".into(),
            pixels: Pixels::U8(vec![0, 1, 10, 11, 20, 21]),
            labels: vec![2, 0, 2],
            dims: [1, 1, 2],
            num_classes: 3,
        }
    }

    #[test]
    fn subset_gathers_images_and_labels_in_order() {
        let s = tiny().subset(&[2, 0, 2]);
        assert_eq!(s.pixels, Pixels::U8(vec![20, 21, 0, 1, 20, 21]));
        assert_eq!(s.labels, vec![2, 2, 2]);
        assert_eq!(s.len(), 3);
        assert!(tiny().subset(&[]).is_empty());
    }

    #[test]
    fn float_views_scale_bytes_by_255() {
        let d = tiny();
        assert_eq!(d.image_f32(1), vec![10.0 / 255.0, 11.0 / 255.0]);
        assert_eq!(
            d.batch_f32(&[2, 0]),
            vec![20.0 / 255.0, 21.0 / 255.0, 0.0, 1.0 / 255.0]
        );
        let f = d.to_f32();
        assert_eq!(f.batch_f32(&[0, 1, 2]), d.batch_f32(&[0, 1, 2]));
        assert!(matches!(f.pixels, Pixels::F32(_)));
        assert_eq!(f.labels, d.labels);
        // Float pixels are passed through unscaled.
        assert_eq!(f.to_f32(), f);
    }

    #[test]
    fn class_counts_cover_all_classes() {
        assert_eq!(tiny().class_counts(), vec![1, 0, 2]);
    }

    #[test]
    fn text_subset_keeps_pairs_together() {
        let t = TextDataset {
            name: "t".into(),
            texts: vec!["a".into(), "b".into(), "c".into()],
            labels: vec![0, 1, 0],
            num_classes: 2,
        };
        let s = t.subset(&[1, 2]);
        assert_eq!(s.texts, vec!["b", "c"]);
        assert_eq!(s.labels, vec![1, 0]);
        assert_eq!(s.len(), 2);
        let either = Dataset::Text(t).subset(&[2, 1]);
        assert_eq!(either.labels(), &[0, 1]);
        assert_eq!((either.name(), either.num_classes()), ("t", 2));
        assert_eq!(Dataset::Images(tiny()).subset(&[0]).len(), 1);
    }
}
