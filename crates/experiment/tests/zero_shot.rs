//! CLIP's zero-shot classifier as an experiment's base model: `single`, `mc_dropout` and Hydra's
//! zero-shot mode on a random CLIP checkpoint (the importers' fixture, with its tokenizer) and
//! generated image folders, scored with MSP and the Mahalanobis detector on the image embeddings; and the
//! `[backbone] zero_shot` keys refused where they do not fit, naming the field or method.

mod common;

use std::path::{Path, PathBuf};

use backbone::{Classifier, Gates, Input, Mode};
use burn::module::Module;
use burn::tensor::{Device, Tensor, TensorData};
use common::{image_trees, options};
use data::{ImageIndex, Interpolation, Preprocess, Resize};
use experiment::estimate::{DeviceSpec, Precision, estimate};
use experiment::{ExperimentConfig, run};
use importers::{clip_zero_shot, load_clip, token_batch};
use report::MethodOutputs;

const TEMPLATES: [&str; 2] = ["a photo of a {}.", "a {} thing"];

fn clip_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/fixtures/clip/clip_tokenized")
}

/// The zero-shot run on `shapes` (classes blue, green, red) with `stripes` as the OOD set, with
/// `backbone` and `methods` as given.
fn config_text(shapes: &Path, stripes: &Path, backbone: &str, methods: &str) -> String {
    format!(
        r#"
[experiment]
name = "clip_zero_shot"
seeds = [0]

[data]
dataset = {{ path = "{}" }}
ood = [{{ path = "{}", name = "stripes" }}]
image_size = 16
val_fraction = 0.25
eval_batch_size = 8
ood_score = ["msp", "mahalanobis"]

[backbone]
checkpoint = "{}"
dropout = 0.1
{backbone}

[eval]
save_predictions = true

{methods}
"#,
        shapes.display(),
        stripes.display(),
        clip_fixture().display()
    )
}

const METHODS: &str = r#"
[[method]]
kind = "single"

[[method]]
kind = "mc_dropout"
samples = 3

[[method]]
kind = "hydra"
members = 2
importance = "taylor"
keep = 2
calibration_samples = 8
train = { epochs = 0 }
"#;

/// A `.npy` file of float32 values (the header skipped).
fn npy_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap();
    let header = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    (bytes[10 + header..].chunks_exact(4))
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// OpenAI CLIP's mean / std, as published with its code.
const CLIP_MEAN: [f32; 3] = [0.481_454_66, 0.457_827_5, 0.408_210_73];
const CLIP_STD: [f32; 3] = [0.268_629_54, 0.261_302_6, 0.275_777_1];

/// The test images read here as CLIP's processor reads them (the fixture folder has no
/// preprocessor_config.json, so its defaults): the shorter side resized to the tower's 16 with
/// `filter` (CLIP's is bicubic), centre-cropped, normalised with OpenAI CLIP's statistics.
fn test_pixels(shapes: &Path, filter: Interpolation, device: &Device) -> Tensor<4> {
    let index = ImageIndex::open(&shapes.join("test"), "shapes", "test").unwrap();
    let preprocess = Preprocess {
        resize: Some(Resize::ShortestEdge(16)),
        crop: Some([16, 16]),
        mean: [0.0; 3],
        std: [1.0; 3],
        interpolation: filter,
        rescale: 1.0 / 255.0,
    };
    let set = index.load(&preprocess).unwrap();
    let mut values = set.batch_f32(&(0..set.len()).collect::<Vec<_>>());
    for (i, v) in values.iter_mut().enumerate() {
        let c = i / 256 % 3;
        *v = (*v - CLIP_MEAN[c]) / CLIP_STD[c];
    }
    Tensor::from_data(TensorData::new(values, [set.len(), 3, 16, 16]), device)
}

fn unit(x: Tensor<2>) -> Tensor<2> {
    let norm = x.clone().powf_scalar(2.0).sum_dim(1).sqrt();
    x / norm
}

fn assert_close(found: &[f32], expected: &[f32], what: &str) {
    assert_eq!(found.len(), expected.len(), "{what}");
    let worst = (found.iter().zip(expected))
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-4, "{what}: max |diff| {worst}");
}

#[test]
fn single_mc_dropout_and_hydra_run_on_a_clip_zero_shot_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let backbone = format!("zero_shot = {{ templates = {TEMPLATES:?} }}");
    let config = ExperimentConfig::parse(&config_text(&shapes, &stripes, &backbone, METHODS))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = run(&config, &options(dir.path(), dir.path())).unwrap();
    // Nothing was trained, so nothing is missing from the cache.
    let mut no_train = options(dir.path(), dir.path());
    no_train.no_train = true;
    run(&config, &no_train).unwrap();
    let names: Vec<&str> = (out.summary.methods.iter())
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(names, ["single", "mc_dropout", "hydra"]);
    for m in &out.summary.methods {
        assert!(
            m.id.nll.is_finite() && m.id.accuracy.is_finite(),
            "{}",
            m.name
        );
        for score in ["msp", "mahalanobis"] {
            let auroc = m.ood_scores[score]["stripes"].auroc;
            assert!((0.0..=1.0).contains(&auroc), "{} {score}: {auroc}", m.name);
        }
    }

    // The single model's logits: exp(logit_scale) times the cosine of each image embedding with
    // each class's mean normalised prompt embedding, from the importer's two towers.
    let device = Device::flex();
    let clip = load_clip(&clip_fixture(), &device).unwrap();
    let pixels = test_pixels(&shapes, Interpolation::Bicubic, &device);
    // The 12-pixel images are upsampled: the filter shows in the pixels the run must match.
    let bilinear = test_pixels(&shapes, Interpolation::Bilinear, &device);
    let filter_gap = (pixels.clone() - bilinear).abs().max().into_scalar::<f32>();
    assert!(
        filter_gap > 1e-2,
        "bicubic and bilinear agree: {filter_gap}"
    );
    let images = unit(clip.model.image_embeds(pixels.clone()));
    let tokenizer = clip.tokenizer.as_ref().unwrap();
    let classes = ["blue", "green", "red"];
    let class_embeds: Vec<Tensor<2>> = (classes.iter())
        .map(|class| {
            let texts: Vec<String> = TEMPLATES.iter().map(|t| t.replace("{}", class)).collect();
            let positions = clip.config.text.max_positions;
            let (ids, mask) = token_batch(tokenizer, &texts, positions, &device).unwrap();
            unit(unit(clip.model.text_embeds(ids, mask)).mean_dim(0))
        })
        .collect();
    let scale = clip.model.logit_scale.val().exp();
    let scale = scale.into_data().try_to_vec::<f32>().unwrap()[0];
    let expected = images.matmul(Tensor::cat(class_embeds, 0).transpose()) * scale;
    let expected = expected.into_data().try_to_vec::<f32>().unwrap();
    let single = npy_f32(&out.dir.join("single-seed0-test-logits.npy"));
    assert_close(&single, &expected, "single's logits");

    // Hydra's members kept different heads, and the fused model's member logits are those of
    // the zero-shot classifier pruned to each member's heads, run alone.
    let hydra = &out.summary.methods[2];
    let Some(MethodOutputs::Hydra(outputs)) = &hydra.extra.outputs else {
        panic!("hydra has no outputs: {:?}", hydra.extra);
    };
    let kept = &outputs.kept_heads;
    assert_eq!(kept.len(), 2);
    assert_ne!(kept[0], kept[1], "the members kept the same heads");
    let base = Classifier::from(clip_zero_shot(&clip, &classes, &TEMPLATES).unwrap());
    let mut members = Vec::new();
    for heads in kept {
        let member = pruning::prune_heads(&base, heads).unwrap();
        let logits = member.forward(
            Input::Images(pixels.clone()),
            &Gates::none(),
            Mode::Deterministic,
        );
        members.extend(logits.into_data().try_to_vec::<f32>().unwrap());
    }
    let fused = npy_f32(&out.dir.join("hydra-seed0-test-logits.npy"));
    assert_close(&fused, &members, "hydra's member logits");
    assert_ne!(&members[..expected.len()], &expected[..]);

    // MC Dropout's samples differ (dropout 0.1 on the vision tower); the single model is one.
    let mc = npy_f32(&out.dir.join("mc_dropout-seed0-test-logits.npy"));
    let n = expected.len();
    assert_eq!(mc.len(), 3 * n);
    assert_ne!(mc[..n], mc[n..2 * n]);
    assert_eq!(single.len(), n);
}

/// Matmul FLOPs of a pre-norm block on `t` tokens of width `d`, attention `inner` wide (the
/// kept heads' share of D), MLP `f` wide: Q, K, V and output projections, scores and context,
/// both MLP layers; 2 FLOPs a multiply-accumulate.
fn block_flops(t: u64, d: u64, inner: u64, f: u64) -> u64 {
    2 * (4 * t * d * inner + 2 * t * t * inner + 2 * t * d * f)
}

/// `uqformer plan --device`'s estimate of the zero-shot run against counts made here from the
/// checkpoint's config.json: the base job makes the classifier from its prompts (the text
/// tower at its full context, once a seed), training nothing; an image costs the vision tower,
/// its projection and the product with the class embeddings (the backbone's own count of the
/// classifier the importer builds agrees); MC Dropout runs that S times, Hydra its members
/// pruned to 2 of 4 heads, and Hydra's job is its head scoring alone (no fine-tune).
#[test]
fn the_estimate_counts_the_vision_tower_per_image_and_the_prompts_once() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let backbone = format!("zero_shot = {{ templates = {TEMPLATES:?} }}");
    let config = ExperimentConfig::parse(&config_text(&shapes, &stripes, &backbone, METHODS))
        .unwrap_or_else(|e| panic!("{e}"));
    let h100 = DeviceSpec::named("h100").unwrap();
    let e = estimate(&config, dir.path(), h100, Precision::F32).unwrap();

    let text = std::fs::read_to_string(clip_fixture().join("config.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let get = |tower: &str, key: &str| json[tower][key].as_u64().unwrap();
    let (joint, classes) = (json["projection_dim"].as_u64().unwrap(), 3);
    let vision = |key| get("vision_config", key);
    let (d, f, layers) = (
        vision("hidden_size"),
        vision("intermediate_size"),
        vision("num_hidden_layers"),
    );
    let patch = vision("patch_size");
    let patches = (16 / patch).pow(2);
    let tower = |inner| {
        2 * patches * 3 * patch * patch * d + layers * block_flops(patches + 1, d, inner, f)
    };
    let per_image = |inner| tower(inner) + 2 * d * joint + 2 * joint * classes;
    let image = per_image(d);
    let clip = load_clip(&clip_fixture(), &Device::flex()).unwrap();
    let built = clip_zero_shot(&clip, &["blue", "green", "red"], &TEMPLATES).unwrap();
    let built = Classifier::from(built);
    assert_eq!(built.flops(0), image);
    assert_eq!(e.flops_per_sample, image);
    // Its parameters, CLIP's LayerNorm before the blocks included, but for the vision tower's
    // unused placeholder head (D -> 1).
    assert_eq!(e.params + d + 1, built.num_params() as u64);

    // 12 test images and 6 OOD ones; single, MC Dropout's 3 samples, Hydra's 2 members of
    // 2 heads (of 4) a block.
    let samples = 12 + 6;
    let evaluated: Vec<f64> = (e.evaluation.iter()).map(|v| v.cost.flops).collect();
    assert!(e.evaluation.iter().all(|v| v.samples == samples));
    let expected = [image, 3 * image, 2 * per_image(d / 2)].map(|f| (f * samples) as f64);
    assert_eq!(evaluated, expected);

    let text = |key| get("text_config", key);
    let (dt, ft, positions) = (
        text("hidden_size"),
        text("intermediate_size"),
        text("max_position_embeddings"),
    );
    let prompt = text("num_hidden_layers") * block_flops(positions, dt, dt, ft) + 2 * dt * joint;
    let ids: Vec<&str> = e.jobs.iter().map(|j| j.job.id.as_str()).collect();
    assert_eq!(ids, ["seed0/base:0", "seed0/method:2"]);
    let base = &e.jobs[0];
    assert!(base.job.what.contains("not trained"), "{}", base.job.what);
    assert_eq!(base.job.cost, 0.0);
    let prompts = classes * TEMPLATES.len() as u64;
    assert_eq!(base.cost.flops, (prompts * prompt) as f64);
    // Taylor scores: the base model's forward and backward (3 forwards) on the 8 calibration
    // images for each member's bootstrap and the recorded rankings (M + 2 passes).
    assert_eq!(e.jobs[1].cost.flops, (3 * image * 8 * (2 + 2)) as f64);
}

/// The message of the experiment file's refusal.
fn refusal(backbone: &str, methods: &str, checkpoint: Option<&Path>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let mut text = config_text(&shapes, &stripes, backbone, methods);
    if let Some(path) = checkpoint {
        text = text.replace(
            &clip_fixture().display().to_string(),
            &path.display().to_string(),
        );
    }
    ExperimentConfig::parse(&text).unwrap_err().to_string()
}

#[test]
fn zero_shot_keys_and_methods_that_do_not_fit_are_refused_naming_them() {
    let single = "[[method]]\nkind = \"single\"\n";
    let cases = [
        ("", single, "backbone.zero_shot: missing"),
        (
            "zero_shot = { templates = [\"a photo\"] }",
            single,
            "backbone.zero_shot.templates: \"a photo\" has no {}",
        ),
        (
            "zero_shot = { classes = [] }",
            single,
            "backbone.zero_shot.classes: an empty list",
        ),
        (
            "zero_shot = { classes = [\"a\"], classes_file = \"x.txt\" }",
            single,
            "not both",
        ),
        (
            "zero_shot = { templates_file = \"/nonexistent/templates.txt\" }",
            single,
            "backbone.zero_shot.templates_file: cannot read /nonexistent/templates.txt",
        ),
        (
            "zero_shot = {}",
            "[[method]]\nkind = \"deep_ensemble\"\nmembers = 2\n",
            "method `deep_ensemble` (kind `deep_ensemble`) cannot run on a zero-shot classifier: \
             its members are independently trained",
        ),
        (
            "zero_shot = {}",
            "[[method]]\nkind = \"hydra\"\nmembers = 2\n",
            "set train = { epochs = 0 }",
        ),
        (
            "zero_shot = {}",
            "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\n",
            "method `lora_ensemble` (kind `lora_ensemble`) cannot run on a zero-shot classifier",
        ),
    ];
    for (backbone, methods, expected) in cases {
        let message = refusal(backbone, methods, None);
        assert!(
            message.contains(expected),
            "{backbone} {methods}: {message}"
        );
    }
    let vit = clip_fixture().join("../../vit/hf_vit_model");
    let message = refusal("zero_shot = {}", single, Some(&vit));
    assert!(
        message.contains("backbone.zero_shot: zero-shot classification needs a CLIP"),
        "{message}"
    );
}

#[test]
fn class_names_that_do_not_match_the_data_set_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (shapes, stripes) = image_trees(dir.path());
    let classes = dir.path().join("classes.txt");
    std::fs::write(&classes, "a cat\n\na dog\n").unwrap();
    let backbone = format!("zero_shot = {{ classes_file = \"{}\" }}", classes.display());
    let single = "[[method]]\nkind = \"single\"\n";
    let config = ExperimentConfig::parse(&config_text(&shapes, &stripes, &backbone, single))
        .unwrap_or_else(|e| panic!("{e}"));
    let error = run(&config, &options(dir.path(), dir.path()))
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("backbone.zero_shot.classes: 2 class names; the data set `shapes` has 3"),
        "{error}"
    );
}
