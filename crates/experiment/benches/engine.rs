//! The engine's speed on the quick-start model (`vit_tiny_28`, patch 7, 10 classes): training
//! throughput through `train::fit` (batch 32, AdamW, grad clip 1, the real loop with its batch
//! preparation) and evaluation latency at batch 256 and batch 1, and one MC Dropout sample (a
//! forward pass with dropout on) at batch 256.
//!
//! `cargo bench -p experiment --bench engine [-- ROUNDS]`. Each round trains one short epoch
//! and times both evaluations; the median and quartiles over rounds are printed, one line per
//! figure, as `name median q1 q3`, so two builds can be run alternately and compared
//! (`scripts/engine_ab.sh`). Threads: `RAYON_NUM_THREADS=1` for one core.

use std::time::Instant;

use backbone::{Gates, Mode, ViTConfig};
use burn::module::Module;
use burn::tensor::{Device, Distribution, Tensor};
use data::{ImageDataset, Normalization, Pixels};
use train::{FitOptions, ImageData, TrainConfig, fit};

const TRAIN_IMAGES: usize = 960;

fn main() {
    experiment::memory::keep_freed_memory();
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let device = Device::flex();
    // The quick start's backbone: dropout 0.1 in training and MC Dropout.
    let vit = ViTConfig::preset("vit_tiny_28")
        .expect("preset")
        .with_dropout(0.1);
    let set = synthetic(TRAIN_IMAGES, 0);
    let norm = Normalization::fit(&set).expect("norm");
    let config = TrainConfig {
        epochs: 1,
        batch_size: 32,
        lr: 1.5e-3,
        warmup_epochs: 0.1,
        ..TrainConfig::default()
    };
    let images = Tensor::<4>::random([256, 1, 28, 28], Distribution::Normal(0.0, 1.0), &device);
    let one = images.clone().narrow(0, 0, 1);

    let (mut train, mut eval256, mut eval1, mut mc256) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let autodiff = device.clone().autodiff();
        autodiff.seed(round as u64);
        let model = vit.init(&autodiff).expect("init");
        let opts = FitOptions {
            device: autodiff,
            seed: round as u64,
            label: "bench".into(),
            checkpoint: None,
            quiet: true,
            stop_after: None,
            distill: None,
        };
        let data = ImageData {
            set: &set,
            norm: &norm,
        };
        let t = Instant::now();
        let trained = fit(model, data, &config, &opts).expect("fit");
        train.push(TRAIN_IMAGES as f64 / t.elapsed().as_secs_f64());

        let model = trained.valid();
        let run = |x: &Tensor<4>, mode| {
            let _ = model.forward(x.clone(), &Gates::none(), mode).into_data();
        };
        run(&images, Mode::Deterministic);
        eval256.push(median_ms(5, || run(&images, Mode::Deterministic)));
        run(&one, Mode::Deterministic);
        eval1.push(median_ms(50, || run(&one, Mode::Deterministic)));
        // One MC Dropout sample: a forward pass with dropout on.
        mc256.push(median_ms(5, || run(&images, Mode::Stochastic)));
    }
    report("train_img_per_s", &mut train);
    report("eval_b256_ms", &mut eval256);
    report("eval_b1_ms", &mut eval1);
    report("mc_dropout_sample_b256_ms", &mut mc256);
}

/// Random grey images with labels, as a stand-in for Fashion-MNIST (speed does not depend on
/// the pixel values).
fn synthetic(n: usize, seed: u64) -> ImageDataset {
    let mut state = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    ImageDataset {
        name: "synthetic".into(),
        pixels: Pixels::U8((0..n * 28 * 28).map(|_| next() as u8).collect()),
        labels: (0..n).map(|_| (next() % 10) as u32).collect(),
        dims: [1, 28, 28],
        num_classes: 10,
    }
}

fn median_ms(calls: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..calls)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[calls / 2]
}

fn report(name: &str, values: &mut [f64]) {
    values.sort_by(f64::total_cmp);
    let q = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize];
    println!("{name} {:.3} {:.3} {:.3}", q(0.5), q(0.25), q(0.75));
}
