//! IDX round trips through the writer and reader, and every malformed-file error.

use std::path::Path;

use data::{
    Pixels, load_idx_pair, read_idx_images, read_idx_labels, write_idx_images, write_idx_labels,
};

/// Three 2x3 images with distinct bytes, and their labels.
fn sample() -> (Vec<u8>, [usize; 3], Vec<u8>) {
    ((0..18).map(|v| v * 13).collect(), [3, 2, 3], vec![4, 0, 9])
}

fn error_text<T: std::fmt::Debug>(r: data::Result<T>) -> String {
    r.map_err(|e| data::error_chain(&e)).unwrap_err()
}

#[test]
fn raw_and_gzip_round_trip_and_gzip_is_detected_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let (pixels, dims, labels) = sample();
    for gzip in [false, true] {
        // The names deliberately disagree with the encoding.
        let images = dir.path().join(format!("images-{gzip}.idx"));
        let label_file = dir.path().join(format!("labels-{gzip}.raw"));
        write_idx_images(&images, &pixels, dims, gzip).unwrap();
        write_idx_labels(&label_file, &labels, gzip).unwrap();
        let head = std::fs::read(&images).unwrap();
        assert_eq!(head.starts_with(&[0x1f, 0x8b]), gzip);
        assert_eq!(read_idx_images(&images).unwrap(), (pixels.clone(), dims));
        assert_eq!(read_idx_labels(&label_file).unwrap(), labels);
        let d = load_idx_pair(&images, &label_file, "toy", 10).unwrap();
        assert_eq!(d.dims, [1, 2, 3]);
        assert_eq!(d.labels, vec![4, 0, 9]);
        assert_eq!(d.pixels, Pixels::U8(pixels.clone()));
        assert_eq!(d.name, "toy");
        assert_eq!(d.num_classes, 10);
    }
}

#[test]
fn gzip_output_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let (pixels, dims, _) = sample();
    let a = dir.path().join("a.gz");
    let b = dir.path().join("b.gz");
    write_idx_images(&a, &pixels, dims, true).unwrap();
    write_idx_images(&b, &pixels, dims, true).unwrap();
    assert_eq!(std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
}

fn write_raw(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn bad_magic_names_the_file_and_both_magics() {
    let dir = tempfile::tempdir().unwrap();
    let (pixels, dims, labels) = sample();
    let labels_path = dir.path().join("labels.idx");
    write_idx_labels(&labels_path, &labels, false).unwrap();
    // A label file read as images.
    let err = error_text(read_idx_images(&labels_path));
    assert!(
        err.contains("labels.idx") && err.contains("bad magic"),
        "{err}"
    );
    assert!(
        err.contains("0x00000803") && err.contains("0x00000801"),
        "{err}"
    );
    let images_path = dir.path().join("images.idx");
    write_idx_images(&images_path, &pixels, dims, true).unwrap();
    let err = error_text(read_idx_labels(&images_path));
    assert!(
        err.contains("images.idx") && err.contains("bad magic"),
        "{err}"
    );
    let tiny = write_raw(dir.path(), "tiny.idx", &[0, 0]);
    let err = error_text(read_idx_labels(&tiny));
    assert!(
        err.contains("tiny.idx") && err.contains("bad magic"),
        "{err}"
    );
}

#[test]
fn truncated_header_and_data_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (pixels, dims, _) = sample();
    let full = dir.path().join("full.idx");
    write_idx_images(&full, &pixels, dims, false).unwrap();
    let bytes = std::fs::read(&full).unwrap();
    let short_header = write_raw(dir.path(), "short-header.idx", &bytes[..10]);
    let err = error_text(read_idx_images(&short_header));
    assert!(
        err.contains("short-header.idx") && err.contains("truncated header"),
        "{err}"
    );
    let short_data = write_raw(dir.path(), "short-data.idx", &bytes[..bytes.len() - 1]);
    let err = error_text(read_idx_images(&short_data));
    assert!(
        err.contains("short-data.idx") && err.contains("truncated data"),
        "{err}"
    );
    assert!(err.contains("need 18") && err.contains("found 17"), "{err}");
    let mut long = bytes.clone();
    long.push(0);
    let long = write_raw(dir.path(), "long.idx", &long);
    let err = error_text(read_idx_images(&long));
    assert!(
        err.contains("long.idx") && err.contains("wrong dims"),
        "{err}"
    );
}

#[test]
fn truncated_gzip_stream_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (pixels, dims, _) = sample();
    let full = dir.path().join("full.gz");
    write_idx_images(&full, &pixels, dims, true).unwrap();
    let bytes = std::fs::read(&full).unwrap();
    let cut = write_raw(dir.path(), "cut.gz", &bytes[..bytes.len() / 2]);
    let err = error_text(read_idx_images(&cut));
    assert!(err.contains("cut.gz") && err.contains("gzip"), "{err}");
}

#[test]
fn count_mismatch_and_label_range_name_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let (pixels, dims, labels) = sample();
    let images = dir.path().join("imgs.idx");
    write_idx_images(&images, &pixels, dims, false).unwrap();
    let two = dir.path().join("two-labels.idx");
    write_idx_labels(&two, &labels[..2], true).unwrap();
    let err = error_text(load_idx_pair(&images, &two, "x", 10));
    assert!(
        err.contains("two-labels.idx") && err.contains("imgs.idx"),
        "{err}"
    );
    assert!(
        err.contains("2 labels") && err.contains("3 images"),
        "{err}"
    );
    let ok = dir.path().join("labels.idx");
    write_idx_labels(&ok, &labels, false).unwrap();
    let err = error_text(load_idx_pair(&images, &ok, "x", 9));
    assert!(
        err.contains("labels.idx") && err.contains("label 9 at index 2"),
        "{err}"
    );
}

#[test]
fn missing_file_and_writer_size_mismatch_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.idx");
    let err = error_text(read_idx_labels(&missing));
    assert!(
        err.contains("nope.idx") && err.contains("cannot read"),
        "{err}"
    );
    let err = error_text(write_idx_images(
        &dir.path().join("w.idx"),
        &[0; 5],
        [1, 2, 3],
        false,
    ));
    assert!(err.contains("w.idx") && err.contains("5 bytes"), "{err}");
}
