//! Reading an [`ImageIndex`]'s images: decoded and preprocessed in parallel (rayon) batch by
//! batch, streamed by a prefetch thread through a bounded channel so that memory stays a few
//! batches whatever the size of the tree, or materialised whole into an [`ImageDataset`].

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use rayon::prelude::*;

use crate::dataset::{ImageDataset, Pixels};
use crate::decode::read_rgb;
use crate::error::{DataError, Result};
use crate::folder::{ImageIndex, ImageItem};
use crate::preprocess::Preprocess;
use crate::resample::Bytes;

/// Batches decoded ahead of the one in use: two, so decoding overlaps the consumer's work.
const PREFETCH: usize = 2;

/// Images decoded together when materialising a whole index.
const LOAD_CHUNK: usize = 256;

/// A batch of preprocessed images.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageBatch {
    /// Row-major `[B, 3, H, W]` floats, scaled and normalised.
    pub pixels: Vec<f32>,
    /// One label per image.
    pub labels: Vec<u32>,
    /// The images' positions in the index.
    pub indices: Vec<usize>,
    /// Image shape `[3, H, W]`.
    pub dims: [usize; 3],
}

impl ImageIndex {
    /// Decodes and preprocesses the images at `indices` in parallel into one batch. Errors
    /// name the file: unreadable, not an image, or a size other than the batch's first image
    /// (a preprocessing without crop or exact resize keeps each image's own size).
    pub fn read_batch(&self, preprocess: &Preprocess, indices: &[usize]) -> Result<ImageBatch> {
        check_indices(indices, self.len())?;
        read_batch(&self.items, preprocess, indices.to_vec())
    }

    /// Streams every image in index order, `batch_size` at a time (the last batch may be
    /// smaller). A background thread decodes up to two batches ahead.
    pub fn stream(&self, preprocess: &Preprocess, batch_size: usize) -> Result<ImageStream> {
        if batch_size == 0 {
            return Err(DataError::invalid("batch size must be positive, got 0"));
        }
        let all: Vec<usize> = (0..self.len()).collect();
        let batches = all.chunks(batch_size).map(<[usize]>::to_vec).collect();
        self.stream_batches(preprocess, batches)
    }

    /// Streams the given batches of index positions in order (e.g. a shuffled
    /// [`BatchPlan`](crate::BatchPlan) epoch), decoding up to two batches ahead.
    pub fn stream_batches(
        &self,
        preprocess: &Preprocess,
        batches: Vec<Vec<usize>>,
    ) -> Result<ImageStream> {
        for batch in &batches {
            check_indices(batch, self.len())?;
        }
        let items: Arc<[ImageItem]> = self.items.clone().into();
        let preprocess = preprocess.clone();
        let (sender, receiver) = sync_channel(PREFETCH);
        let worker = std::thread::spawn(move || prefetch(&items, &preprocess, batches, &sender));
        Ok(ImageStream {
            receiver: Some(receiver),
            worker: Some(worker),
        })
    }

    /// Reads every image into memory as bytes after resize and crop (`[N, 3, H, W]`
    /// [`Pixels::U8`]), for sets small enough to hold: mean / std are left to the caller
    /// ([`Preprocess::normalization`] on [`ImageDataset::batch_f32`]'s [0, 1] values). Errors
    /// unless `preprocess` gives every image one size (a crop or an exact resize).
    pub fn load(&self, preprocess: &Preprocess) -> Result<ImageDataset> {
        let [height, width] = preprocess.output_size().ok_or_else(|| {
            DataError::invalid(format!(
                "loading {} whole needs one image size: set a crop or an exact resize",
                self.name
            ))
        })?;
        let mut pixels = Vec::with_capacity(self.len() * 3 * height * width);
        for chunk in self.items.chunks(LOAD_CHUNK) {
            let images = decode_in_order(chunk.iter().map(|item| &*item.path), preprocess)?;
            for (image, item) in images.iter().zip(chunk) {
                check_size(image, [height, width], &item.path)?;
                for ch in 0..3 {
                    pixels.extend(image.data[ch..].iter().step_by(3));
                }
            }
        }
        Ok(ImageDataset {
            name: self.name.clone(),
            pixels: Pixels::U8(pixels),
            labels: self.labels(),
            dims: [3, height, width],
            num_classes: self.num_classes(),
        })
    }
}

/// Batches of an [`ImageIndex`] decoded ahead on a background thread; yields each batch or the
/// first error, then stops. Dropping it stops the thread.
#[derive(Debug)]
pub struct ImageStream {
    receiver: Option<Receiver<Result<ImageBatch>>>,
    worker: Option<JoinHandle<()>>,
}

impl Iterator for ImageStream {
    type Item = Result<ImageBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.receiver.as_ref()?.recv().ok();
        if matches!(next, None | Some(Err(_))) {
            self.receiver = None;
        }
        next
    }
}

impl Drop for ImageStream {
    fn drop(&mut self) {
        // Closing the channel first makes the worker's next send fail, so it ends.
        self.receiver = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

fn prefetch(
    items: &[ImageItem],
    preprocess: &Preprocess,
    batches: Vec<Vec<usize>>,
    sender: &SyncSender<Result<ImageBatch>>,
) {
    for indices in batches {
        let batch = read_batch(items, preprocess, indices);
        let failed = batch.is_err();
        if sender.send(batch).is_err() || failed {
            return;
        }
    }
}

fn check_indices(indices: &[usize], len: usize) -> Result<()> {
    match indices.iter().find(|&&i| i >= len) {
        Some(i) => Err(DataError::invalid(format!(
            "image index {i} out of range for {len} images"
        ))),
        None => Ok(()),
    }
}

fn read_batch(
    items: &[ImageItem],
    preprocess: &Preprocess,
    indices: Vec<usize>,
) -> Result<ImageBatch> {
    let images = decode_in_order(indices.iter().map(|&i| &*items[i].path), preprocess)?;
    let size = images.first().map_or([0, 0], |b| [b.height, b.width]);
    let mut pixels = Vec::with_capacity(indices.len() * 3 * size[0] * size[1]);
    for (image, &i) in images.iter().zip(&indices) {
        check_size(image, size, &items[i].path)?;
        preprocess.extend_floats(image, &mut pixels);
    }
    Ok(ImageBatch {
        pixels,
        labels: indices.iter().map(|&i| items[i].label).collect(),
        indices,
        dims: [3, size[0], size[1]],
    })
}

fn check_size(image: &Bytes, [height, width]: [usize; 2], path: &Path) -> Result<()> {
    if [image.height, image.width] == [height, width] {
        return Ok(());
    }
    Err(DataError::file(
        path,
        format!(
            "preprocessed to {}x{}, but the batch's images are {height}x{width}: set a crop or \
             an exact resize so that every image gets one size",
            image.height, image.width
        ),
    ))
}

/// Reads, decodes, converts to RGB, resizes and crops.
/// The images at `paths` decoded in parallel; an error is the first failing path's in order, so
/// which file a report names does not depend on the threads' timing.
fn decode_in_order<'a>(
    paths: impl Iterator<Item = &'a Path>,
    preprocess: &Preprocess,
) -> Result<Vec<Bytes>> {
    let paths: Vec<&Path> = paths.collect();
    let decoded: Vec<Result<Bytes>> = (paths.par_iter())
        .map(|path| decode(path, preprocess))
        .collect();
    decoded.into_iter().collect()
}

fn decode(path: &Path, preprocess: &Preprocess) -> Result<Bytes> {
    read_rgb(path).map(|rgb| preprocess.geometry(rgb))
}
