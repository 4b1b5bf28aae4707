//! Named datasets resolved against a data root (the repository's `datasets/` folder).
//!
//! Image sets are IDX pairs `<dir>/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz`; each file
//! may also be stored uncompressed without the `.gz`. Text sets are VADER ground-truth files in
//! `vader/`. Bundled sets are committed under `datasets/bundled/`; fetched sets are brought by
//! `datasets/fetch`.

use std::path::{Path, PathBuf};

use registry::{Entry, Registry};

use crate::dataset::{ImageDataset, TextDataset};
use crate::error::{DataError, Result};
use crate::idx::load_idx_pair;
use crate::sentiment::{NeutralRows, load_vader_tsv};

/// Which part of an image dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// The training split (`train-*` files).
    Train,
    /// The test split (`t10k-*` files).
    Test,
}

/// Where a dataset's files come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Committed in the repository under `datasets/bundled/`.
    Bundled,
    /// Downloaded by `datasets/fetch` into `datasets/<folder>/`.
    Fetched,
}

/// What a dataset holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modality {
    /// Labelled images, loaded with [`Catalog::load_images`] or [`Catalog::load_image_split`].
    Image,
    /// Labelled texts, loaded with [`Catalog::load_text`].
    Text,
}

/// A known dataset: its entry in [`DATASETS`] gives its name and a line on what it is.
#[derive(Debug)]
pub struct DatasetInfo {
    /// Bundled or fetched.
    pub source: Source,
    layout: Layout,
}

impl DatasetInfo {
    /// Images or texts.
    pub fn modality(&self) -> Modality {
        match self.layout {
            Layout::Idx(_) => Modality::Image,
            Layout::Vader(_) => Modality::Text,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Layout {
    Idx(IdxLayout),
    /// The file name under `vader/`.
    Vader(&'static str),
}

#[derive(Debug, Clone, Copy)]
struct IdxLayout {
    dir: &'static str,
    train: TrainSplit,
    classes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TrainSplit {
    Required,
    /// May be absent (a single-split source, used out of distribution).
    Optional,
    Absent,
}

/// A dataset's entry: its name, its line and what it is.
type Known = Entry<DatasetInfo>;

/// Every dataset `[data] dataset` / `ood` can name.
pub const DATASETS: Registry<DatasetInfo> = Registry::new(
    "data set",
    &[
        image(
            "fashion_mnist_small",
            "Fashion-MNIST stratified subset, 10k train / 2k test, 28x28 grey, 10 classes",
            Source::Bundled,
            "bundled/fashion-mnist",
            TrainSplit::Required,
            10,
        ),
        image(
            "mnist_small",
            "MNIST stratified test subset, 2k, 28x28 grey, 10 classes (out-of-distribution set)",
            Source::Bundled,
            "bundled/mnist",
            TrainSplit::Absent,
            10,
        ),
        image(
            "fashion_mnist",
            "Fashion-MNIST, 60k train / 10k test, 28x28 grey, 10 classes",
            Source::Fetched,
            "fashion-mnist",
            TrainSplit::Required,
            10,
        ),
        image(
            "mnist",
            "MNIST handwritten digits, 60k train / 10k test, 28x28 grey, 10 classes",
            Source::Fetched,
            "mnist",
            TrainSplit::Required,
            10,
        ),
        image(
            "animal_mnist",
            "Animal-MNIST silhouettes, 10k, 28x28 grey, 10 animal classes (out-of-distribution set; \
         the source has one split, stored as the test split)",
            Source::Fetched,
            "animal-mnist",
            TrainSplit::Optional,
            10,
        ),
        text(
            "sentiment_movies",
            "VADER movie-review snippets, binary sentiment (sign of the mean rating)",
            "movieReviewSnippets_GroundTruth.txt",
        ),
        text(
            "sentiment_tweets",
            "VADER tweets, binary sentiment (sign of the mean rating)",
            "tweets_GroundTruth.txt",
        ),
        text(
            "sentiment_nyt",
            "VADER New York Times editorial snippets, binary sentiment (sign of the mean rating)",
            "nytEditorialSnippets_GroundTruth.txt",
        ),
        text(
            "sentiment_amazon",
            "VADER Amazon review snippets, binary sentiment (sign of the mean rating)",
            "amazonReviewSnippets_GroundTruth.txt",
        ),
    ],
);

const fn image(
    name: &'static str,
    about: &'static str,
    source: Source,
    dir: &'static str,
    train: TrainSplit,
    classes: usize,
) -> Entry<DatasetInfo> {
    let layout = Layout::Idx(IdxLayout {
        dir,
        train,
        classes,
    });
    Entry {
        name,
        about,
        item: DatasetInfo { source, layout },
    }
}

const fn text(name: &'static str, about: &'static str, file: &'static str) -> Entry<DatasetInfo> {
    let item = DatasetInfo {
        source: Source::Fetched,
        layout: Layout::Vader(file),
    };
    Entry { name, about, item }
}

/// Both splits of an image dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageSplits {
    /// `None` for sets that have no training split (out-of-distribution sets).
    pub train: Option<ImageDataset>,
    /// The test split.
    pub test: ImageDataset,
}

/// Resolves dataset names to files under a data root.
#[derive(Debug, Clone)]
pub struct Catalog {
    root: PathBuf,
}

impl Catalog {
    /// A catalog over `root`, normally the repository's `datasets/` folder.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The training split (when the set has one) and the test split.
    pub fn load_images(&self, name: &str) -> Result<ImageSplits> {
        let (info, layout) = find_images(name)?;
        let train = match layout.train {
            TrainSplit::Absent => None,
            TrainSplit::Required => Some(self.read_split(info, layout, Split::Train)?),
            TrainSplit::Optional => {
                let (images, labels) = split_files(layout.dir, Split::Train);
                if self.existing(&images).is_none() && self.existing(&labels).is_none() {
                    None
                } else {
                    Some(self.read_split(info, layout, Split::Train)?)
                }
            }
        };
        let test = self.read_split(info, layout, Split::Test)?;
        Ok(ImageSplits { train, test })
    }

    /// One split; an error if the set has no such split or its files are missing.
    pub fn load_image_split(&self, name: &str, split: Split) -> Result<ImageDataset> {
        let (info, layout) = find_images(name)?;
        if split == Split::Train && layout.train == TrainSplit::Absent {
            return Err(DataError::invalid(format!(
                "dataset {name} has no training split"
            )));
        }
        self.read_split(info, layout, split)
    }

    /// A text dataset (binary sentiment; neutral rows dropped).
    pub fn load_text(&self, name: &str) -> Result<TextDataset> {
        let info = find(name)?;
        let Layout::Vader(file) = info.item.layout else {
            return Err(wrong_modality(info, Modality::Text));
        };
        let path = self.resolve(info, &format!("vader/{file}"))?;
        load_vader_tsv(&path, name, NeutralRows::Drop)
    }

    fn read_split(&self, info: &Known, layout: IdxLayout, split: Split) -> Result<ImageDataset> {
        let (images, labels) = split_files(layout.dir, split);
        let images = self.resolve(info, &images)?;
        let labels = self.resolve(info, &labels)?;
        load_idx_pair(&images, &labels, info.name, layout.classes)
    }

    /// The path of `relative` (or its `.gz` / non-`.gz` twin) if either exists.
    fn existing(&self, relative: &str) -> Option<PathBuf> {
        let listed = self.root.join(relative);
        let twin = match relative.strip_suffix(".gz") {
            Some(raw) => self.root.join(raw),
            None => self.root.join(format!("{relative}.gz")),
        };
        [listed, twin].into_iter().find(|p| p.is_file())
    }

    fn resolve(&self, info: &Known, relative: &str) -> Result<PathBuf> {
        self.existing(relative).ok_or_else(|| {
            let path = self.root.join(relative);
            DataError::file(&path, missing_message(info, &path))
        })
    }
}

fn missing_message(info: &Known, path: &Path) -> String {
    match info.item.source {
        Source::Fetched => {
            let folder = path
                .parent()
                .and_then(Path::file_name)
                .map_or(String::new(), |f| f.to_string_lossy().into_owned());
            format!(
                "not found (nor with/without .gz) for dataset {}; run `datasets/fetch` to download \
                 it (or `datasets/fetch {folder}` for this set only)",
                info.name
            )
        }
        Source::Bundled => format!(
            "not found (nor with/without .gz): the bundled file of dataset {} is missing from the \
             checkout (it is committed under datasets/bundled/)",
            info.name
        ),
    }
}

fn split_files(dir: &str, split: Split) -> (String, String) {
    let prefix = match split {
        Split::Train => "train",
        Split::Test => "t10k",
    };
    (
        format!("{dir}/{prefix}-images-idx3-ubyte.gz"),
        format!("{dir}/{prefix}-labels-idx1-ubyte.gz"),
    )
}

fn find(name: &str) -> Result<&'static Known> {
    Ok(DATASETS.get(name)?)
}

fn find_images(name: &str) -> Result<(&'static Known, IdxLayout)> {
    let info = find(name)?;
    match info.item.layout {
        Layout::Idx(layout) => Ok((info, layout)),
        Layout::Vader(_) => Err(wrong_modality(info, Modality::Image)),
    }
}

fn wrong_modality(info: &Known, wanted: Modality) -> DataError {
    DataError::invalid(format!(
        "dataset {} holds {:?} data, not {wanted:?}",
        info.name,
        info.item.modality()
    ))
}
