//! The committed subsets under `datasets/bundled/`, loaded through the catalog.

use data::{Catalog, Split};

fn catalog() -> Catalog {
    Catalog::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../datasets"))
}

#[test]
fn fashion_mnist_small_has_balanced_10k_train_and_2k_test() {
    let splits = catalog().load_images("fashion_mnist_small").unwrap();
    let train = splits.train.unwrap();
    assert_eq!(
        (train.len(), train.dims, train.num_classes),
        (10_000, [1, 28, 28], 10)
    );
    assert_eq!(train.class_counts(), vec![1_000; 10]);
    assert_eq!((splits.test.len(), splits.test.dims), (2_000, [1, 28, 28]));
    assert_eq!(splits.test.class_counts(), vec![200; 10]);
    // Real images: not blank, with both dark background and bright pixels.
    let image = train.image_f32(0);
    assert!(image.contains(&0.0) && image.iter().any(|&x| x > 0.5));
}

#[test]
fn mnist_small_is_a_balanced_2k_test_set_without_train() {
    let catalog = catalog();
    let test = catalog
        .load_image_split("mnist_small", Split::Test)
        .unwrap();
    assert_eq!(
        (test.len(), test.dims, test.num_classes),
        (2_000, [1, 28, 28], 10)
    );
    assert_eq!(test.class_counts(), vec![200; 10]);
    assert!(catalog.load_images("mnist_small").unwrap().train.is_none());
}
