//! DINOv2-S/14 from `datasets/dinov2-s/vit_s_focus.onnx` against onnxruntime running the same
//! graph (scripts/dinov2_reference.py, fixture tests/fixtures/dinov2_reference.json): the
//! token sequence after the final LayerNorm matches to 1e-4 (absolute) at 224x224 (the
//! graph's input size) and 112x112. Also: the native grid is kept exactly, grey input folds
//! into the RGB filters, the head follows the seed, and every graph fault is named.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use backbone::{Gates, Mode, ViTConfig, VisionTransformer};
use burn::module::Module;
use burn::tensor::{Tensor, TensorData};
use importers::{Dim, ImportError, OnnxGraph, dinov2_from_onnx, load_dinov2_onnx};
use serde_json::Value;

use crate::{max_diff, numbers, test_device, values};

const TOLERANCE: f64 = 1e-4;

fn model_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/dinov2-s/vit_s_focus.onnx")
}

/// The fetched graph, read once; a missing file fails the test, since CI fetches it.
fn graph() -> &'static OnnxGraph {
    static GRAPH: OnceLock<OnnxGraph> = OnceLock::new();
    GRAPH.get_or_init(|| {
        let path = model_path();
        assert!(
            path.exists(),
            "{} is missing: run `datasets/fetch dinov2-s` first (CI fetches it)",
            path.display()
        );
        OnnxGraph::read(&path).unwrap_or_else(|e| panic!("{e}"))
    })
}

fn load(graph: &OnnxGraph, size: usize, channels: usize, seed: u64) -> VisionTransformer {
    dinov2_from_onnx(graph, size, channels, 10, seed, &test_device())
        .unwrap_or_else(|e| panic!("{e}"))
        .1
}

/// The fixture's input: `0.5 sin(0.11 h + 1.3 c) + 0.5 cos(0.07 w - 0.4 c)`, f64 -> f32.
fn pattern(size: usize, channel: usize) -> Vec<f32> {
    let c = channel as f64;
    (0..size * size)
        .map(|p| {
            let (h, w) = ((p / size) as f64, (p % size) as f64);
            (0.5 * (0.11 * h + 1.3 * c).sin() + 0.5 * (0.07 * w - 0.4 * c).cos()) as f32
        })
        .collect()
}

fn images(planes: Vec<Vec<f32>>, size: usize) -> Tensor<4> {
    let shape = [1, planes.len(), size, size];
    Tensor::from_data(TensorData::new(planes.concat(), shape), &test_device())
}

#[test]
fn tokens_match_onnx_runtime_at_224_and_112() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dinov2_reference.json");
    let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let graph = graph();
    let mut worst = 0.0f64;
    for case in fixture["cases"].as_array().unwrap() {
        let size = case["image_size"].as_u64().unwrap() as usize;
        let (config, model) = dinov2_from_onnx(graph, size, 3, 10, 0, &test_device())
            .unwrap_or_else(|e| panic!("{e}"));
        let expected = ViTConfig::new()
            .with_image_size(size)
            .with_channels(3)
            .with_patch_size(14)
            .with_d_model(384)
            .with_n_layers(12)
            .with_n_heads(6)
            .with_d_mlp(1536)
            .with_layer_norm_eps(f64::from(1e-6f32));
        assert_eq!(format!("{config:?}"), format!("{expected:?}"));

        let x = images((0..3).map(|c| pattern(size, c)).collect(), size);
        let (det, gates) = (Mode::Deterministic, Gates::none());
        let hidden = model
            .encoder
            .forward(model.embed(x.clone(), det), &gates, None, det);
        let tokens = model.norm.forward(hidden);
        let n = case["tokens"].as_u64().unwrap() as usize;
        assert_eq!(tokens.dims(), [1, n, 384]);
        let token = |t: usize, k: usize| values(&tokens.clone().slice([0..1, t..t + 1, 0..k]));
        let cls = numbers(&case["cls"]);
        let diffs = [
            max_diff(&token(0, 16), &cls),
            max_diff(&token(1, 8), &numbers(&case["token1"])),
            max_diff(&token(n - 1, 8), &numbers(&case["last_token"])),
            // features() normalises only the class token: the same values.
            max_diff(
                &values(&model.features(x, &gates, det).slice([0..1, 0..16])),
                &cls,
            ),
        ];
        let norm = values(&tokens.slice([0..1, 0..1, 0..384]))
            .iter()
            .map(|v| f64::from(*v).powi(2))
            .sum::<f64>()
            .sqrt();
        let want_norm = case["cls_norm"].as_f64().unwrap();
        assert!(
            (norm - want_norm).abs() < 1e-4 * want_norm,
            "{size}: CLS norm {norm} vs {want_norm}"
        );
        let case_worst = diffs.into_iter().fold(0.0, f64::max);
        eprintln!("{size}x{size}: max |Burn - onnxruntime| = {case_worst:.2e}");
        worst = worst.max(case_worst);
    }
    assert!(
        worst < TOLERANCE,
        "max difference {worst:.2e} >= {TOLERANCE:.0e}"
    );
}

#[test]
fn graph_is_listed_and_the_native_grid_is_kept_exactly() {
    let graph = graph();
    assert_eq!(graph.inputs.len(), 1);
    assert_eq!(
        graph.inputs[0].dims,
        [
            Dim::Param("batch_size".into()),
            Dim::Value(3),
            Dim::Value(224),
            Dim::Value(224)
        ]
    );
    assert_eq!(graph.outputs[0].name, "output_importance");
    let anonymous = |dims: &[usize]| {
        let found: Vec<_> = graph
            .initializers
            .iter()
            .filter(|t| !t.name.contains('.') && t.dims == dims)
            .collect();
        assert_eq!(found.len(), 1, "{dims:?}");
        found[0].floats.clone().unwrap()
    };
    let class = anonymous(&[1, 1, 384]);
    let patches = anonymous(&[1, 37 * 37, 384]);
    // 518 = 37 * 14: the checkpoint's own grid, so the bicubic resize must be the identity.
    let model = load(graph, 518, 3, 0);
    let table = values(&model.pos_embed.val());
    assert_eq!(table.len(), (1 + 37 * 37) * 384);
    assert!(table[..384] == class[..], "class position changed");
    assert!(
        table[384..] == patches[..],
        "patch positions changed at the native grid"
    );
    // Parameters by hand: patch embedding 384·3·14² + 384, class token 384, positions
    // 1370·384, 12 blocks of 4 (384² + 384) + (384·1536 + 1536) + (1536·384 + 384) + 4·384,
    // final norm 2·384, head 384·10 + 10.
    let block = 4 * (384 * 384 + 384) + (384 * 1536 + 1536) + (1536 * 384 + 384) + 4 * 384;
    let by_hand = 384 * 3 * 196 + 384 + 384 + 1370 * 384 + 12 * block + 768 + 3850;
    assert_eq!(model.num_params(), by_hand);
}

#[test]
fn grey_input_folds_into_the_rgb_filters_and_the_head_follows_the_seed() {
    let graph = graph();
    let size = 28;
    let grey = load(graph, size, 1, 5);
    let rgb = load(graph, size, 3, 5);
    let plane = pattern(size, 0);
    let (det, gates) = (Mode::Deterministic, Gates::none());
    let from_grey = values(&grey.forward(images(vec![plane.clone()], size), &gates, det));
    let from_rgb = values(&rgb.forward(images(vec![plane; 3], size), &gates, det));
    let diff = from_grey
        .iter()
        .zip(&from_rgb)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(
        diff < 1e-4,
        "grey vs replicated grey: logits differ by {diff}"
    );
    // The same seed gives the same head; another seed another one.
    let head = |m: &VisionTransformer| values(&m.head.weight.val());
    assert_eq!(head(&grey), head(&rgb));
    assert_ne!(head(&grey), head(&load(graph, size, 1, 6)));
}

/// Loads a modified copy of the real graph and returns the error text.
fn error_after(edit: impl FnOnce(&mut OnnxGraph)) -> (ImportError, String) {
    let mut graph = graph().clone();
    edit(&mut graph);
    let err = dinov2_from_onnx(&graph, 56, 3, 10, 0, &test_device()).unwrap_err();
    let text = data::error_chain(&err);
    assert!(
        text.starts_with(&model_path().display().to_string()),
        "{text}"
    );
    (err, text)
}

fn find<'a>(graph: &'a mut OnnxGraph, name: &str) -> &'a mut importers::OnnxTensor {
    graph
        .initializers
        .iter_mut()
        .find(|t| t.name == name)
        .unwrap()
}

#[test]
fn offending_tensors_are_all_listed() {
    let (err, text) = error_after(|g| {
        g.initializers
            .retain(|t| t.name != "backbone.encoder.layer.3.layer_scale1.lambda1");
        find(g, "backbone.layernorm.weight").dims = vec![383];
        let ints = find(g, "backbone.encoder.layer.0.mlp.fc1.bias");
        (ints.data_type, ints.floats) = (7, None);
        let mut extra = find(g, "backbone.embeddings.cls_token").clone();
        extra.name = "backbone.embeddings.register_tokens".into();
        extra.dims = vec![1, 1, 384];
        g.initializers.push(extra.clone());
        // A mask token (masked-image pretraining only) is ignored.
        extra.name = "backbone.embeddings.mask_token".into();
        g.initializers.push(extra);
    });
    let ImportError::Tensors {
        missing,
        unexpected,
        mismatched,
        ..
    } = &err
    else {
        panic!("expected ImportError::Tensors, got {text}");
    };
    assert_eq!(missing, &["backbone.encoder.layer.3.layer_scale1.lambda1"]);
    assert_eq!(unexpected, &["backbone.embeddings.register_tokens"]);
    assert_eq!(
        mismatched,
        &[
            "backbone.encoder.layer.0.mlp.fc1.bias: data type 7, expected FLOAT or DOUBLE",
            "backbone.layernorm.weight: expected shape [384], found [383]",
        ]
    );
    // An anonymous weight is reported under its role; a MatMul weight with no bias to name
    // it is unexpected and its role missing.
    let (_, text) = error_after(|g| {
        find(g, "onnx::MatMul_1966").dims = vec![384, 385];
        g.initializers
            .retain(|t| t.name != "backbone.encoder.layer.11.mlp.fc2.bias");
    });
    assert!(
        text.contains(
            "backbone.encoder.layer.0.attention.attention.key.weight (onnx::MatMul_1966): \
             expected shape [384, 384], found [384, 385]"
        ) && text.contains(
            "missing (2): backbone.encoder.layer.11.mlp.fc2.weight, \
             backbone.encoder.layer.11.mlp.fc2.bias"
        ) && text.contains("unexpected (1): onnx::MatMul_2169"),
        "{text}"
    );
}

/// A change to a graph.
type Edit = Box<dyn FnOnce(&mut OnnxGraph)>;

#[test]
fn graph_faults_are_named() {
    let set_attribute = |g: &mut OnnxGraph, op: &str, name: &str, value: &str| {
        let node = g.nodes.iter_mut().find(|n| n.op_type == op).unwrap();
        let a = node.attributes.iter_mut().find(|a| a.name == name).unwrap();
        a.s = Some(value.into());
    };
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|g| {
                g.nodes
                    .iter_mut()
                    .find(|n| n.op_type == "Erf")
                    .unwrap()
                    .op_type = "Tanh".into()
            }),
            "expected exact GELU: one Erf node per block (12) and no Tanh, found 11 Erf and 1 Tanh",
        ),
        (
            Box::new(move |g| set_attribute(g, "Resize", "mode", "linear")),
            "only (\"cubic\", \"half_pixel\", -0.75, 0, 0) is implemented",
        ),
        (
            Box::new(|g| {
                let eps = g
                    .nodes
                    .iter_mut()
                    .filter(|n| n.op_type == "Constant")
                    .filter_map(|n| n.attributes[0].t.as_mut())
                    .find(|t| t.floats.as_deref() == Some(&[1e-6]))
                    .unwrap();
                eps.floats = Some(vec![1e-5]);
            }),
            "expected 25 LayerNorms (LayerNormalization nodes, or Sqrt(Add(variance, eps))) sharing one eps",
        ),
        (
            Box::new(|g| {
                let conv = g.nodes.iter_mut().find(|n| n.op_type == "Conv").unwrap();
                let strides = conv
                    .attributes
                    .iter_mut()
                    .find(|a| a.name == "strides")
                    .unwrap();
                strides.ints = vec![7, 7];
            }),
            "should feed a Conv with strides [14, 14]",
        ),
        (
            Box::new(|g| g.initializers.retain(|t| t.name != "onnx::Concat_1957")),
            "expected one anonymous class position [1, 1, 384]",
        ),
        (
            Box::new(|g| find(g, "backbone.embeddings.cls_token").dims = vec![1, 384]),
            "backbone.embeddings.cls_token has shape Some([1, 384]); expected [1, 1, D]",
        ),
        (
            Box::new(|g| g.initializers.retain(|t| !t.name.ends_with("cls_token"))),
            "no initialiser named *embeddings.cls_token",
        ),
    ];
    for (edit, message) in cases {
        let (_, text) = error_after(edit);
        assert!(text.contains(message), "expected {message:?} in {text}");
    }
    // Sizes the model cannot take are configuration errors.
    let device = test_device();
    let err = dinov2_from_onnx(graph(), 100, 3, 10, 0, &device).unwrap_err();
    assert!(
        matches!(err, ImportError::Config { .. })
            && data::error_chain(&err).contains("image_size = 100"),
        "{err}"
    );
    let err = dinov2_from_onnx(graph(), 56, 2, 10, 0, &device).unwrap_err();
    assert!(data::error_chain(&err).contains("channels = 2"), "{err}");
}

#[test]
fn a_truncated_file_is_a_clear_error() {
    let bytes = std::fs::read(model_path())
        .unwrap_or_else(|_| panic!("run `datasets/fetch dinov2-s` first (CI fetches it)"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dinov2");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("truncated.onnx");
    std::fs::write(&path, &bytes[..4096]).unwrap();
    let err = load_dinov2_onnx(&path, 56, 3, 10, 0, &test_device())
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(
        err.starts_with(&format!(
            "{}: malformed ONNX file: truncated: field 7 needs",
            path.display()
        )),
        "{err}"
    );
}
