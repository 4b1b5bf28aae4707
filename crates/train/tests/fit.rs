//! The training loop end to end on a tiny ViT: it learns, a resumed run equals an
//! uninterrupted one (and says it resumed), and a NaN loss stops training with the last
//! checkpoint intact. Damaged checkpoints: `heal.rs`.

mod common;

use backbone::{Gates, Mode, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;

use common::{halves, model, options, params, recipe, serial};
use data::{BatchPlan, ImageDataset, Normalization, Pixels};
use train::{
    Checkpoint, Distill, FitOptions, ImageData, Loaded, TrainConfig, TrainError, fit,
    fit_with_report, trainable_params,
};

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
        &recipe(20),
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
    let teacher = fit(model(&device), data, &recipe(20), &options(&device, None))
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
    let student = fit(model(&device), data, &recipe(20), &opts)
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
    assert!(after_one.history.resumed_from.is_empty());
    // A fresh process: a freshly initialised model, then the checkpoint takes over (printing
    // the `resumed ...` line, which libtest shows on failure or with --nocapture).
    let resume = options(&device, Some(checkpoint.clone()));
    let (resumed, report) = fit_with_report(model(&device), data, &recipe(3), &resume).unwrap();
    assert_eq!(report.resumed_from, Some(1));
    assert_eq!(report.recovered, None);
    let done = checkpoint.state().unwrap().unwrap();
    assert_eq!(report.state.as_ref(), Some(&done));
    assert_eq!(done.epochs_done, 3);
    assert_eq!(
        done.history.resumed_from,
        [1],
        "the resume is recorded in state.json"
    );
    // The totals carry over the interruption: what the three epochs cost, not the last two.
    assert_eq!((done.totals.steps, done.totals.samples), (12, 192));
    assert!(done.totals.wall_seconds > after_one.totals.wall_seconds);
    assert_eq!(
        params(&resumed),
        params(&straight),
        "resuming must reproduce the uninterrupted run exactly"
    );
    // The epoch log spans both sessions and matches an uninterrupted run's, epoch by epoch.
    let other = tempfile::tempdir().unwrap();
    let whole = Checkpoint::new(other.path(), "run-a");
    fit(
        model(&device),
        data,
        &recipe(3),
        &options(&device, Some(whole.clone())),
    )
    .unwrap();
    let reference = whole.state().unwrap().unwrap().history.epochs;
    let log = &done.history.epochs;
    assert_eq!(log.iter().map(|e| e.epoch).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(after_one.history.epochs[..], log[..1]);
    for (a, b) in log.iter().zip(&reference) {
        assert_eq!((a.loss, a.accuracy), (b.loss, b.accuracy));
        assert!(a.loss.is_finite() && (0.0..=1.0).contains(&a.accuracy) && a.seconds > 0.0);
    }
    let csv = std::fs::read_to_string(dir.path().join(train::TRAINING_CSV)).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "epoch,loss,accuracy,seconds,val_loss,val_accuracy");
    assert_eq!(rows.len(), 4);
    assert!(rows[3].starts_with(&format!("3,{:.6},{:.6},", log[2].loss, log[2].accuracy)));

    // Fully trained: read back, which is no resume; the recorded history stays.
    let (cached, report) = fit_with_report(model(&device), data, &recipe(3), &resume).unwrap();
    assert_eq!(report.resumed_from, None);
    assert_eq!(report.state.unwrap().history.resumed_from, [1]);
    assert_eq!(params(&cached), params(&straight));

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
    let Loaded::Checkpoint {
        model: restored,
        state,
        ..
    } = checkpoint.load(model(&device), optim).unwrap()
    else {
        panic!("the checkpoint after one epoch should load");
    };
    assert_eq!(state.epochs_done, 1);
    assert_eq!(params(&restored), params(&after_one));
}

/// Losses are read back a window of steps at a time: the error still names the first step
/// whose loss was not finite, not the step at which the window was read.
#[test]
fn nan_loss_names_its_own_step_within_a_read_window() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let mut set = halves(128, 5);
    let opts = options(&device, None);
    let recipe = recipe(1);
    // The first image of step 5 (batch size 16, so steps 0-4 hold no poisoned image).
    let plan = BatchPlan::new(set.len(), recipe.batch_size, Some(opts.seed), true).unwrap();
    let poisoned = plan.epoch(0).nth(5).unwrap()[0];
    let norm = Normalization::fit(&set).unwrap();
    if let Pixels::F32(p) = &mut set.pixels {
        p[poisoned * 64] = f32::NAN;
    }
    let e = fit(
        model(&device),
        ImageData {
            set: &set,
            norm: &norm,
        },
        &recipe,
        &opts,
    )
    .unwrap_err();
    match e {
        TrainError::NonFiniteLoss {
            epoch: 0,
            step: 5,
            loss,
            ..
        } => assert!(loss.is_nan()),
        e => panic!("expected a NaN loss at epoch 0, step 5: {e}"),
    }
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
            .try_to_vec::<f32>()
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
