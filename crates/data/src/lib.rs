//! Datasets for uqformer, in pure Rust: readers, splits, batching, augmentation and
//! corruptions. Pixels come out as flat `f32` buffers `[B, C, H, W]`, ready to become tensors.
//!
//! - Containers: [`ImageDataset`] (pixels [`Pixels::U8`] or [`Pixels::F32`], row-major
//!   `[N, C, H, W]`; `subset`, `image_f32`, `batch_f32` with bytes scaled to [0, 1], `to_f32`,
//!   `class_counts`), [`TextDataset`], and [`Dataset`] holding either.
//! - Readers (raw or gzip, detected by content; every error names the file):
//!   [`read_idx_images`], [`read_idx_labels`], [`load_idx_pair`] and the writers
//!   [`write_idx_images`], [`write_idx_labels`]; [`load_cifar`] for CIFAR-10/100 binaries;
//!   [`load_vader_tsv`] for the VADER sentiment ground truth.
//! - On disk, named by path:
//!   - image folders `ROOT/{train,val,test}/<class>/<image>` or `ROOT/<class>/<image>` (JPEG,
//!     PNG): [`ImageFolder::open`] indexes them into [`ImageIndex`]es (classes sorted by name,
//!     as torchvision's `ImageFolder`; splits must share their class folders), read by
//!     [`ImageIndex::stream`] / [`ImageIndex::stream_batches`] ([`ImageStream`] of
//!     [`ImageBatch`]: `[B, 3, H, W]` floats, decoded in parallel two batches ahead, memory
//!     O(batch)), [`ImageIndex::read_batch`], or [`ImageIndex::load`] (a small set whole, as an
//!     [`ImageDataset`] of bytes); [`DiskImages`] keeps a set on disk and reads any batch of it
//!     as the bytes `load` would give (evaluation sets of any size);
//!   - [`Preprocess`]: a checkpoint's preprocessing (resize, centre crop, mean / std,
//!     [`Interpolation`]) read from its `preprocessor_config.json`
//!     ([`Preprocess::from_hf_config`]), resampled as `transformers`' Pillow path does, and
//!     overridden field by field ([`PreprocessOverrides`]);
//!   - CIFAR-10/100 as their authors distribute them: [`load_cifar_dir`] on
//!     `cifar-10-batches-bin/` or `cifar-100-binary/`, with the class names;
//!   - text sets from `.csv`, `.tsv` or `.jsonl` with caller-named [`TextColumns`]:
//!     [`load_text_table`] (integer labels or class names).
//!
//!   These readers return [`WithClasses`]: the set and its class names.
//! - [`Catalog`]: named datasets under the repository's `datasets/` folder
//!   ([`DATASETS`], [`Catalog::load_images`], [`Catalog::load_image_split`],
//!   [`Catalog::load_text`]).
//! - Splits: [`train_val_split`] (plain or stratified) and [`stratified_subset`].
//! - Training input: [`Normalization`] (per-channel mean/std), [`BatchPlan`] (seeded per-epoch
//!   shuffling) and [`augment`] (random padded crop, optional horizontal flip); [`resize`]
//!   (bilinear, grey replicated to RGB) for pretrained backbones at their own resolution.
//! - Shift tests: [`corrupt`] with a [`Corruption`] at severity 1..=5 (CIFAR-10-C style).
//! - Text: [`WordPiece`], BERT's uncased WordPiece tokenizer ([`Encoding`]: ids and mask),
//!   matching Hugging Face `tokenizers` on BERT's `tokenizer.json`; [`ClipBpe`], CLIP's
//!   byte-level BPE tokenizer (from `vocab.json` and `merges.txt`, or a `tokenizer.json`),
//!   matching transformers' `CLIPTokenizer`: `<|startoftext|> ... <|endoftext|>` cut to
//!   [`CLIP_CONTEXT_LENGTH`], and padded batches ([`ClipBatch`]) with each row's pooling position.
//!
//! - Utilities: [`mix`] (seeds for independent random streams), [`atomic_write`]
//!   (crash-safe file replacement) and [`error_chain`] (an error and its sources in one line),
//!   used by every crate above.
//!
//! Every random choice is drawn from an explicit seed. Errors are [`DataError`] values.

mod atomic;
mod batch;
mod catalog;
mod cifar;
mod clip_bpe;
mod corrupt;
mod dataset;
mod decode;
mod disk_images;
mod error;
mod file;
mod folder;
mod idx;
mod noise;
mod normalize;
mod preprocess;
mod resample;
mod resize;
mod seed;
mod sentiment;
mod specials;
mod split;
mod stream;
mod table;
mod table_sizes;
mod wordpiece;

pub use atomic::{atomic_write, with_path};
pub use batch::{AugmentConfig, BatchPlan, Batches, augment};
pub use catalog::{Catalog, DATASETS, DatasetInfo, ImageSplits, Modality, Source, Split};
pub use cifar::{CifarKind, CifarSplit, load_cifar, load_cifar_dir};
pub use clip_bpe::{CLIP_CONTEXT_LENGTH, ClipBatch, ClipBpe};
pub use corrupt::{Corruption, corrupt};
pub use dataset::{Dataset, ImageDataset, Pixels, TextDataset, WithClasses};
pub use disk_images::DiskImages;
pub use error::{Cause, DataError, Result, error_chain};
pub use folder::{IMAGE_EXTENSIONS, ImageFolder, ImageIndex, ImageItem, SPLIT_FOLDERS};
pub use idx::{
    load_idx_pair, read_idx_images, read_idx_labels, write_idx_images, write_idx_labels,
};
pub use normalize::Normalization;
pub use preprocess::{Preprocess, PreprocessOverrides, Resize};
pub use resample::Interpolation;
pub use resize::resize;
pub use seed::mix;
pub use sentiment::{NeutralRows, load_vader_tsv};
pub use split::{SubsetSize, stratified_subset, train_val_split};
pub use stream::{ImageBatch, ImageStream};
pub use table::{TextColumns, load_text_table};
pub use wordpiece::{Encoding, WordPiece};
