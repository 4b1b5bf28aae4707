//! What the end-to-end tests share. Each test binary uses part of it.
#![allow(dead_code, unused_macros)]

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use experiment::RunOptions;

#[macro_use]
mod tiny_vit;

/// The bundled data sets (`datasets/` at the workspace root).
pub fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets")
}

/// A quiet run on the bundled data sets, writing results and its cache under `out`.
pub fn bundled(out: &Path) -> RunOptions {
    options(&datasets(), out)
}

/// Held while a test runs: Burn's CPU RNG is process-global, so runs must not interleave (a
/// test that failed holding it leaves it usable).
pub fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A quiet run in this process reading `root` (the data root) and writing results and its cache
/// under `out`.
pub fn options(root: &Path, out: &Path) -> RunOptions {
    RunOptions {
        data_root: root.to_path_buf(),
        results_root: out.join("results"),
        cache_root: out.join("cache"),
        quiet: true,
        workers: None,
        no_train: false,
    }
}

/// A `width`x`width` RGB PNG whose pixel (x, y) is `f(x, y)`.
pub fn png(path: &Path, width: u32, f: impl Fn(u32, u32) -> [u8; 3]) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = png::Encoder::new(file, width, width);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let pixels: Vec<u8> = (0..width * width)
        .flat_map(|i| f(i % width, i / width))
        .collect();
    encoder
        .write_header()
        .unwrap()
        .write_image_data(&pixels)
        .unwrap();
}

/// `root/{train,test}/{red,green,blue}/`: 12x12 images of one dominant colour per class, with a
/// little per-image texture; and `root-ood/`: grey stripes, no split folders.
pub fn image_trees(root: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let shapes = root.join("shapes");
    for (split, n) in [("train", 12), ("test", 4)] {
        for (c, class) in ["red", "green", "blue"].iter().enumerate() {
            let dir = shapes.join(split).join(class);
            std::fs::create_dir_all(&dir).unwrap();
            for i in 0..n {
                png(&dir.join(format!("{i}.png")), 12, |x, y| {
                    let mut rgb = [((x * 7 + y * 3 + i) % 40) as u8; 3];
                    rgb[c] = 200 + ((x + y) % 50) as u8;
                    rgb
                });
            }
        }
    }
    let ood = root.join("stripes");
    std::fs::create_dir_all(ood.join("any")).unwrap();
    for i in 0..6 {
        png(&ood.join("any").join(format!("{i}.png")), 10, |x, _| {
            [((x + i) % 2 * 255) as u8; 3]
        });
    }
    (shapes, ood)
}
