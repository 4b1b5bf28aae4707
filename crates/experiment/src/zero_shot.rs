//! The zero-shot base model's prompts: the class names `[backbone] zero_shot` gives, else the
//! data set's own, and its templates.

use data::{CifarKind, CifarSplit, ImageFolder, load_cifar_dir};

use crate::config::{DataSource, DiskFormat, ExperimentConfig, ZeroShotSection};
use crate::error::{ExperimentError, Result};

/// The class names (in label order) and templates of the zero-shot classifier for a data set of
/// `num_classes` classes; an error naming `backbone.zero_shot.classes` when their counts differ
/// or the data set has no class names.
pub fn prompts(
    config: &ExperimentConfig,
    zero_shot: &ZeroShotSection,
    num_classes: usize,
) -> Result<(Vec<String>, Vec<String>)> {
    let source = &config.data.dataset;
    let classes = match zero_shot.classes()? {
        Some(classes) => classes,
        None => dataset_classes(source)?,
    };
    if classes.len() != num_classes {
        return Err(ExperimentError::invalid(format!(
            "backbone.zero_shot.classes: {} class names; the data set `{}` has {num_classes} \
             classes (expected one name each, in label order)",
            classes.len(),
            source.name()
        )));
    }
    Ok((classes, zero_shot.templates()?))
}

/// The class names of a set on disk, in label order: an image tree's class folders, CIFAR's
/// names file. The data stage has read the set already; reading its names again keeps them out
/// of the data sets every method gets.
fn dataset_classes(source: &DataSource) -> Result<Vec<String>> {
    let missing = || {
        ExperimentError::invalid(format!(
            "backbone.zero_shot.classes: the data set `{}` names no classes; list them \
             (`classes` or `classes_file`)",
            source.name()
        ))
    };
    let DataSource::Disk(set) = source else {
        return Err(missing());
    };
    let cifar = |kind| load_cifar_dir(&set.path, kind, CifarSplit::Test).map(|s| s.classes);
    Ok(match set.format() {
        DiskFormat::ImageFolder => ImageFolder::open(&set.path)?.classes().to_vec(),
        DiskFormat::Cifar10 => cifar(CifarKind::Cifar10)?,
        DiskFormat::Cifar100 => cifar(CifarKind::Cifar100Fine)?,
        DiskFormat::Text => return Err(missing()),
    })
}
