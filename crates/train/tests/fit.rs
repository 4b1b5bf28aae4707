//! The training loop end to end on a tiny ViT: it learns, a resumed run equals an
//! uninterrupted one, and a NaN loss stops training with the last checkpoint intact.

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;
use std::sync::Mutex;

use data::{ImageDataset, Normalization, Pixels};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use train::{
    Checkpoint, Distill, FitOptions, ImageData, TrainConfig, TrainError, fit, trainable_params,
};

/// Two classes of 8x8 images: a bright top half (class 0) or a bright bottom half (class 1).
fn halves(n: usize, seed: u64) -> ImageDataset {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut pixels = Vec::with_capacity(n * 64);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let class = (i % 2) as u32;
        for row in 0..8 {
            let bright = (row < 4) == (class == 0);
            for _ in 0..8 {
                pixels.push(if bright { 0.7 } else { 0.2 } + rng.random_range(-0.2f32..0.2));
            }
        }
        labels.push(class);
    }
    ImageDataset {
        name: "halves".into(),
        pixels: Pixels::F32(pixels),
        labels,
        dims: [1, 8, 8],
        num_classes: 2,
    }
}

fn model(device: &Device) -> VisionTransformer {
    device.seed(3);
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(16)
        .with_n_layers(1)
        .with_n_heads(2)
        .with_d_mlp(32)
        .with_num_classes(2)
        .with_dropout(0.1)
        .init(device)
        .unwrap()
}

fn recipe(epochs: usize) -> TrainConfig {
    TrainConfig {
        epochs,
        batch_size: 16,
        lr: 3e-3,
        warmup_epochs: 0.5,
        label_smoothing: 0.1,
        ..Default::default()
    }
}

/// Burn's flex RNG is global: tests that seed it must not interleave.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn options(device: &Device, checkpoint: Option<Checkpoint>) -> FitOptions {
    FitOptions {
        device: device.clone(),
        seed: 11,
        label: "test".into(),
        checkpoint,
        quiet: true,
        stop_after: None,
        distill: None,
    }
}

fn accuracy(
    model: &VisionTransformer,
    set: &ImageDataset,
    norm: &Normalization,
    device: &Device,
) -> f64 {
    let indices: Vec<usize> = (0..set.len()).collect();
    let data = ImageData { set, norm };
    let logits = model.forward(
        data.batch(&indices, None, device).unwrap(),
        &Gates::none(),
        Mode::Deterministic,
    );
    let predicted = logits
        .argmax(1)
        .into_data()
        .convert::<i64>()
        .try_into_vec::<i64>()
        .unwrap();
    predicted
        .iter()
        .zip(&set.labels)
        .filter(|(p, l)| **p == **l as i64)
        .count() as f64
        / set.len() as f64
}

/// The model's function, compared bit for bit: deterministic logits on a fixed probe batch.
fn params(model: &VisionTransformer) -> Vec<f32> {
    let device = Device::flex();
    let probe = halves(16, 99);
    let norm = Normalization::new(vec![0.0], vec![1.0]).unwrap();
    let indices: Vec<usize> = (0..16).collect();
    let images = ImageData {
        set: &probe,
        norm: &norm,
    }
    .batch(&indices, None, &device)
    .unwrap();
    model
        .valid()
        .forward(images, &Gates::none(), Mode::Deterministic)
        .into_data()
        .try_into_vec::<f32>()
        .unwrap()
}

#[test]
fn learns_a_separable_task() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let train = halves(128, 1);
    let test = halves(64, 2);
    let norm = Normalization::fit(&train).unwrap();
    let before = accuracy(&model(&device).valid(), &test, &norm, &Device::flex());
    let trained = fit(
        model(&device),
        ImageData {
            set: &train,
            norm: &norm,
        },
        &recipe(10),
        &options(&device, None),
    )
    .unwrap();
    let after = accuracy(&trained.valid(), &test, &norm, &Device::flex());
    assert!(after >= 0.95, "accuracy {after} (before training {before})");
}

#[test]
fn distillation_follows_the_teacher_over_the_labels() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let train = halves(128, 1);
    let test = halves(64, 2);
    let norm = Normalization::fit(&train).unwrap();
    let data = ImageData {
        set: &train,
        norm: &norm,
    };
    let teacher = fit(model(&device), data, &recipe(10), &options(&device, None))
        .unwrap()
        .valid();
    assert!(accuracy(&teacher, &test, &norm, &Device::flex()) >= 0.95);
    // Flipped labels alone would teach the opposite function; with alpha = 1 only the
    // teacher's hard labels count.
    let mut flipped = train.clone();
    flipped.labels.iter_mut().for_each(|l| *l = 1 - *l);
    let opts = FitOptions {
        distill: Some(Distill {
            teacher: teacher.into(),
            alpha: 1.0,
            temperature: 0.0,
        }),
        ..options(&device, None)
    };
    let data = ImageData {
        set: &flipped,
        norm: &norm,
    };
    let student = fit(model(&device), data, &recipe(10), &opts)
        .unwrap()
        .valid();
    let after = accuracy(&student, &test, &norm, &Device::flex());
    assert!(after >= 0.95, "student accuracy {after} on the true labels");
}

#[test]
fn resumed_run_equals_uninterrupted_run() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let train = halves(64, 4);
    let norm = Normalization::fit(&train).unwrap();
    let data = ImageData {
        set: &train,
        norm: &norm,
    };
    // Augmentation and dropout on: their draws must resume exactly too.
    let recipe = |epochs| TrainConfig {
        crop_padding: 1,
        ..recipe(epochs)
    };
    let straight = fit(model(&device), data, &recipe(3), &options(&device, None)).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let checkpoint = Checkpoint::new(dir.path(), "run-a");
    let killed = FitOptions {
        stop_after: Some(1),
        ..options(&device, Some(checkpoint.clone()))
    };
    fit(model(&device), data, &recipe(3), &killed).unwrap();
    let after_one = checkpoint.state().unwrap().unwrap();
    assert_eq!(after_one.epochs_done, 1);
    // 64 samples in batches of 16: 4 steps and 64 samples an epoch.
    assert_eq!((after_one.totals.steps, after_one.totals.samples), (4, 64));
    // A fresh process: a freshly initialised model, then the checkpoint takes over.
    let resumed = fit(
        model(&device),
        data,
        &recipe(3),
        &options(&device, Some(checkpoint.clone())),
    )
    .unwrap();
    let done = checkpoint.state().unwrap().unwrap();
    assert_eq!(done.epochs_done, 3);
    // The totals carry over the interruption: what the three epochs cost, not the last two.
    assert_eq!((done.totals.steps, done.totals.samples), (12, 192));
    assert!(done.totals.wall_seconds > after_one.totals.wall_seconds);
    assert_eq!(
        params(&resumed),
        params(&straight),
        "resuming must reproduce the uninterrupted run exactly"
    );

    let other = Checkpoint::new(dir.path(), "run-b");
    let e = fit(
        model(&device),
        data,
        &recipe(3),
        &options(&device, Some(other)),
    )
    .unwrap_err();
    assert!(e.to_string().contains("another run"), "{e}");
}

#[test]
fn nan_loss_stops_with_the_last_checkpoint_intact() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let good = halves(32, 5);
    let norm = Normalization::fit(&good).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = Checkpoint::new(dir.path(), "run");
    let once = FitOptions {
        stop_after: Some(1),
        ..options(&device, Some(checkpoint.clone()))
    };
    let after_one = fit(
        model(&device),
        ImageData {
            set: &good,
            norm: &norm,
        },
        &recipe(3),
        &once,
    )
    .unwrap();

    let mut poisoned = good.clone();
    if let Pixels::F32(p) = &mut poisoned.pixels {
        p.iter_mut().for_each(|v| *v = f32::NAN);
    }
    let e = fit(
        model(&device),
        ImageData {
            set: &poisoned,
            norm: &norm,
        },
        &recipe(3),
        &options(&device, Some(checkpoint.clone())),
    )
    .unwrap_err();
    assert!(
        matches!(e, TrainError::NonFiniteLoss { epoch: 1, .. }),
        "{e}"
    );
    assert!(
        e.to_string().contains("NaN") && e.to_string().contains("checkpoint is intact"),
        "{e}"
    );
    assert_eq!(checkpoint.state().unwrap().unwrap().epochs_done, 1);
    let optim = burn::optim::AdamWConfig::new().init();
    let (restored, _, state) = checkpoint.load(model(&device), optim).unwrap().unwrap();
    assert_eq!(state.epochs_done, 1);
    assert_eq!(params(&restored), params(&after_one));
}

#[test]
fn trainable_params_leave_out_frozen_ones() {
    let _guard = serial();
    let autodiff = Device::flex().autodiff();
    let set = halves(4, 9);
    let norm = Normalization::fit(&set).unwrap();
    let images = (ImageData {
        set: &set,
        norm: &norm,
    })
    .batch(&[0, 1, 2, 3], None, &autodiff)
    .unwrap();
    let forward = |m: &VisionTransformer| {
        m.forward(images.clone(), &Gates::none(), Mode::Deterministic)
            .into_data()
            .to_vec::<f32>()
            .unwrap()
    };
    // Counting draws no weight: a model counted before its first forward pass computes what
    // an uncounted one does.
    // (Each model's weights are drawn at its first forward, right after `model` seeds the device.)
    let counted = model(&autodiff);
    assert_eq!(trainable_params(&counted), counted.num_params());
    let counted_out = forward(&counted);
    let plain = model(&autodiff);
    assert_eq!(counted_out, forward(&plain));
    // A frozen part is a trained one (its weights drawn, here by that forward pass): what is
    // left is the parameters outside the frozen embedding, counted part by part.
    let vit = counted;
    assert_eq!(trainable_params(&vit), vit.num_params());
    let embedding =
        vit.patch_embed.num_params() + vit.cls_token.num_params() + vit.pos_embed.num_params();
    let mut frozen = vit.clone();
    frozen.patch_embed = frozen.patch_embed.no_grad();
    frozen.cls_token = frozen.cls_token.no_grad();
    frozen.pos_embed = frozen.pos_embed.no_grad();
    assert!(embedding > 0);
    assert_eq!(trainable_params(&frozen), vit.num_params() - embedding);
    // Off autodiff nothing trains.
    assert_eq!(trainable_params(&model(&Device::flex())), 0);
}
