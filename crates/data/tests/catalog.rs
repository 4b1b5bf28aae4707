//! The catalog against a data root built in a temporary folder.

use std::path::Path;

use data::{Catalog, DATASETS, Modality, Source, Split, write_idx_images, write_idx_labels};

/// Writes `<root>/<dir>/<prefix>-{images,labels}` with `n` 4x4 images labelled `0, 1, ..`
/// modulo `classes`; gzip files keep the `.gz` name, raw files drop it.
fn write_split(root: &Path, dir: &str, prefix: &str, n: usize, classes: u8, gzip: bool) {
    let folder = root.join(dir);
    std::fs::create_dir_all(&folder).unwrap();
    let ext = if gzip { ".gz" } else { "" };
    let pixels: Vec<u8> = (0..n * 16).map(|v| v as u8).collect();
    let labels: Vec<u8> = (0..n).map(|i| i as u8 % classes).collect();
    let images = folder.join(format!("{prefix}-images-idx3-ubyte{ext}"));
    let label_file = folder.join(format!("{prefix}-labels-idx1-ubyte{ext}"));
    write_idx_images(&images, &pixels, [n, 4, 4], gzip).unwrap();
    write_idx_labels(&label_file, &labels, gzip).unwrap();
}

#[test]
fn names_list_every_set_once_with_source_and_modality() {
    let names = DATASETS.names();
    let unique: std::collections::BTreeSet<_> = names.iter().collect();
    assert_eq!((names.len(), unique.len()), (9, 9));
    let find = |n: &str| &DATASETS.get(n).unwrap().item;
    assert_eq!(find("fashion_mnist_small").source, Source::Bundled);
    assert_eq!(find("mnist_small").source, Source::Bundled);
    assert_eq!(find("animal_mnist").source, Source::Fetched);
    assert_eq!(find("sentiment_nyt").modality(), Modality::Text);
    assert_eq!(find("mnist").modality(), Modality::Image);
    assert!(DATASETS.entries().iter().all(|d| !d.about.is_empty()));
}

#[test]
fn image_sets_load_gz_or_raw_files() {
    let dir = tempfile::tempdir().unwrap();
    write_split(dir.path(), "fashion-mnist", "train", 20, 10, true);
    write_split(dir.path(), "fashion-mnist", "t10k", 10, 10, true);
    write_split(dir.path(), "mnist", "train", 12, 10, false);
    write_split(dir.path(), "mnist", "t10k", 5, 10, false);
    let catalog = Catalog::new(dir.path());
    let fashion = catalog.load_images("fashion_mnist").unwrap();
    let train = fashion.train.unwrap();
    assert_eq!((train.len(), fashion.test.len()), (20, 10));
    assert_eq!((train.dims, train.num_classes), ([1, 4, 4], 10));
    assert_eq!(train.class_counts(), vec![2; 10]);
    assert_eq!(fashion.test.name, "fashion_mnist");
    let mnist_test = catalog.load_image_split("mnist", Split::Test).unwrap();
    assert_eq!(mnist_test.labels, vec![0, 1, 2, 3, 4]);
    assert_eq!(
        catalog
            .load_image_split("mnist", Split::Train)
            .unwrap()
            .len(),
        12
    );
}

#[test]
fn optional_and_absent_train_splits() {
    let dir = tempfile::tempdir().unwrap();
    write_split(dir.path(), "animal-mnist", "t10k", 9, 3, true);
    write_split(dir.path(), "bundled/mnist", "t10k", 4, 10, true);
    let catalog = Catalog::new(dir.path());
    let animal = catalog.load_images("animal_mnist").unwrap();
    assert!(animal.train.is_none());
    assert_eq!((animal.test.len(), animal.test.num_classes), (9, 10));
    // Labels are checked against the set's 10 classes.
    write_split(dir.path(), "bundled/mnist", "t10k", 11, 11, true);
    let err = catalog.load_images("mnist_small").unwrap_err().to_string();
    assert!(err.contains("label 10 at index 10"), "{err}");
    write_split(dir.path(), "bundled/mnist", "t10k", 4, 10, true);
    let small = catalog.load_images("mnist_small").unwrap();
    assert!(small.train.is_none());
    assert_eq!(small.test.len(), 4);
    let err = catalog
        .load_image_split("mnist_small", Split::Train)
        .unwrap_err()
        .to_string();
    assert!(err.contains("no training split"), "{err}");
    // A train split present for the optional set is loaded.
    write_split(dir.path(), "animal-mnist", "train", 8, 4, true);
    let animal = catalog.load_images("animal_mnist").unwrap();
    let counts = animal.train.unwrap().class_counts();
    assert_eq!(counts, [2, 2, 2, 2, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn missing_files_say_how_to_get_them() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::new(dir.path());
    let err = catalog
        .load_images("fashion_mnist")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("fashion-mnist/train-images-idx3-ubyte.gz"),
        "{err}"
    );
    assert!(
        err.contains("run `datasets/fetch`") && err.contains("datasets/fetch fashion-mnist"),
        "{err}"
    );
    let err = catalog
        .load_images("fashion_mnist_small")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bundled/fashion-mnist/train-images")
            && err.contains("missing from the checkout"),
        "{err}"
    );
    let err = catalog
        .load_text("sentiment_tweets")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("vader/tweets_GroundTruth.txt") && err.contains("datasets/fetch"),
        "{err}"
    );
    // Half a train split of the optional set is an error, not a silent None.
    write_split(dir.path(), "animal-mnist", "t10k", 3, 3, true);
    std::fs::write(
        dir.path().join("animal-mnist/train-images-idx3-ubyte.gz"),
        b"",
    )
    .unwrap();
    let err = catalog.load_images("animal_mnist").unwrap_err().to_string();
    assert!(err.contains("train-"), "{err}");
}

#[test]
fn text_sets_load_and_names_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("vader")).unwrap();
    std::fs::write(
        dir.path()
            .join("vader/amazonReviewSnippets_GroundTruth.txt"),
        "1\t1.2\tgood\n2\t-0.5\tmeh\n3\t0\tok\n",
    )
    .unwrap();
    let catalog = Catalog::new(dir.path());
    let amazon = catalog.load_text("sentiment_amazon").unwrap();
    assert_eq!(
        (amazon.labels.clone(), amazon.name.as_str()),
        (vec![1, 0], "sentiment_amazon")
    );
    let err = catalog.load_text("imdb").unwrap_err().to_string();
    assert!(
        err.contains("unknown data set `imdb`") && err.contains("sentiment_tweets"),
        "{err}"
    );
    let err = catalog.load_text("mnist").unwrap_err().to_string();
    assert!(err.contains("Image") && err.contains("not Text"), "{err}");
    assert!(catalog.load_images("sentiment_amazon").is_err());
}
