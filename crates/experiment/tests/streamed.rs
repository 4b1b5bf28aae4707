//! Image folders' evaluation sets streamed from disk give exactly the results of the same sets
//! held in memory, and the plan's estimate counts them without decoding them; a checkpoint's
//! `preprocessor_config.json` (CLIP's defaults for a CLIP folder without one) sizes and
//! normalises the images, and `[data.preprocess]` overrides it.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use burn::tensor::Device;
use common::{image_trees, options};
use data::{ImageFolder, Preprocess};
use experiment::estimate::{DeviceSpec, Precision, estimate};
use experiment::eval_set::EvalSet;
use experiment::plan::with_cache;
use experiment::sets::{Prep, SeedData, load};
use experiment::{ExperimentConfig, run};
use importers::PREPROCESSOR_CONFIG;

/// Every `.npy` file under `dir`, by its path below `dir`.
fn npy_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "npy") {
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_folder_streamed_from_disk_scores_exactly_as_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let text = format!(
        r#"
[experiment]
name = "streamed"
seeds = [2]

[data]
dataset = {{ path = "{}" }}
ood = [{{ path = "{}", name = "stripes" }}]
image_size = 8
val_fraction = 0.25
test_limit = 10
eval_batch_size = 4
ood_score = ["msp", "mahalanobis"]
shift = [{{ corruption = "gaussian_noise", severities = [2] }}]

[backbone]
preset = "vit_tiny_28"
patch_size = 4
dropout = 0.1

[train]
epochs = 1
batch_size = 9

[eval]
save_predictions = true

[[method]]
kind = "single"

[[method]]
kind = "mc_dropout"
samples = 2
"#,
        shapes.display(),
        stripes.display()
    );
    let streamed = ExperimentConfig::parse(&text).unwrap();
    assert!(streamed.data.stream);
    let loaded = load(&streamed, dir.path()).unwrap();
    assert!(matches!(loaded.test, EvalSet::Disk(_)));
    assert!(loaded.ood.iter().all(|s| matches!(s, EvalSet::Disk(_))));
    let memory_text = (text.replace("image_size = 8", "image_size = 8\nstream = false"))
        .replace("name = \"streamed\"", "name = \"in_memory\"");
    let in_memory = ExperimentConfig::parse(&memory_text).unwrap();
    assert!(matches!(
        load(&in_memory, dir.path()).unwrap().test,
        EvalSet::Memory(_)
    ));

    // The same cache: both runs evaluate the same trained models.
    let a = run(&streamed, &options(dir.path(), dir.path())).unwrap();
    let b = run(&in_memory, &options(dir.path(), dir.path())).unwrap();
    assert_eq!(a.summary.methods.len(), 2);
    // Debug text compares every number exactly (NaN too: an OOD set has no accuracy).
    let same =
        |x: &dyn std::fmt::Debug, y: &dyn std::fmt::Debug| format!("{x:?}") == format!("{y:?}");
    for (x, y) in a.summary.methods.iter().zip(&b.summary.methods) {
        assert_eq!(x.name, y.name);
        assert!(x.ood_scores["mahalanobis"].contains_key("stripes"));
        assert!(!x.shift.is_empty());
        for (what, x, y) in [
            (
                "id",
                &x.id as &dyn std::fmt::Debug,
                &y.id as &dyn std::fmt::Debug,
            ),
            ("ood", &x.ood_scores, &y.ood_scores),
            ("shift", &x.shift, &y.shift),
            ("diversity", &x.diversity, &y.diversity),
            ("conformal", &x.conformal, &y.conformal),
        ] {
            assert!(same(x, y), "{what}: {x:?} against {y:?}");
        }
    }
    // Every saved prediction (logits, probabilities) byte for byte.
    let (x, y) = (npy_files(&a.dir), npy_files(&b.dir));
    assert!(
        x.keys()
            .any(|p| p.to_string_lossy().contains("ood-stripes")),
        "{:?}",
        x.keys()
    );
    assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>());
    for (path, bytes) in &x {
        assert!(bytes == &y[path], "{} differs", path.display());
    }
}

/// A copy of the importers' random `transformers` ViT (16x16 images) with `preprocessor` as its
/// `preprocessor_config.json`.
fn checkpoint_with(dir: &Path, preprocessor: &str) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/fixtures/vit");
    let checkpoint = dir.join("vit");
    std::fs::create_dir_all(&checkpoint).unwrap();
    for file in ["config.json", "model.safetensors"] {
        std::fs::copy(
            fixture.join("hf_vit_model").join(file),
            checkpoint.join(file),
        )
        .unwrap();
    }
    std::fs::write(checkpoint.join(PREPROCESSOR_CONFIG), preprocessor).unwrap();
    checkpoint
}

const PREPROCESSOR: &str = r#"{
  "do_resize": true, "size": {"shortest_edge": 20}, "resample": 3,
  "do_center_crop": true, "crop_size": {"height": 16, "width": 16},
  "do_normalize": true, "image_mean": [0.1, 0.2, 0.3], "image_std": [0.5, 0.25, 0.8]
}"#;

#[test]
fn a_checkpoints_preprocessor_config_sizes_and_normalises_the_images() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, _) = image_trees(dir.path());
    let checkpoint = checkpoint_with(dir.path(), PREPROCESSOR);
    let text = format!(
        r#"
[experiment]
name = "preprocessed"
seeds = [0]

[data]
dataset = {{ path = "{}" }}
val_fraction = 0.25

[backbone]
checkpoint = "{}"

[[method]]
kind = "single"
"#,
        shapes.display(),
        checkpoint.display()
    );
    let config = ExperimentConfig::parse(&text).unwrap();
    let loaded = load(&config, dir.path()).unwrap();
    let seed = SeedData::new(&config, &loaded, 0, None).unwrap();
    let Prep::Pixels(norm) = &seed.prep else {
        panic!("images prepared as texts")
    };
    assert_eq!(
        (&norm.mean[..], &norm.std[..]),
        (&[0.1, 0.2, 0.3][..], &[0.5, 0.25, 0.8][..])
    );
    // What the model gets equals the checkpoint's own preprocessing of the files (read
    // another way: `data`'s `transformers`-style path, which scales and normalises in one).
    let reference = Preprocess::from_hf_config(&checkpoint.join(PREPROCESSOR_CONFIG)).unwrap();
    let test = ImageFolder::open(&shapes)
        .unwrap()
        .split("test")
        .unwrap()
        .clone();
    let expected = test.read_batch(&reference, &[0, 5, 11]).unwrap();
    assert_eq!(expected.dims, [3, 16, 16]);
    let device = Device::flex();
    let input = seed.prep.set_data(&seed.sets.test);
    let got = match input.batch(&[0, 5, 11], None, &device).unwrap() {
        backbone::Input::Images(x) => x.into_data().try_to_vec::<f32>().unwrap(),
        backbone::Input::Tokens { .. } => panic!("tokens for images"),
    };
    assert_eq!(got.len(), expected.pixels.len());
    let worst = (got.iter().zip(&expected.pixels)).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst < 1e-5, "max difference {worst}");

    // `[data.preprocess]` replaces the checkpoint's mean / std and sizes.
    let overridden = text.replace(
        "val_fraction = 0.25",
        "val_fraction = 0.25\npreprocess = { crop = 12, mean = [0.5, 0.5, 0.5], std = [0.2, 0.2, 0.2] }",
    );
    let config = ExperimentConfig::parse(&overridden).unwrap();
    let loaded = load(&config, dir.path()).unwrap();
    assert_eq!(loaded.test.image_dims(), Some([3, 12, 12]));
    let norm = loaded.normalization.unwrap();
    assert_eq!((norm.mean, norm.std), (vec![0.5; 3], vec![0.2; 3]));
    // ...and so names another cached base model: the images it trains on differ.
    let base_fingerprint = |config: &ExperimentConfig| {
        let jobs = with_cache(config, dir.path(), &dir.path().join("cache")).unwrap();
        jobs[0]
            .fingerprint
            .clone()
            .expect("a base job's cache folder")
    };
    let plain = ExperimentConfig::parse(&text).unwrap();
    let normalised = ExperimentConfig::parse(&text.replace(
        "val_fraction = 0.25",
        "val_fraction = 0.25\npreprocess = { mean = [0.5, 0.5, 0.5], std = [0.2, 0.2, 0.2] }",
    ))
    .unwrap();
    assert_ne!(base_fingerprint(&plain), base_fingerprint(&normalised));

    // An `image_size` other than the checkpoint's crop replaces its sizes (the small stand-ins).
    let config =
        ExperimentConfig::parse(&text.replace("val_fraction = 0.25", "image_size = 8")).unwrap();
    assert_eq!(
        load(&config, dir.path()).unwrap().test.image_dims(),
        Some([3, 8, 8])
    );

    // Bad keys are refused naming the field.
    for (bad, field) in [
        (
            "preprocess = { mean = [0.5, 0.5, 0.5] }",
            "data.preprocess.std",
        ),
        (
            "preprocess = { mean = [0.5, 0.5, 0.5], std = [0.2, 0.0, 0.2] }",
            "data.preprocess.std",
        ),
        ("preprocess = { crop = 0 }", "data.preprocess.crop"),
    ] {
        let e = ExperimentConfig::parse(&text.replace("val_fraction = 0.25", bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{bad}: {e}");
    }
}

/// A CLIP checkpoint's images are preprocessed through the same path as every checkpoint's:
/// its folder's preprocessor_config.json, else CLIP's processor defaults (OpenAI's statistics);
/// `[data.preprocess]` overrides either.
#[test]
fn a_clip_checkpoint_preprocesses_as_its_folder_says_else_as_clip_does() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, _) = image_trees(dir.path());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../importers/tests/fixtures/clip/clip_tokenized");
    let text = |checkpoint: &Path, preprocess: &str| {
        format!(
            "[experiment]\nname = \"clip\"\nseeds = [0]\n[data]\ndataset = {{ path = \"{}\" }}\n\
             image_size = 16\n{preprocess}\n[backbone]\ncheckpoint = \"{}\"\nzero_shot = {{}}\n\
             [[method]]\nkind = \"single\"\n",
            shapes.display(),
            checkpoint.display()
        )
    };
    let normalization = |text: &str| {
        let config = ExperimentConfig::parse(text).unwrap_or_else(|e| panic!("{e}"));
        let norm = load(&config, dir.path()).unwrap().normalization.unwrap();
        (norm.mean, norm.std)
    };
    // OpenAI CLIP's mean / std, as published with its code.
    let clip = (
        vec![0.481_454_66, 0.457_827_5, 0.408_210_73],
        vec![0.268_629_54, 0.261_302_6, 0.275_777_1],
    );
    assert_eq!(normalization(&text(&fixture, "")), clip);

    let copy = dir.path().join("clip");
    std::fs::create_dir_all(&copy).unwrap();
    for file in [
        "config.json",
        "model.safetensors",
        "vocab.json",
        "merges.txt",
    ] {
        std::fs::copy(fixture.join(file), copy.join(file)).unwrap();
    }
    let processor = r#"{"size": {"shortest_edge": 16}, "crop_size": 16, "resample": 3,
        "image_mean": [0.1, 0.2, 0.3], "image_std": [0.5, 0.25, 0.8]}"#;
    std::fs::write(copy.join(PREPROCESSOR_CONFIG), processor).unwrap();
    let own = (vec![0.1, 0.2, 0.3], vec![0.5, 0.25, 0.8]);
    assert_eq!(normalization(&text(&copy, "")), own);
    let keys = "preprocess = { mean = [0.5, 0.5, 0.5], std = [0.2, 0.2, 0.2] }";
    assert_eq!(
        normalization(&text(&copy, keys)),
        (vec![0.5; 3], vec![0.2; 3])
    );
    assert_eq!(
        normalization(&text(&fixture, keys)),
        (vec![0.5; 3], vec![0.2; 3])
    );
}

/// `uqformer plan`'s estimate counts a streamed test set from the folder's index: a test image
/// that cannot be decoded is still counted, where reading the split into memory fails on it.
#[test]
fn the_estimate_counts_a_streamed_test_set_without_decoding_it() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, _) = image_trees(dir.path());
    std::fs::write(shapes.join("test/red/0.png"), b"not a png").unwrap();
    let text = format!(
        "[experiment]\nname = \"counted\"\nseeds = [0]\n[data]\ndataset = {{ path = \"{}\" }}\n\
         image_size = 8\nval_fraction = 0.25\n[backbone]\npreset = \"vit_tiny_28\"\n\
         patch_size = 4\n[[method]]\nkind = \"single\"\n",
        shapes.display()
    );
    let config = ExperimentConfig::parse(&text).unwrap();
    let h100 = DeviceSpec::named("h100").unwrap();
    let e = estimate(&config, dir.path(), h100, Precision::F32).unwrap();
    // 4 test images of each of 3 classes; 36 training images less a quarter for validation.
    assert_eq!(e.evaluation[0].samples, 12);
    assert_eq!(e.train_samples, 27);
    let in_memory = text.replace("image_size = 8", "image_size = 8\nstream = false");
    let config = ExperimentConfig::parse(&in_memory).unwrap();
    let error = estimate(&config, dir.path(), h100, Precision::F32)
        .err()
        .unwrap();
    assert!(error.to_string().contains("0.png"), "{error}");
}
