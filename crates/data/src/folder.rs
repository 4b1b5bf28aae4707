//! Class-per-folder image trees, indexed as torchvision's `ImageFolder` indexes them: classes are
//! the sub-folders sorted by name (label = position), images the `.jpg`, `.jpeg` and `.png`
//! files under each (sub-folders included), ordered as `sorted(os.walk(..))` then sorted file
//! names. Other files are skipped silently, as torchvision does; hidden folders (`.name`) are
//! not classes; a class folder without images is refused, since its label would never occur.
//!
//! Burn's `burn-dataset` has an `ImageFolderDataset`, but not used here: its `vision` feature
//! compiles `image` with every format, `globwalk` and `burn-std`'s network stack (reqwest,
//! tokio), and it panics (`unwrap`) on an unreadable image instead of naming it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{DataError, Result};

/// File extensions read as images (compared without case).
pub const IMAGE_EXTENSIONS: [&str; 3] = ["jpg", "jpeg", "png"];

/// The split folders an image tree may have, in this order.
pub const SPLIT_FOLDERS: [&str; 3] = ["train", "val", "test"];

/// A progress line on stderr every this many images while indexing.
const PROGRESS_EVERY: usize = 10_000;

/// One image of an index: its file and label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageItem {
    /// The image file.
    pub path: PathBuf,
    /// Position of the image's class in [`ImageIndex::classes`].
    pub label: u32,
}

/// The images of one class-per-folder directory, `DIR/<class>/<image>`, not yet read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageIndex {
    /// Name used in reports: the tree's folder name, e.g. `imagenet`.
    pub name: String,
    /// `train`, `val`, `test`, or `all` for a tree without split folders.
    pub split: String,
    /// Class names (the folder names), sorted; the label is the position.
    pub classes: Vec<String>,
    /// Images class by class, in a fixed order.
    pub items: Vec<ImageItem>,
}

impl ImageIndex {
    /// Indexes `dir/<class>/<image>`; `name` and `split` are kept for reports.
    pub fn open(dir: &Path, name: &str, split: &str) -> Result<Self> {
        let classes = class_folders(dir)?;
        let mut items = Vec::new();
        let mut counter = Progress::new(dir);
        for (label, class) in classes.iter().enumerate() {
            let class_dir = dir.join(class);
            let files = image_files(&class_dir)?;
            if files.is_empty() {
                return Err(DataError::file(
                    &class_dir,
                    format!(
                        "class folder {class:?} has no image ({} files)",
                        IMAGE_EXTENSIONS.map(|e| format!(".{e}")).join(", ")
                    ),
                ));
            }
            counter.add(files.len());
            items.extend(files.into_iter().map(|path| ImageItem {
                path,
                label: label as u32,
            }));
        }
        counter.finish(classes.len());
        Ok(Self {
            name: name.to_string(),
            split: split.to_string(),
            classes,
            items,
        })
    }

    /// Number of images.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether there are no images.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Number of classes.
    pub fn num_classes(&self) -> usize {
        self.classes.len()
    }

    /// One label per image, in index order.
    pub fn labels(&self) -> Vec<u32> {
        self.items.iter().map(|item| item.label).collect()
    }

    /// The images at `indices`, in that order (repeats allowed), with the same classes.
    /// Panics if an index is out of range.
    pub fn subset(&self, indices: &[usize]) -> Self {
        Self {
            items: indices.iter().map(|&i| self.items[i].clone()).collect(),
            ..self.clone_without_items()
        }
    }

    fn clone_without_items(&self) -> Self {
        Self {
            name: self.name.clone(),
            split: self.split.clone(),
            classes: self.classes.clone(),
            items: Vec::new(),
        }
    }
}

/// An image tree `ROOT/{train,val,test}/<class>/<image>` (any of the three splits), or
/// `ROOT/<class>/<image>` (one split, `all`). Every split has the same class folders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFolder {
    /// The folder indexed.
    pub root: PathBuf,
    /// The splits found, in the order train, val, test.
    pub splits: Vec<ImageIndex>,
}

impl ImageFolder {
    /// Indexes the tree at `root`. Errors name the folder: no class folder, a class folder
    /// without images, or class folders that differ between splits (both splits and the
    /// differing classes named).
    pub fn open(root: &Path) -> Result<Self> {
        let name = root.file_name().map_or_else(
            || "images".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let present: Vec<&str> = SPLIT_FOLDERS
            .into_iter()
            .filter(|split| root.join(split).is_dir())
            .collect();
        if present.is_empty() {
            let all = ImageIndex::open(root, &name, "all")?;
            return Ok(Self {
                root: root.to_path_buf(),
                splits: vec![all],
            });
        }
        // Class sets are compared before any image is listed, so a mismatch fails fast.
        let class_sets = (present.iter())
            .map(|split| class_folders(&root.join(split)))
            .collect::<Result<Vec<_>>>()?;
        for (i, classes) in class_sets.iter().enumerate().skip(1) {
            if *classes != class_sets[0] {
                return Err(mismatch(
                    root,
                    present[0],
                    &class_sets[0],
                    present[i],
                    classes,
                ));
            }
        }
        let splits = (present.iter())
            .map(|split| ImageIndex::open(&root.join(split), &name, split))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            root: root.to_path_buf(),
            splits,
        })
    }

    /// The split named `split` (`train`, `val`, `test`, or `all`), if the tree has it.
    pub fn split(&self, split: &str) -> Option<&ImageIndex> {
        self.splits.iter().find(|index| index.split == split)
    }

    /// The class names, shared by every split.
    pub fn classes(&self) -> &[String] {
        &self.splits[0].classes
    }
}

fn mismatch(root: &Path, a: &str, a_set: &[String], b: &str, b_set: &[String]) -> DataError {
    let only = |x: &[String], y: &[String]| {
        let names: Vec<&str> = (x.iter())
            .filter(|c| !y.contains(c))
            .map(String::as_str)
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    DataError::file(
        root,
        format!(
            "the class folders of splits {a} and {b} differ: only in {a}: {}; only in {b}: {}",
            only(a_set, b_set),
            only(b_set, a_set)
        ),
    )
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<(String, PathBuf, bool)>> {
    let entries = fs::read_dir(dir).map_err(|e| DataError::caused(dir, "cannot list", e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| DataError::caused(dir, "cannot list", e))?;
        let path = entry.path();
        // `is_dir` follows symbolic links, as torchvision's walk does.
        let is_dir = path.is_dir();
        out.push((
            entry.file_name().to_string_lossy().into_owned(),
            path,
            is_dir,
        ));
    }
    out.sort_by(|a, b| a.1.file_name().cmp(&b.1.file_name()));
    Ok(out)
}

/// The class folder names of `dir`, sorted; errors when there is none.
fn class_folders(dir: &Path) -> Result<Vec<String>> {
    let classes: Vec<String> = read_dir_sorted(dir)?
        .into_iter()
        .filter(|(name, _, is_dir)| *is_dir && !name.starts_with('.'))
        .map(|(name, _, _)| name)
        .collect();
    if classes.is_empty() {
        return Err(DataError::file(
            dir,
            "no class folder: expected DIR/<class>/<image>",
        ));
    }
    Ok(classes)
}

/// The image files under `dir`, in `sorted(os.walk(dir))` order: folders by path, then files
/// by name within each.
fn image_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut folders = vec![dir.to_path_buf()];
    let mut files = Vec::new();
    while let Some(folder) = folders.pop() {
        for (_, path, is_dir) in read_dir_sorted(&folder)? {
            if is_dir {
                folders.push(path);
            } else if is_image(&path) {
                files.push(path);
            }
        }
    }
    // Folders compare as strings, as Python compares `os.walk`'s paths ("a-b" before "a/c").
    fn folder(p: &Path) -> Option<&[u8]> {
        p.parent().map(|d| d.as_os_str().as_encoded_bytes())
    }
    files.sort_by(|a, b| {
        (folder(a).cmp(&folder(b))).then_with(|| a.file_name().cmp(&b.file_name()))
    });
    Ok(files)
}

fn is_image(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// A counter line on stderr every [`PROGRESS_EVERY`] images, so a big tree shows it is moving.
struct Progress<'a> {
    dir: &'a Path,
    count: usize,
}

impl<'a> Progress<'a> {
    fn new(dir: &'a Path) -> Self {
        Self { dir, count: 0 }
    }

    fn add(&mut self, n: usize) {
        let before = self.count / PROGRESS_EVERY;
        self.count += n;
        if self.count / PROGRESS_EVERY > before {
            eprintln!("indexing {}: {} images", self.dir.display(), self.count);
        }
    }

    fn finish(&self, classes: usize) {
        if self.count >= PROGRESS_EVERY {
            eprintln!(
                "indexed {}: {} images in {classes} classes",
                self.dir.display(),
                self.count
            );
        }
    }
}
