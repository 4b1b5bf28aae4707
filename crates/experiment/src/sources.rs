//! Each `[data]` source read into a data set: a catalog name from the data root, or a set on
//! disk (an image tree resized and centre-cropped as [`PixelSpec`](crate::pixels::PixelSpec)
//! says, its evaluation split left on disk to be streamed; CIFAR binary files; a text table).

use data::{
    Catalog, CifarKind, CifarSplit, Dataset, DiskImages, ImageDataset, ImageFolder, Preprocess,
    TextColumns, TextDataset, WithClasses, load_cifar_dir, load_text_table,
};

use crate::config::{DataSource, DiskFormat, DiskSet};
use crate::error::{ExperimentError, Result};
use crate::eval_set::EvalSet;

/// An image source's splits: its training split (in memory), if it has one, and its test
/// split.
pub struct ImageSplits {
    pub train: Option<ImageDataset>,
    pub test: EvalSet,
}

/// How an image tree is read: its images' geometry (`None`: no side given) and whether its
/// evaluation split stays on disk.
#[derive(Clone, Copy)]
pub struct FolderRead<'a> {
    pub geometry: Option<&'a Preprocess>,
    pub stream: bool,
}

/// The splits of an image source.
pub fn images(catalog: &Catalog, source: &DataSource, read: FolderRead<'_>) -> Result<ImageSplits> {
    let memory = |set: ImageDataset| EvalSet::Memory(Dataset::Images(set));
    let set = match source {
        DataSource::Catalog(name) => {
            let splits = catalog.load_images(name)?;
            return Ok(ImageSplits {
                train: splits.train,
                test: memory(splits.test),
            });
        }
        DataSource::Disk(set) => set,
    };
    let cifar = |kind| -> Result<ImageSplits> {
        let read = |split| load_cifar_dir(&set.path, kind, split).map(|s| named(s.set, set));
        Ok(ImageSplits {
            train: Some(read(CifarSplit::Train)?),
            test: memory(read(CifarSplit::Test)?),
        })
    };
    match set.format() {
        DiskFormat::ImageFolder => folder(set, read),
        DiskFormat::Cifar10 => cifar(CifarKind::Cifar10),
        DiskFormat::Cifar100 => cifar(CifarKind::Cifar100Fine),
        DiskFormat::Text => Err(ExperimentError::invalid(format!(
            "{}: a text table where images were expected",
            set.path.display()
        ))),
    }
}

/// An image tree read with `read.geometry`: its `train/` split in memory, and its `test/` split
/// (else `val/`, else the tree itself without split folders, else `train/`, for an OOD set) on
/// disk when `read.stream`, else in memory. Mean / std are applied per batch, as for every set.
fn folder(set: &DiskSet, read: FolderRead<'_>) -> Result<ImageSplits> {
    let Some(geometry) = read.geometry else {
        return Err(ExperimentError::invalid(format!(
            "data.image_size: needed to read the image folder {} (every image is resized and \
             centre-cropped to that side)",
            set.path.display()
        )));
    };
    let tree = ImageFolder::open(&set.path)?;
    let disk = |index: &data::ImageIndex| DiskImages::new(&set.name(), index.clone(), geometry);
    let test = (["test", "val", "all", "train"].iter())
        .find_map(|split| tree.split(split))
        .expect("an opened image tree has a split");
    let test = disk(test)?;
    Ok(ImageSplits {
        train: (tree.split("train").map(|index| disk(index)?.load())).transpose()?,
        test: match read.stream {
            true => EvalSet::Disk(test),
            false => EvalSet::Memory(Dataset::Images(test.load()?)),
        },
    })
}

fn named(mut images: ImageDataset, set: &DiskSet) -> ImageDataset {
    images.name = set.name();
    images
}

/// A text source: the whole set (or its training file) and, when the source names one, its
/// separate test file.
pub fn texts(catalog: &Catalog, source: &DataSource) -> Result<(TextDataset, Option<TextDataset>)> {
    let set = match source {
        DataSource::Catalog(name) => return Ok((catalog.load_text(name)?, None)),
        DataSource::Disk(set) if set.format() == DiskFormat::Text => set,
        DataSource::Disk(set) => {
            return Err(ExperimentError::invalid(format!(
                "{}: images where a text table was expected",
                set.path.display()
            )));
        }
    };
    let columns = TextColumns {
        text: set.text.clone(),
        label: set.label.clone(),
    };
    let full = load_text_table(&set.path, &columns, &set.name())?;
    let Some(test_path) = &set.test else {
        return Ok((full.set, None));
    };
    let test: WithClasses<TextDataset> = load_text_table(test_path, &columns, &set.name())?;
    if test.classes != full.classes {
        return Err(ExperimentError::invalid(format!(
            "{}: classes {:?}, but {} has {:?}; expected the same classes in both files",
            test_path.display(),
            test.classes,
            set.path.display(),
            full.classes
        )));
    }
    Ok((full.set, Some(test.set)))
}
