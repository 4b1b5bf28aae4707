//! Image folders on disk: indexing (classes, order, refusals), decoding and preprocessing
//! against values computed by hand, streaming, and loading whole.

use std::path::Path;

use data::{ImageFolder, ImageIndex, Interpolation, Preprocess, Resize};
use png::ColorType;

/// No resize, no crop, bytes kept as they are: the output is the decoded RGB image itself.
fn raw() -> Preprocess {
    Preprocess {
        resize: None,
        crop: None,
        mean: [0.0; 3],
        std: [1.0; 3],
        interpolation: Interpolation::Bilinear,
        rescale: 1.0,
    }
}

fn mkdirs(root: &Path, dirs: &[&str]) {
    for d in dirs {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
}

/// Writes an 8-bit PNG of `width`x`height` pixels from interleaved `data`.
fn write_png(path: &Path, (width, height): (u32, u32), color: ColorType, data: &[u8]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = png::Encoder::new(file, width, height);
    encoder.set_color(color);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(data).unwrap();
}

/// Interleaved RGB bytes of a `width`x`height` image, pixel (x, y) from `f`.
fn rgb(width: u32, height: u32, f: impl Fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    (0..height)
        .flat_map(|y| (0..width).map(move |x| (x, y)))
        .flat_map(|(x, y)| f(x, y))
        .collect()
}

/// A 2x2 PNG whose every byte is `fill` (so images are told apart after reading).
fn png(path: &Path, fill: u8) {
    write_png(path, (2, 2), ColorType::Rgb, &[fill; 12]);
}

fn names(index: &ImageIndex, root: &Path) -> Vec<String> {
    (index.items.iter())
        .map(|i| i.path.strip_prefix(root).unwrap().display().to_string())
        .collect()
}

#[test]
fn classes_are_sorted_folders_and_images_are_walked_in_a_fixed_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("pets");
    for split in ["train", "val"] {
        mkdirs(
            &root,
            &[&format!("{split}/dog"), &format!("{split}/cat/sub")],
        );
        mkdirs(
            &root,
            &[&format!("{split}/ant"), &format!("{split}/.cache")],
        );
        png(&root.join(split).join("dog/b.png"), 1);
        png(&root.join(split).join("dog/a.PNG"), 2);
        png(&root.join(split).join("cat/z.png"), 3);
        png(&root.join(split).join("cat/sub/a.png"), 4);
        png(&root.join(split).join("ant/x.png"), 5);
        // Not images: skipped silently, as torchvision does.
        std::fs::write(root.join(split).join("dog/notes.txt"), "x").unwrap();
        std::fs::write(root.join(split).join("README"), "x").unwrap();
    }
    let folder = ImageFolder::open(&root).unwrap();
    assert_eq!(folder.classes(), ["ant", "cat", "dog"]);
    assert_eq!(folder.splits.len(), 2);
    assert!(folder.split("test").is_none());
    let train = folder.split("train").unwrap();
    assert_eq!(
        (train.name.as_str(), train.split.as_str()),
        ("pets", "train")
    );
    let want = [
        "train/ant/x.png",
        "train/cat/z.png",
        "train/cat/sub/a.png",
        "train/dog/a.PNG",
        "train/dog/b.png",
    ];
    assert_eq!(names(train, &root), want);
    assert_eq!(train.labels(), [0, 1, 1, 2, 2]);
    assert_eq!(folder.split("val").unwrap().len(), 5);

    // A root that is directly <class>/<image> is one split, `all`.
    let flat = ImageFolder::open(&root.join("val")).unwrap();
    assert_eq!(flat.splits.len(), 1);
    let all = flat.split("all").unwrap();
    assert_eq!(
        (all.name.as_str(), all.num_classes(), all.len()),
        ("val", 3, 5)
    );
}

#[test]
fn class_sets_that_differ_between_splits_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    mkdirs(root, &["train/a", "train/b", "test/a", "test/c", "test/d"]);
    for f in [
        "train/a/1.png",
        "train/b/1.png",
        "test/a/1.png",
        "test/c/1.png",
        "test/d/1.png",
    ] {
        png(&root.join(f), 0);
    }
    let err = ImageFolder::open(root)
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("splits train and test differ: only in train: b; only in test: c, d"),
        "{err}"
    );
}

#[test]
fn a_class_folder_without_images_and_a_tree_without_classes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    mkdirs(root, &["a", "b"]);
    png(&root.join("a/1.png"), 0);
    std::fs::write(root.join("b/readme.txt"), "no images").unwrap();
    let err = ImageFolder::open(root).unwrap_err();
    assert_eq!(err.path, Some(root.join("b")));
    assert!(
        data::error_chain(&err).contains("class folder \"b\" has no image"),
        "{err}"
    );
    let empty = tempfile::tempdir().unwrap();
    let err = ImageFolder::open(empty.path())
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(err.contains("no class folder"), "{err}");
}

/// One class folder `c` with the given files already written by `write`.
fn one_class(write: impl Fn(&Path)) -> (tempfile::TempDir, ImageIndex) {
    let dir = tempfile::tempdir().unwrap();
    mkdirs(dir.path(), &["c"]);
    write(&dir.path().join("c"));
    let index = ImageIndex::open(dir.path(), "t", "all").unwrap();
    (dir, index)
}

#[test]
fn png_pixels_come_back_exactly_as_written_in_channel_planes() {
    let colour = rgb(3, 2, |x, y| {
        [(10 * x + y) as u8, 100 + x as u8, 200 + y as u8]
    });
    let grey: Vec<u8> = (0..6).map(|i| i * 40).collect();
    let rgba: Vec<u8> = (0..6).flat_map(|i| [i % 3, 7, 9, 0]).collect();
    let (_dir, index) = one_class(|c| {
        write_png(&c.join("a_rgb.png"), (3, 2), ColorType::Rgb, &colour);
        // Grey is replicated to RGB; alpha is dropped.
        write_png(&c.join("b_grey.png"), (3, 2), ColorType::Grayscale, &grey);
        write_png(&c.join("c_rgba.png"), (3, 2), ColorType::Rgba, &rgba);
    });
    let batch = index.read_batch(&raw(), &[0, 1, 2]).unwrap();
    assert_eq!(batch.dims, [3, 2, 3]);
    let planes = |f: &dyn Fn(usize, usize, usize) -> u32| -> Vec<f32> {
        (0..3)
            .flat_map(|ch| (0..2).flat_map(move |y| (0..3).map(move |x| (ch, y, x))))
            .map(|(ch, y, x)| f(ch, y, x) as f32)
            .collect()
    };
    let want_rgb = planes(&|ch, y, x| [10 * x + y, 100 + x, 200 + y][ch] as u32);
    let want_grey = planes(&|_, y, x| ((x + 3 * y) * 40) as u32);
    let want_rgba = planes(&|ch, _, x| [x, 7, 9][ch] as u32);
    assert_eq!(batch.pixels, [want_rgb, want_grey, want_rgba].concat());
    assert_eq!(batch.indices, [0, 1, 2]);
}

#[test]
fn crop_then_scale_and_normalise_match_hand_computed_values() {
    // 4x4, R = 16 y + 4 x, G = 255 - R, B = 128; identity resize, centre crop 2x2 = rows and
    // columns 1..3, then (b / 255 - mean) / std per channel.
    let image = rgb(4, 4, |x, y| {
        let r = (16 * y + 4 * x) as u8;
        [r, 255 - r, 128]
    });
    let (_dir, index) = one_class(|c| write_png(&c.join("x.png"), (4, 4), ColorType::Rgb, &image));
    let pre = Preprocess {
        resize: Some(Resize::Exact {
            height: 4,
            width: 4,
        }),
        crop: Some([2, 2]),
        mean: [0.5, 0.25, 0.0],
        std: [0.5, 0.25, 2.0],
        interpolation: Interpolation::Bicubic,
        rescale: 1.0 / 255.0,
    };
    let batch = index.read_batch(&pre, &[0]).unwrap();
    let r: [f32; 4] = [20.0, 24.0, 36.0, 40.0];
    let want: Vec<f32> = (r.iter().map(|b| (b / 255.0 - 0.5) / 0.5))
        .chain(r.iter().map(|b| ((255.0 - b) / 255.0 - 0.25) / 0.25))
        .chain(r.iter().map(|_| (128.0 / 255.0) / 2.0))
        .collect();
    assert_eq!(batch.dims, [3, 2, 2]);
    for (got, want) in batch.pixels.iter().zip(&want) {
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
}

#[test]
fn shortest_edge_resize_is_antialiased_bilinear_then_cropped() {
    // 2x4 (H x W); shorter side 2 -> 1, so 1x2. Horizontally 4 -> 2 averages with weights
    // 3/7, 3/7, 1/7 (Pillow's widened triangle): [0, 70, 140, 210] -> [50, 160]; the second
    // row is 20 brighter -> [70, 180]; vertically 2 -> 1 is the mean: [60, 170]. The 1x1 crop
    // takes column (2 - 1) // 2 = 0.
    let rows = [[0u8, 70, 140, 210], [20, 90, 160, 230]];
    let image = rgb(4, 2, |x, y| {
        let v = rows[y as usize][x as usize];
        [v, 255 - v, 9]
    });
    let (_dir, index) = one_class(|c| write_png(&c.join("x.png"), (4, 2), ColorType::Rgb, &image));
    let mut pre = Preprocess {
        resize: Some(Resize::ShortestEdge(1)),
        ..raw()
    };
    assert_eq!(
        index.read_batch(&pre, &[0]).unwrap().pixels,
        [60.0, 170.0, 195.0, 85.0, 9.0, 9.0]
    );
    pre.crop = Some([1, 1]);
    assert_eq!(
        index.read_batch(&pre, &[0]).unwrap().pixels,
        [60.0, 195.0, 9.0]
    );
}

#[test]
fn a_corrupt_or_missing_image_is_an_error_naming_its_path() {
    let (_dir, index) = one_class(|c| {
        png(&c.join("a.png"), 1);
        std::fs::write(c.join("b.png"), b"\x89PNG\r\n\x1a\nnot really").unwrap();
        std::fs::write(c.join("c.jpg"), b"plain text").unwrap();
        // A JPEG cut short after its start-of-image marker.
        std::fs::write(c.join("d.jpg"), b"\xff\xd8\xff\xe0\x00\x10JFIF").unwrap();
    });
    for (i, what) in [
        (1, "cannot decode the PNG image: "),
        (2, "not a PNG or JPEG image"),
        (3, "cannot decode the JPEG image: "),
    ] {
        let err = index.read_batch(&raw(), &[0, i]).unwrap_err();
        assert_eq!(err.path.as_ref(), Some(&index.items[i].path));
        assert!(data::error_chain(&err).contains(what), "{err}");
        // The decoder's own error is kept as the source.
        assert_eq!(std::error::Error::source(&err).is_some(), i != 2, "{err}");
    }
    let pre = Preprocess {
        crop: Some([2, 2]),
        ..raw()
    };
    let err = index.load(&pre).unwrap_err();
    assert_eq!(err.path.as_ref(), Some(&index.items[1].path));
    // Streaming yields the good batch, then the error, then stops.
    let results: Vec<_> = index.stream(&raw(), 1).unwrap().collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_ok());
    let err = results[1].as_ref().unwrap_err();
    assert!(
        data::error_chain(err).contains("b.png: cannot decode the PNG image"),
        "{err}"
    );
    // A file removed after indexing.
    std::fs::remove_file(&index.items[0].path).unwrap();
    let err = index
        .read_batch(&raw(), &[0])
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(err.contains("a.png: cannot read"), "{err}");
}

/// Seven images over three classes, 2x2 each of one grey level 30 i: PNGs written here, and
/// two JPEGs written by Pillow (scripts/preprocess_reference.py), an RGB one and a grey one.
fn seven() -> (tempfile::TempDir, ImageIndex) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    mkdirs(root, &["a", "b", "c"]);
    let files = [
        "a/0.png", "a/1.png", "a/2.jpg", "b/3.png", "b/4.jpeg", "c/5.png", "c/6.png",
    ];
    let fixtures = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/preprocess"
    ));
    for (i, f) in files.iter().enumerate() {
        match i {
            2 => std::fs::copy(fixtures.join("rgb60.jpg"), root.join(f))
                .map(|_| ())
                .unwrap(),
            4 => std::fs::copy(fixtures.join("grey120.jpg"), root.join(f))
                .map(|_| ())
                .unwrap(),
            _ => png(&root.join(f), 30 * i as u8),
        }
    }
    let index = ImageIndex::open(root, "seven", "all").unwrap();
    (dir, index)
}

fn first_values(batch: &data::ImageBatch) -> Vec<f32> {
    batch.pixels.chunks(12).map(|image| image[0]).collect()
}

#[test]
fn streaming_yields_every_image_once_in_order_in_full_batches() {
    let (_dir, index) = seven();
    assert_eq!(index.labels(), [0, 0, 0, 1, 1, 2, 2]);
    let batches: Vec<_> = index
        .stream(&raw(), 3)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let sizes: Vec<usize> = batches.iter().map(|b| b.labels.len()).collect();
    assert_eq!(sizes, [3, 3, 1]);
    let indices: Vec<usize> = batches.iter().flat_map(|b| b.indices.clone()).collect();
    assert_eq!(indices, (0..7).collect::<Vec<_>>());
    let labels: Vec<u32> = batches.iter().flat_map(|b| b.labels.clone()).collect();
    assert_eq!(labels, index.labels());
    for b in &batches {
        assert_eq!((b.dims, b.pixels.len()), ([3, 2, 2], b.labels.len() * 12));
    }
    // Each image keeps its own pixels (JPEG within its loss of a grey level or two).
    let firsts: Vec<f32> = batches.iter().flat_map(first_values).collect();
    for (i, v) in firsts.iter().enumerate() {
        assert!((v - 30.0 * i as f32).abs() <= 2.0, "image {i}: {v}");
    }
    // Given batches are streamed as given; a stream dropped part-way stops its thread.
    let order = vec![vec![6, 0], vec![3]];
    let given: Vec<_> = index
        .stream_batches(&raw(), order)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        (given[0].labels.clone(), given[1].labels.clone()),
        (vec![2, 0], vec![1])
    );
    let mut partial = index.stream(&raw(), 1).unwrap();
    assert!(partial.next().unwrap().is_ok());
    drop(partial);
    assert!(index.stream(&raw(), 0).is_err());
    assert!(index.stream_batches(&raw(), vec![vec![7]]).is_err());
}

#[test]
fn loading_whole_keeps_the_bytes_after_resize_and_crop() {
    let (_dir, index) = seven();
    let pre = Preprocess {
        resize: Some(Resize::Exact {
            height: 3,
            width: 3,
        }),
        crop: Some([1, 2]),
        mean: [0.5; 3],
        std: [0.25; 3],
        ..raw()
    };
    let set = index.load(&pre).unwrap();
    assert_eq!((set.dims, set.len(), set.num_classes), ([3, 1, 2], 7, 3));
    assert_eq!(set.labels, index.labels());
    // The set's [0, 1] floats normalised by the preprocessing's own statistics are the batch.
    let mut floats = set.batch_f32(&[0, 4, 6]);
    pre.normalization().apply(&mut floats, 3, 2).unwrap();
    let scaled = Preprocess {
        rescale: 1.0 / 255.0,
        ..pre.clone()
    };
    let batch = index.read_batch(&scaled, &[0, 4, 6]).unwrap();
    for (a, b) in floats.iter().zip(&batch.pixels) {
        assert!((a - b).abs() < 1e-6, "{a} vs {b}");
    }
    // Without one output size there is no single shape to hold.
    let err = index
        .load(&raw())
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(err.contains("set a crop or an exact resize"), "{err}");
}

#[test]
fn images_of_different_sizes_need_a_crop_or_exact_resize_to_share_a_batch() {
    let (_dir, index) = one_class(|c| {
        png(&c.join("a.png"), 1);
        write_png(&c.join("b.png"), (3, 2), ColorType::Rgb, &[0; 18]);
    });
    let err = index.read_batch(&raw(), &[0, 1]).unwrap_err();
    assert_eq!(err.path.as_ref(), Some(&index.items[1].path));
    assert!(
        data::error_chain(&err).contains("preprocessed to 2x3, but the batch's images are 2x2")
    );
    let pre = Preprocess {
        crop: Some([2, 2]),
        ..raw()
    };
    assert_eq!(index.read_batch(&pre, &[0, 1]).unwrap().dims, [3, 2, 2]);
}
