//! The bounded-memory check of image folders (not a test): `generate DIR N` writes N small PNGs
//! (16x16, 10 classes) as `DIR/train/<class>/<i>.png`; `read DIR` indexes the tree and streams
//! every image through a CLIP-style preprocessing (shorter side to 32, bicubic, centre crop
//! 32x32, mean / std) in batches of 256, then prints the count, the time and the peak RSS.
//! `scripts/image_folder_memory.sh` runs both with `/usr/bin/time -v`.

use std::path::Path;
use std::time::Instant;

use data::{DataError, ImageFolder, Interpolation, Preprocess, Resize};
use rayon::prelude::*;

const CLASSES: usize = 10;
const SIDE: u32 = 16;
const BATCH: usize = 256;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["generate", dir, n] => generate(Path::new(dir), n.parse()?),
        ["read", dir] => read(Path::new(dir)),
        _ => Err("usage: image_folder_memory generate DIR N | read DIR".into()),
    }
}

fn generate(root: &Path, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    for class in 0..CLASSES {
        std::fs::create_dir_all(root.join(format!("train/class{class}")))?;
    }
    (0..n).into_par_iter().try_for_each(|i| {
        // A pattern that differs per image, so PNG compression does not make every file alike.
        let pixels: Vec<u8> = (0..SIDE * SIDE)
            .flat_map(|p| {
                let v = (i as u32).wrapping_mul(2_654_435_761) ^ (p * 31);
                [v as u8, (v >> 8) as u8, (v >> 16) as u8]
            })
            .collect();
        let path = root.join(format!("train/class{}/{i:06}.png", i % CLASSES));
        write_png(&path, &pixels)
    })?;
    println!(
        "generated {n} PNGs of {SIDE}x{SIDE} in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

fn write_png(path: &Path, rgb: &[u8]) -> Result<(), DataError> {
    let file =
        std::fs::File::create(path).map_err(|e| DataError::caused(path, "cannot create", e))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), SIDE, SIDE);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    (encoder
        .write_header()
        .and_then(|mut w| w.write_image_data(rgb)))
    .map_err(|e| DataError::caused(path, "cannot write the PNG", e))
}

fn read(root: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let start = Instant::now();
    let folder = ImageFolder::open(root)?;
    let index = folder.split("train").ok_or("no train split")?;
    let indexed = start.elapsed().as_secs_f64();
    let preprocess = Preprocess {
        resize: Some(Resize::ShortestEdge(32)),
        crop: Some([32, 32]),
        mean: [0.481_454_66, 0.457_827_5, 0.408_210_73],
        std: [0.268_629_54, 0.261_302_6, 0.275_777_1],
        interpolation: Interpolation::Bicubic,
        rescale: 1.0 / 255.0,
    };
    let (mut images, mut batches, mut checksum) = (0usize, 0usize, 0.0f64);
    for batch in index.stream(&preprocess, BATCH)? {
        let batch = batch?;
        images += batch.labels.len();
        batches += 1;
        // Touch every value, as a model would, so nothing is optimised away.
        checksum += batch.pixels.iter().map(|&x| f64::from(x)).sum::<f64>();
    }
    let total = start.elapsed().as_secs_f64();
    println!(
        "indexed {} images in {} classes in {indexed:.1} s; streamed {images} images in \
         {batches} batches of up to {BATCH} in {:.1} s ({:.0} images/s); checksum {checksum:.3}",
        index.len(),
        index.num_classes(),
        total - indexed,
        images as f64 / (total - indexed)
    );
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(peak) = status.lines().find(|l| l.starts_with("VmHWM")) {
        println!("peak RSS ({peak})");
    }
    if images != index.len() {
        return Err(format!("streamed {images} of {} images", index.len()).into());
    }
    Ok(())
}
