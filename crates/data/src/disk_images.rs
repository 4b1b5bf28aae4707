//! An image set left on disk: an [`ImageIndex`] and the geometry (resize, centre crop) its
//! images get as each batch is read, so that evaluating a folder of any size holds one batch of
//! pixels at a time. A batch comes out as the bytes [`ImageIndex::load`] would give for those
//! images, so that the caller scales and normalises it exactly as an in-memory set.

use crate::dataset::ImageDataset;
use crate::error::{DataError, Result};
use crate::folder::ImageIndex;
use crate::preprocess::Preprocess;

/// Images read from disk batch by batch; the labels are kept in memory (4 bytes an image).
#[derive(Debug, Clone, PartialEq)]
pub struct DiskImages {
    /// Name used in reports.
    pub name: String,
    index: ImageIndex,
    /// Resize and crop only: mean / std are the caller's, as for an in-memory set.
    geometry: Preprocess,
    labels: Vec<u32>,
    dims: [usize; 3],
}

impl DiskImages {
    /// The images of `index` read with `preprocess`'s resize and crop (its mean, std and
    /// rescale are not used). Errors unless every image gets one size (a crop or an exact
    /// resize).
    pub fn new(name: &str, index: ImageIndex, preprocess: &Preprocess) -> Result<Self> {
        let [height, width] = preprocess.output_size().ok_or_else(|| {
            DataError::invalid(format!(
                "reading {} in batches needs one image size: set a crop or an exact resize",
                index.name
            ))
        })?;
        let geometry = Preprocess {
            mean: [0.0; 3],
            std: [1.0; 3],
            rescale: 1.0 / 255.0,
            ..preprocess.clone()
        };
        Ok(Self {
            name: name.to_string(),
            labels: index.labels(),
            index,
            geometry,
            dims: [3, height, width],
        })
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// One label per image.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }

    /// Number of classes (the index's class folders).
    pub fn num_classes(&self) -> usize {
        self.index.num_classes()
    }

    /// Image shape `[3, H, W]` after the geometry.
    pub fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// The images at `indices`, in that order, still on disk. Panics if an index is out of
    /// range.
    pub fn subset(&self, indices: &[usize]) -> Self {
        Self {
            name: self.name.clone(),
            index: self.index.subset(indices),
            geometry: self.geometry.clone(),
            labels: indices.iter().map(|&i| self.labels[i]).collect(),
            dims: self.dims,
        }
    }

    /// Decodes the images at `indices` (in parallel) into an in-memory set of bytes, labels in
    /// the same order. Errors name the file that cannot be read or decoded.
    pub fn read(&self, indices: &[usize]) -> Result<ImageDataset> {
        if let Some(i) = indices.iter().find(|&&i| i >= self.len()) {
            return Err(DataError::invalid(format!(
                "image index {i} out of range for {} images of {}",
                self.len(),
                self.name
            )));
        }
        self.index
            .subset(indices)
            .load(&self.geometry)
            .map(|mut set| {
                set.name = self.name.clone();
                set
            })
    }

    /// Every image in memory (bytes), as [`ImageIndex::load`] gives them.
    pub fn load(&self) -> Result<ImageDataset> {
        let all: Vec<usize> = (0..self.len()).collect();
        self.read(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Interpolation, Resize};

    fn png(path: &std::path::Path, side: u32, seed: u8) {
        let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        let mut encoder = png::Encoder::new(file, side, side);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let pixels: Vec<u8> = (0..side * side * 3)
            .map(|i| (i as u8).wrapping_mul(seed))
            .collect();
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&pixels).unwrap();
    }

    #[test]
    fn batches_read_from_disk_equal_the_whole_set_loaded() {
        let dir = tempfile::tempdir().unwrap();
        for (c, class) in ["a", "b"].iter().enumerate() {
            std::fs::create_dir_all(dir.path().join(class)).unwrap();
            for i in 0..3u8 {
                png(
                    &dir.path().join(class).join(format!("{i}.png")),
                    9,
                    3 + i + 7 * c as u8,
                );
            }
        }
        let index = ImageIndex::open(dir.path(), "set", "all").unwrap();
        // The mean and std must not leak into the bytes: they are the caller's.
        let preprocess = Preprocess {
            resize: Some(Resize::ShortestEdge(6)),
            crop: Some([5, 5]),
            mean: [0.5; 3],
            std: [0.2; 3],
            interpolation: Interpolation::Bicubic,
            rescale: 1.0 / 255.0,
        };
        let whole = index.load(&preprocess).unwrap();
        let disk = DiskImages::new("named", index.clone(), &preprocess).unwrap();
        assert_eq!(
            (disk.len(), disk.dims(), disk.num_classes()),
            (6, [3, 5, 5], 2)
        );
        assert_eq!(disk.labels(), &whole.labels[..]);
        let picked = [4, 0, 4, 2];
        let batch = disk.read(&picked).unwrap();
        assert_eq!(batch.name, "named");
        assert_eq!(
            batch,
            ImageDataset {
                name: "named".into(),
                ..whole.subset(&picked)
            }
        );
        let sub = disk.subset(&[5, 1]);
        assert_eq!(sub.labels(), &[1, 0]);
        assert_eq!(sub.load().unwrap().pixels, whole.subset(&[5, 1]).pixels);
        assert!(
            disk.read(&[6])
                .unwrap_err()
                .to_string()
                .contains("out of range")
        );
        let loose = Preprocess {
            crop: None,
            ..preprocess
        };
        assert!(DiskImages::new("x", index, &loose).is_err());
    }
}
