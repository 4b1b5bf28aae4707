//! Damaged checkpoints heal: a truncated, altered or missing file (model, optimiser or
//! `state.json`) is set aside and the model trained from scratch, giving exactly the weights of
//! an undamaged run; a state file written before checksums existed still loads.

mod common;

use std::error::Error as _;
use std::fs;
use std::path::Path;

use burn::tensor::Device;
use common::{halves, model, options, params, recipe, serial};
use data::{ImageDataset, Normalization};
use train::{
    Checkpoint, FileCheck, FitOptions, FitReport, ImageData, Loaded, fit, fit_with_report,
};

const EPOCHS: usize = 2;

/// A small task, and the parameters of its straight, checkpoint-free run.
struct Task {
    train: ImageDataset,
    norm: Normalization,
    straight: Vec<f32>,
}

impl Task {
    fn new(device: &Device) -> Self {
        let train = halves(32, 7);
        let norm = Normalization::fit(&train).unwrap();
        let mut task = Self {
            train,
            norm,
            straight: vec![],
        };
        let straight = fit(
            model(device),
            task.data(),
            &recipe(EPOCHS),
            &options(device, None),
        );
        task.straight = params(&straight.unwrap());
        task
    }

    fn data(&self) -> ImageData<'_> {
        ImageData {
            set: &self.train,
            norm: &self.norm,
        }
    }

    /// Trains with `checkpoint` (all epochs, or `stop_after`), as a fresh process would.
    fn fit(
        &self,
        device: &Device,
        checkpoint: &Checkpoint,
        stop_after: Option<usize>,
    ) -> (Vec<f32>, FitReport) {
        let opts = FitOptions {
            stop_after,
            ..options(device, Some(checkpoint.clone()))
        };
        let (model, report) =
            fit_with_report(model(device), self.data(), &recipe(EPOCHS), &opts).unwrap();
        (params(&model), report)
    }
}

/// Trains a checkpoint to the end, damages `file` in it with `damage`, trains again, and checks
/// that the damage was set aside and the weights are those of the straight run. Returns why
/// the file was found damaged.
fn heals(file: &str, damage: impl Fn(&Path)) -> String {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let task = Task::new(&device);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ckpt");
    let checkpoint = Checkpoint::new(&dir, "run");
    let (first, _) = task.fit(&device, &checkpoint, None);
    assert_eq!(first, task.straight);

    let damaged = dir.join(file);
    damage(&damaged);
    let evidence = fs::read(&damaged).ok();
    let (healed, report) = task.fit(&device, &checkpoint, None);
    let found = report.recovered.expect("the damage is reported");
    assert_eq!(found.file, damaged);
    let aside = root.path().join("ckpt.damaged");
    assert_eq!(found.set_aside, aside);
    // The damaged file is kept as it was, for inspection.
    assert_eq!(fs::read(aside.join(file)).ok(), evidence);
    assert_eq!(
        report.resumed_from, None,
        "a damaged checkpoint is not resumed"
    );
    assert_eq!(
        healed, task.straight,
        "retraining from scratch must reproduce the undamaged run exactly"
    );

    // The new checkpoint is sound, vouches for its files and remembers the recovery.
    let state = checkpoint.state().unwrap().unwrap();
    assert_eq!(report.state.as_ref(), Some(&state));
    assert_eq!(state.epochs_done, EPOCHS);
    let model_file = checkpoint.model_file(&state);
    assert_eq!(
        state.model,
        Some(FileCheck::of(&fs::read(model_file).unwrap()))
    );
    assert_eq!(
        state.history.recovered,
        [aside.join(file).display().to_string()]
    );
    // Read back again: a plain cache hit, nothing damaged.
    let (again, report) = task.fit(&device, &checkpoint, None);
    assert_eq!((report.recovered, report.resumed_from), (None, None));
    assert_eq!(again, task.straight);
    found.why
}

fn truncate(path: &Path) {
    let bytes = fs::read(path).unwrap();
    fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

/// Same length, 64 bytes flipped in the middle: only the checksum can tell.
fn flip_middle(path: &Path) {
    let mut bytes = fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid - 32..mid + 32]
        .iter_mut()
        .for_each(|b| *b ^= 0xA5);
    fs::write(path, bytes).unwrap();
}

#[test]
fn a_truncated_model_file_is_set_aside_and_retrained() {
    let why = heals(&format!("model-{EPOCHS}.bpk"), truncate);
    assert!(why.contains("truncated"), "{why}");
}

#[test]
fn a_same_length_corruption_is_caught_by_the_checksum() {
    let why = heals(&format!("model-{EPOCHS}.bpk"), flip_middle);
    assert!(why.contains("checksum mismatch"), "{why}");
}

#[test]
fn a_damaged_optimiser_file_is_set_aside_and_retrained() {
    let why = heals(&format!("optim-{EPOCHS}.bpk"), flip_middle);
    assert!(why.contains("checksum mismatch"), "{why}");
}

#[test]
fn a_missing_model_file_is_set_aside_and_retrained() {
    let why = heals(&format!("model-{EPOCHS}.bpk"), |p| {
        fs::remove_file(p).unwrap()
    });
    assert_eq!(why, "missing");
}

#[test]
fn an_unparsable_state_file_is_set_aside_and_retrained() {
    let why = heals("state.json", |p| {
        fs::write(p, "{\"epochs_done\": 2,").unwrap()
    });
    assert!(why.contains("not a checkpoint state"), "{why}");
}

/// `state.json` as written before checksums and history existed.
fn strip_to_old_style(dir: &Path) {
    let path = dir.join("state.json");
    let mut state: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let fields = state.as_object_mut().unwrap();
    for new in ["model", "optim", "history"] {
        assert!(fields.remove(new).is_some(), "{new} is written");
    }
    fs::write(&path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
}

#[test]
fn an_old_style_state_file_without_checksums_still_resumes() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let task = Task::new(&device);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ckpt");
    let checkpoint = Checkpoint::new(&dir, "run");
    task.fit(&device, &checkpoint, Some(1));
    strip_to_old_style(&dir);
    let old = checkpoint.state().unwrap().unwrap();
    assert_eq!((old.epochs_done, old.model, old.optim), (1, None, None));

    // Loading fills in the checks of the files it read.
    let optim = burn::optim::AdamWConfig::new().init();
    let Loaded::Checkpoint { state, .. } = checkpoint.load(model(&device), optim).unwrap() else {
        panic!("an old-style checkpoint should load");
    };
    let file = |name: &str| FileCheck::of(&fs::read(dir.join(name)).unwrap());
    assert_eq!(state.model, Some(file("model-1.bpk")));
    assert_eq!(state.optim, Some(file("optim-1.bpk")));

    let (resumed, report) = task.fit(&device, &checkpoint, None);
    assert_eq!(report.resumed_from, Some(1));
    assert_eq!(report.recovered, None);
    assert_eq!(resumed, task.straight);
    let done = checkpoint.state().unwrap().unwrap();
    assert_eq!(done.model, Some(file(&format!("model-{EPOCHS}.bpk"))));
    assert_eq!(done.history.resumed_from, [1]);
}

#[test]
fn a_second_damaged_checkpoint_is_set_aside_beside_the_first() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ckpt");
    let checkpoint = Checkpoint::new(&dir, "run");
    for aside in ["ckpt.damaged", "ckpt.damaged-2"] {
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("state.json"), "garbage").unwrap();
        let optim = burn::optim::AdamWConfig::new().init();
        let Loaded::Damaged(damage) = checkpoint.load(model(&device), optim).unwrap() else {
            panic!("garbage in state.json is damage");
        };
        assert_eq!(damage.set_aside, root.path().join(aside));
        assert!(!dir.exists(), "the folder was moved");
        assert!(root.path().join(aside).join("state.json").is_file());
        let shown = damage.to_string();
        assert!(
            shown.contains("damaged checkpoint") && shown.contains(aside),
            "{shown}"
        );
    }
}

#[test]
fn another_runs_checkpoint_is_still_an_error_and_left_in_place() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let task = Task::new(&device);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ckpt");
    task.fit(&device, &Checkpoint::new(&dir, "run-a"), Some(1));
    let opts = options(&device, Some(Checkpoint::new(&dir, "run-b")));
    let e = fit(model(&device), task.data(), &recipe(EPOCHS), &opts).unwrap_err();
    assert!(e.to_string().contains("another run"), "{e}");
    assert!(dir.join("state.json").is_file());
    assert!(!root.path().join("ckpt.damaged").exists());
}

/// The error and its sources, each message once: what the command line prints.
fn chain(e: &dyn std::error::Error) -> Vec<String> {
    std::iter::successors(Some(e), |&e| e.source())
        .map(ToString::to_string)
        .collect()
}

#[test]
fn a_checkpoint_that_cannot_be_written_names_its_file_once_and_keeps_the_cause() {
    let _guard = serial();
    let device = Device::flex().autodiff();
    let task = Task::new(&device);
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ckpt");
    // A folder where the first epoch's model file goes: the rename over it fails.
    let blocked = dir.join("model-1.bpk");
    fs::create_dir_all(&blocked).unwrap();
    let opts = options(&device, Some(Checkpoint::new(&dir, "run-a")));
    let e = fit(model(&device), task.data(), &recipe(EPOCHS), &opts).unwrap_err();
    let parts = chain(&e);
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(parts[0], blocked.display().to_string());
    let cause = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
    assert!(
        cause.is_some(),
        "the operating system's error is the source: {parts:?}"
    );
    assert!(!parts[1].contains("model-1.bpk"), "{parts:?}");
}
