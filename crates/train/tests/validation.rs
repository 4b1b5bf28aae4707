//! The validation pass after each epoch: it records the model's loss and accuracy on the
//! validation set (checked against the cross-entropy computed here, on the host), it leaves the
//! training bit for bit as it was without it, and old records without it still read back.

mod common;

use backbone::{Gates, Mode, VisionTransformer};
use burn::module::Module;
use burn::tensor::Device;
use common::{halves, model, options, params, recipe, serial};
use data::{ImageDataset, Normalization};
use train::{
    Checkpoint, CheckpointState, EpochRecord, FitOptions, History, ImageData, TrainConfig,
    TrainError, fit_with_report,
};

/// Dropout (the model's 0.1), augmentation and label smoothing on: every random stream the
/// training draws from is in use.
fn noisy_recipe(epochs: usize) -> TrainConfig {
    TrainConfig {
        crop_padding: 1,
        flip: true,
        ..recipe(epochs)
    }
}

/// Trains 3 epochs with a checkpoint in `dir` (for its log), validated on `val` if given.
fn train(
    device: &Device,
    data: ImageData<'_>,
    val: Option<ImageData<'_>>,
    dir: &std::path::Path,
) -> (VisionTransformer, CheckpointState) {
    let opts = FitOptions {
        validation: val.map(Into::into),
        ..options(device, Some(Checkpoint::new(dir, "validation-test")))
    };
    let (trained, report) = fit_with_report(model(device), data, &noisy_recipe(3), &opts).unwrap();
    (trained, report.state.unwrap())
}

/// Mean cross-entropy, accuracy and mean `-log p` over all classes (the label smoothing's
/// term) of the model's deterministic logits, in f64 on the host.
fn measured_here(
    model: &VisionTransformer,
    set: &ImageDataset,
    norm: &Normalization,
) -> (f64, f64, f64) {
    let device = Device::flex();
    let indices: Vec<usize> = (0..set.labels.len()).collect();
    let images = ImageData { set, norm }
        .batch(&indices, None, &device)
        .unwrap();
    let logits = (model.valid())
        .forward(images, &Gates::none(), Mode::Deterministic)
        .into_data()
        .try_into_vec::<f32>()
        .unwrap();
    let classes = set.num_classes;
    let (mut loss, mut correct, mut uniform) = (0.0, 0, 0.0);
    for (row, &label) in logits.chunks_exact(classes).zip(&set.labels) {
        let row: Vec<f64> = row.iter().map(|&v| f64::from(v)).collect();
        let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let log_sum = max + row.iter().map(|v| (v - max).exp()).sum::<f64>().ln();
        loss += log_sum - row[label as usize];
        uniform += row.iter().map(|v| log_sum - v).sum::<f64>() / classes as f64;
        let best = (0..classes).fold(0, |b, k| if row[k] > row[b] { k } else { b });
        correct += usize::from(best == label as usize);
    }
    let n = set.labels.len() as f64;
    (loss / n, correct as f64 / n, uniform / n)
}

#[test]
fn validation_leaves_the_training_bit_for_bit_unchanged() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let (train_set, val_set) = (halves(48, 21), halves(20, 22));
    let norm = Normalization::fit(&train_set).unwrap();
    let data = ImageData {
        set: &train_set,
        norm: &norm,
    };
    let val = ImageData {
        set: &val_set,
        norm: &norm,
    };
    let (dir_without, dir_with) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (without, plain) = train(&device, data, None, dir_without.path());
    let (with, validated) = train(&device, data, Some(val), dir_with.path());
    assert_eq!(
        params(&without),
        params(&with),
        "validation changed the weights"
    );
    let curve = |s: &CheckpointState| -> Vec<(u64, u64)> {
        (s.history.epochs.iter())
            .map(|e| (e.loss.to_bits(), e.accuracy.to_bits()))
            .collect()
    };
    assert_eq!(
        curve(&plain),
        curve(&validated),
        "validation changed the losses"
    );
    assert_eq!(plain.totals.steps, validated.totals.steps);
    assert!(plain.history.epochs.iter().all(|e| e.val_loss.is_none()));
    assert!(
        validated
            .history
            .epochs
            .iter()
            .all(|e| e.val_loss.is_some())
    );
}

#[test]
fn val_loss_is_the_unsmoothed_cross_entropy_on_the_validation_set() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    // 20 validation samples in batches of 16: a partial last batch weighs by its size.
    let (train_set, val_set) = (halves(48, 31), halves(20, 32));
    let norm = Normalization::fit(&train_set).unwrap();
    let data = ImageData {
        set: &train_set,
        norm: &norm,
    };
    let val = ImageData {
        set: &val_set,
        norm: &norm,
    };
    let dir = tempfile::tempdir().unwrap();
    let (trained, state) = train(&device, data, Some(val), dir.path());
    let last = state.history.epochs.last().unwrap();
    let (loss, accuracy, uniform) = measured_here(&trained, &val_set, &norm);
    let val_loss = last.val_loss.unwrap();
    assert!(
        (val_loss - loss).abs() < 1e-5,
        "val_loss {val_loss}, computed here {loss}"
    );
    assert_eq!(last.val_accuracy, Some(accuracy));
    // The recipe smooths labels by 0.1, which the validation loss leaves out; the smoothed
    // loss is far enough from it that the comparison above tells them apart.
    let smoothed = 0.9 * loss + 0.1 * uniform;
    assert!((smoothed - loss).abs() > 1e-3, "{smoothed} vs {loss}");
    // The checkpoint folder's table has the columns too.
    let csv = std::fs::read_to_string(dir.path().join(train::TRAINING_CSV)).unwrap();
    let last_row = csv.lines().last().unwrap();
    assert!(
        last_row.ends_with(&format!(",{val_loss:.6},{accuracy:.6}")),
        "{last_row}"
    );
}

#[test]
fn an_empty_validation_set_is_refused_before_training() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let train_set = halves(32, 41);
    let mut empty = halves(2, 42);
    empty.name = "held-out".into();
    empty.labels.clear();
    let norm = Normalization::fit(&train_set).unwrap();
    let opts = FitOptions {
        validation: Some(
            ImageData {
                set: &empty,
                norm: &norm,
            }
            .into(),
        ),
        ..options(&device, None)
    };
    let data = ImageData {
        set: &train_set,
        norm: &norm,
    };
    match fit_with_report(model(&device), data, &recipe(1), &opts) {
        Err(TrainError::Invalid(why)) => {
            assert!(why.contains("validation set held-out is empty"), "{why}")
        }
        other => panic!("expected an error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn records_without_validation_read_back_and_tabulate_with_empty_cells() {
    // A checkpoint state's epoch as written before validation existed.
    let old = r#"{"epochs":[{"epoch":1,"loss":0.5,"accuracy":0.75,"seconds":2.0}]}"#;
    let history: History = serde_json::from_str(old).unwrap();
    let epoch = history.epochs[0];
    assert_eq!((epoch.val_loss, epoch.val_accuracy), (None, None));
    // Written again, it stays as it was.
    let again = serde_json::to_string(&history).unwrap();
    assert_eq!(again, old);
    let with = History {
        epochs: vec![
            epoch,
            EpochRecord {
                epoch: 2,
                val_loss: Some(0.25),
                val_accuracy: Some(0.875),
                ..epoch
            },
        ],
        ..History::default()
    };
    assert_eq!(
        with.training_csv(),
        "epoch,loss,accuracy,seconds,val_loss,val_accuracy\n\
         1,0.500000,0.750000,2.000,,\n\
         2,0.500000,0.750000,2.000,0.250000,0.875000\n"
    );
}
