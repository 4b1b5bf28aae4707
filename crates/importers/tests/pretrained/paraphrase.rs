//! paraphrase-MiniLM-L3-v2 from `datasets/paraphrase-minilm-l3-v2/` (one ONNX graph exported
//! from a `BertModel`) against onnxruntime running the graph itself
//! (scripts/paraphrase_reference.py, fixture tests/fixtures/paraphrase_reference.json), to
//! 1e-4: the configuration read from the graph, its registry entry, a folder with neither
//! layout, and every fault of the graph named.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use backbone::{Architecture, BertConfig, Classifier};
use importers::{ImportError, OnnxGraph, PRETRAINED, Target, bert_from_onnx, load_hf_bert};

use crate::bert_checks::{self, fetched, fixture};
use crate::test_device;

const NAME: &str = "paraphrase-minilm-l3-v2";
const PREFIX: &str = "model.0.auto_model.";

fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets")
}

/// The fetched graph, read once; a missing file fails the test, since CI fetches it.
fn graph() -> &'static OnnxGraph {
    static GRAPH: OnceLock<OnnxGraph> = OnceLock::new();
    GRAPH.get_or_init(|| {
        let path = datasets().join(NAME).join("paraphrase-MiniLM-L3-v2.onnx");
        assert!(
            path.exists(),
            "{} is missing: run `datasets/fetch {NAME}` first (CI fetches it)",
            path.display()
        );
        OnnxGraph::read(&path).unwrap_or_else(|e| panic!("{e}"))
    })
}

#[test]
fn hidden_states_and_embeddings_match_onnx_runtime() {
    let (config, model) = fetched(NAME);
    // all-MiniLM-L6-v2's shape with 3 blocks; the graph holds its epsilon as an f32.
    let expected = BertConfig::new()
        .with_n_layers(3)
        .with_layer_norm_eps(f64::from(1e-12f32));
    assert_eq!(format!("{config:?}"), format!("{expected:?}"));
    let fixture = fixture("paraphrase_reference.json");
    bert_checks::hidden_states_and_embeddings_match(&model, &fixture);
}

#[test]
fn paraphrases_are_closer_than_unrelated_sentences() {
    let (_, model) = fetched(NAME);
    let fixture = fixture("paraphrase_reference.json");
    bert_checks::paraphrases_are_closer_than_unrelated_sentences(&model, &fixture);
}

#[test]
fn the_registry_entry_builds_a_text_classifier() {
    let entry = &PRETRAINED.get(NAME).unwrap().item;
    assert_eq!(entry.architecture, Architecture::Bert);
    let target = Target {
        num_classes: 2,
        images: None,
        dropout: 0.0,
        attention_dropout: 0.0,
    };
    let checkpoint = (entry.open(NAME, &datasets(), &target)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(checkpoint.config["n_layers"], 3);
    assert_eq!(checkpoint.config["dropout"], 0.0);
    assert_eq!(
        checkpoint.vocab,
        Some(datasets().join(NAME).join("vocab.txt"))
    );
    let model = (checkpoint.init)(0, &test_device()).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(model, Classifier::Bert(_)));
}

#[test]
fn a_folder_with_neither_layout_names_both() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bert_folder");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let error = || load_hf_bert(&dir, &test_device()).unwrap_err().to_string();
    let expected = "expected config.json with model.safetensors, or one *.onnx graph";
    let err = error();
    assert!(err.contains(&format!(
        "{expected}; found no model.safetensors and 0 *.onnx files"
    )));
    assert!(err.starts_with(&dir.display().to_string()), "{err}");
    for name in ["a.onnx", "b.onnx"] {
        std::fs::write(dir.join(name), b"").unwrap();
    }
    assert!(error().contains("found no model.safetensors and 2 *.onnx files"));
    // One graph, the one read: an empty file is no ONNX model.
    std::fs::remove_file(dir.join("b.onnx")).unwrap();
    let err = error();
    assert!(err.contains("a.onnx: malformed ONNX file"), "{err}");
}

/// The error of [`bert_from_onnx`] on the fetched graph after `edit`.
fn fault(edit: impl Fn(&mut OnnxGraph)) -> ImportError {
    let mut graph = graph().clone();
    edit(&mut graph);
    bert_from_onnx(&graph, &test_device())
        .map(|_| ())
        .unwrap_err()
}

#[test]
fn graph_faults_are_named() {
    let ops = |from: &'static str, to: &'static str| {
        move |g: &mut OnnxGraph| {
            (g.nodes.iter_mut())
                .filter(|n| n.op_type == from)
                .for_each(|n| n.op_type = to.into())
        }
    };
    let err = fault(ops("Div", "Mul")).to_string();
    assert!(
        err.contains("expected 3 attentions Softmax(Add(Div(scores, √w), mask))")
            && err.contains("found scales [None, None, None]"),
        "{err}"
    );
    let err = fault(ops("Erf", "Tanh")).to_string();
    assert!(err.contains("expected exact GELU"), "{err}");
    let err = fault(ops("LayerNormalization", "Identity")).to_string();
    assert!(err.contains("expected 7 LayerNorms"), "{err}");

    // A projection whose bias is renamed cannot be named, and a LayerNorm of the wrong width
    // does not fit: every name is listed as the checkpoint spells it.
    let key_bias = format!("{PREFIX}encoder.layer.1.attention.self.key.bias");
    let norm = format!("{PREFIX}encoder.layer.2.output.LayerNorm.weight");
    let err = fault(|g| {
        for t in &mut g.initializers {
            if t.name == key_bias {
                t.name = "stray".into();
            } else if t.name == norm {
                t.dims = vec![383];
            }
        }
    });
    let ImportError::Tensors {
        missing,
        unexpected,
        mismatched,
        ..
    } = err
    else {
        panic!("{err}")
    };
    let key_weight = format!("{PREFIX}encoder.layer.1.attention.self.key.weight");
    assert_eq!(missing, [key_weight, key_bias]);
    assert_eq!(unexpected.len(), 2, "{unexpected:?}");
    assert!(unexpected.iter().any(|n| n.starts_with("onnx::MatMul_")));
    assert!(unexpected.contains(&"stray".to_string()));
    assert_eq!(
        mismatched,
        [format!("{norm}: expected shape [384], found [383]")]
    );
}
