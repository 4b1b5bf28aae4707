//! Wall time of `hetdpt::compress` with a small budget, to size the quick start: a `vit_tiny_28`
//! trained briefly on 2000 images of the bundled Fashion-MNIST subset, then pruned.
//!
//! `cargo run --release -p hetdpt --example timing [-- path/to/config.toml]` from the
//! repository root; prints the report as JSON.

use std::time::Instant;

use backbone::ViTConfig;
use burn::module::Module;
use burn::tensor::Device;
use data::{Catalog, Normalization, Split, SubsetSize, stratified_subset};
use hetdpt::{Budget, HetDptConfig};
use train::{FitOptions, ImageData, TrainConfig, fit};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cfg: HetDptConfig = match std::env::args().nth(1) {
        Some(path) => toml::from_str(&std::fs::read_to_string(path)?)?,
        None => HetDptConfig {
            importance_steps: 20,
            importance_images: 500,
            map_images: 500,
            finetune_epochs: 1,
            budget: Budget::MinSpeedup(1.3),
            ..HetDptConfig::default()
        },
    };
    let full = Catalog::new("datasets").load_image_split("fashion_mnist_small", Split::Train)?;
    let picked = stratified_subset(&full.labels, SubsetSize::Total(2500), 0)?;
    let (train_set, val_set) = (full.subset(&picked[..2000]), full.subset(&picked[2000..]));
    let norm = Normalization::fit(&train_set)?;
    let train = ImageData {
        set: &train_set,
        norm: &norm,
    };
    let val = ImageData {
        set: &val_set,
        norm: &norm,
    };

    let vit = ViTConfig::vit_tiny_28().with_dropout(0.1);
    let device = Device::flex();
    let autodiff = device.clone().autodiff();
    autodiff.seed(0);
    let recipe = TrainConfig {
        epochs: 8,
        batch_size: 64,
        lr: 2e-3,
        ..TrainConfig::default()
    };
    let opts = FitOptions {
        device: autodiff.clone(),
        seed: 0,
        label: "base".into(),
        checkpoint: None,
        quiet: false,
        stop_after: None,
        distill: None,
        validation: None,
    };
    let start = Instant::now();
    let base = fit(vit.init(&autodiff)?, train, &recipe, &opts)?.valid();
    eprintln!("base trained in {:.1} s", start.elapsed().as_secs_f64());

    let start = Instant::now();
    let task = hetdpt::Task {
        base: &base,
        vit: &vit,
        train,
        val,
        device: &device,
        seed: 0,
    };
    let outcome = hetdpt::compress(&task, &cfg)?;
    eprintln!(
        "hetdpt::compress took {:.1} s",
        start.elapsed().as_secs_f64()
    );
    println!("{}", serde_json::to_string_pretty(&outcome.report)?);
    Ok(())
}
