//! A stop request (what SIGINT/SIGTERM record) ends training before its next step: the call
//! fails with `Interrupted`, naming the epoch, and the checkpoint of the last finished epoch is
//! left byte for byte as it was, with no temporary file beside it. Its own test binary: the
//! request is process-wide and cannot be taken back.

#[allow(dead_code)]
mod common;

use std::fs;
use std::path::Path;

use burn::tensor::Device;
use common::{halves, model, options, recipe, serial};
use data::Normalization;
use signal_hook::consts::SIGTERM;
use train::{Checkpoint, FitOptions, ImageData, TrainError, fit, interrupt};

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<_> = (fs::read_dir(dir).unwrap())
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, fs::read(&path).unwrap())
        })
        .collect();
    all.sort();
    all
}

#[test]
fn a_stop_request_ends_training_at_the_next_step_and_keeps_the_last_checkpoint() {
    let _serial = serial();
    let device = Device::flex().autodiff();
    let train = halves(32, 7);
    let norm = Normalization::fit(&train).unwrap();
    let data = || ImageData {
        set: &train,
        norm: &norm,
    };
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = Checkpoint::new(dir.path().join("ck"), "fp");
    let opts = options(&device, Some(checkpoint.clone()));

    // One epoch of three done and checkpointed, as a killed run would leave it.
    let one = FitOptions {
        stop_after: Some(1),
        ..opts.clone()
    };
    fit(model(&device), data(), &recipe(3), &one).unwrap();
    let before = files(checkpoint.dir());
    assert!(before.iter().any(|(name, _)| name == "state.json"));

    interrupt::request(SIGTERM);
    assert_eq!(interrupt::requested(), Some(SIGTERM));
    let e = fit(model(&device), data(), &recipe(3), &opts).unwrap_err();
    match &e {
        TrainError::Interrupted {
            epochs_done,
            epochs,
            checkpointed,
            ..
        } => assert_eq!((*epochs_done, *epochs, *checkpointed), (1, 3, true)),
        other => panic!("expected Interrupted, got {other:?}"),
    }
    let message = e.to_string();
    assert_eq!(
        message,
        "test: stopped by SIGTERM in epoch 2 of 3; its checkpoint of epoch 1 is intact and a \
         rerun resumes from it"
    );
    assert_eq!(
        files(checkpoint.dir()),
        before,
        "the checkpoint is untouched, nothing added"
    );

    // Without a checkpoint nothing is kept, and the message says so.
    let e = fit(model(&device), data(), &recipe(3), &options(&device, None)).unwrap_err();
    assert!(
        e.to_string()
            .ends_with("in epoch 1 of 3; no epoch was finished, so nothing of it is kept"),
        "{e}"
    );
}
