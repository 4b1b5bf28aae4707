//! Each `[data]` source read into a data set: a catalog name from the data root, or a set on
//! disk (an image tree resized and centre-cropped to `[data] image_size`, CIFAR binary files, a
//! text table).

use data::{
    Catalog, CifarKind, CifarSplit, ImageDataset, ImageFolder, ImageIndex, Interpolation,
    Preprocess, Resize, TextColumns, TextDataset, WithClasses, load_cifar_dir, load_text_table,
};

use crate::config::{DataSource, DiskFormat, DiskSet};
use crate::error::{ExperimentError, Result};

/// An image source's splits: its training split, if it has one, and its test split.
pub struct ImageSplits {
    pub train: Option<ImageDataset>,
    pub test: ImageDataset,
}

/// The splits of an image source; `side` is `[data] image_size`, which an image tree needs.
pub fn images(catalog: &Catalog, source: &DataSource, side: Option<usize>) -> Result<ImageSplits> {
    let set = match source {
        DataSource::Catalog(name) => {
            let splits = catalog.load_images(name)?;
            return Ok(ImageSplits {
                train: splits.train,
                test: splits.test,
            });
        }
        DataSource::Disk(set) => set,
    };
    let cifar = |kind| -> Result<ImageSplits> {
        let read = |split| load_cifar_dir(&set.path, kind, split).map(|s| named(s.set, set));
        Ok(ImageSplits {
            train: Some(read(CifarSplit::Train)?),
            test: read(CifarSplit::Test)?,
        })
    };
    match set.format() {
        DiskFormat::ImageFolder => folder(set, side),
        DiskFormat::Cifar10 => cifar(CifarKind::Cifar10),
        DiskFormat::Cifar100 => cifar(CifarKind::Cifar100Fine),
        DiskFormat::Text => Err(ExperimentError::invalid(format!(
            "{}: a text table where images were expected",
            set.path.display()
        ))),
    }
}

/// An image tree at `side`: its `train/` split, and its `test/` split (else `val/`, else the
/// tree itself without split folders, else `train/`, for an OOD set).
fn folder(set: &DiskSet, side: Option<usize>) -> Result<ImageSplits> {
    let Some(side) = side else {
        return Err(ExperimentError::invalid(format!(
            "data.image_size: needed to read the image folder {} (every image is resized and \
             centre-cropped to that side)",
            set.path.display()
        )));
    };
    let tree = ImageFolder::open(&set.path)?;
    // Bytes after resize and crop: the run normalises with its training statistics, as for
    // every other set.
    let preprocess = Preprocess {
        resize: Some(Resize::ShortestEdge(side)),
        crop: Some([side, side]),
        mean: [0.0; 3],
        std: [1.0; 3],
        interpolation: Interpolation::Bilinear,
        rescale: 1.0 / 255.0,
    };
    let read =
        |index: &ImageIndex| -> Result<ImageDataset> { Ok(named(index.load(&preprocess)?, set)) };
    let test = (["test", "val", "all", "train"].iter())
        .find_map(|split| tree.split(split))
        .expect("an opened image tree has a split");
    Ok(ImageSplits {
        train: tree.split("train").map(read).transpose()?,
        test: read(test)?,
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
