//! The safetensors reader and the BERT import on tiny files written here byte by byte.

use std::path::{Path, PathBuf};

use backbone::{BertConfig, BertModel};
use importers::{HfBertConfig, ImportError, SafeTensors, load_bert_safetensors};
use serde_json::json;

use crate::{test_device, values};

/// One stored tensor: name, safetensors dtype, shape, little-endian bytes.
pub struct Stored {
    pub name: String,
    pub dtype: &'static str,
    pub shape: Vec<usize>,
    pub bytes: Vec<u8>,
}

pub fn f32_tensor(name: &str, shape: &[usize], values: &[f32]) -> Stored {
    Stored {
        name: name.to_string(),
        dtype: "F32",
        shape: shape.to_vec(),
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// The safetensors layout: u64 LE header length, JSON header padded with spaces, data.
pub fn encode(tensors: &[Stored]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    header.insert("__metadata__".into(), json!({"format": "pt"}));
    let mut data: Vec<u8> = Vec::new();
    for t in tensors {
        let begin = data.len();
        data.extend(&t.bytes);
        header.insert(
            t.name.clone(),
            json!({"dtype": t.dtype, "shape": t.shape, "data_offsets": [begin, data.len()]}),
        );
    }
    let mut header = serde_json::to_vec(&header).unwrap();
    header.resize(header.len().next_multiple_of(8), b' ');
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend(header);
    file.extend(data);
    file
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pretrained_format");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn tiny_config() -> BertConfig {
    BertConfig::new()
        .with_vocab_size(7)
        .with_d_model(4)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(6)
        .with_max_position(5)
}

/// Every tensor of a Hugging Face BERT checkpoint with its PyTorch shape (Linear `[out, in]`).
fn hf_names(c: &BertConfig) -> Vec<(String, Vec<usize>)> {
    let (d, f) = (c.d_model, c.d_mlp);
    let mut names = vec![
        (
            "embeddings.word_embeddings.weight".to_string(),
            vec![c.vocab_size, d],
        ),
        (
            "embeddings.position_embeddings.weight".into(),
            vec![c.max_position, d],
        ),
        (
            "embeddings.token_type_embeddings.weight".into(),
            vec![c.type_vocab_size, d],
        ),
        ("embeddings.LayerNorm.weight".into(), vec![d]),
        ("embeddings.LayerNorm.bias".into(), vec![d]),
    ];
    for i in 0..c.n_layers {
        for (name, shape) in [
            ("attention.self.query.weight", vec![d, d]),
            ("attention.self.query.bias", vec![d]),
            ("attention.self.key.weight", vec![d, d]),
            ("attention.self.key.bias", vec![d]),
            ("attention.self.value.weight", vec![d, d]),
            ("attention.self.value.bias", vec![d]),
            ("attention.output.dense.weight", vec![d, d]),
            ("attention.output.dense.bias", vec![d]),
            ("attention.output.LayerNorm.weight", vec![d]),
            ("attention.output.LayerNorm.bias", vec![d]),
            ("intermediate.dense.weight", vec![f, d]),
            ("intermediate.dense.bias", vec![f]),
            ("output.dense.weight", vec![d, f]),
            ("output.dense.bias", vec![d]),
            ("output.LayerNorm.weight", vec![d]),
            ("output.LayerNorm.bias", vec![d]),
        ] {
            names.push((format!("encoder.layer.{i}.{name}"), shape));
        }
    }
    names
}

/// Distinct values per tensor (k) and element (j), exact in f32.
fn fill(k: usize, len: usize) -> Vec<f32> {
    (0..len).map(|j| k as f32 + j as f32 / 64.0).collect()
}

fn checkpoint(prefix: &str, c: &BertConfig) -> Vec<Stored> {
    hf_names(c)
        .iter()
        .enumerate()
        .map(|(k, (name, shape))| {
            let len = shape.iter().product();
            f32_tensor(&format!("{prefix}{name}"), shape, &fill(k, len))
        })
        .collect()
}

/// The values the model holds for an HF name, in PyTorch layout (Linear weights transposed
/// back from Burn's `[in, out]`), following the names documented on `Block`.
fn model_values(model: &BertModel, name: &str) -> Vec<f32> {
    let e = &model.embeddings;
    let parts: Vec<&str> = name.split('.').collect();
    let (module, field) = (&parts[..parts.len() - 1], parts[parts.len() - 1]);
    let linear = |l: &burn::nn::Linear| match field {
        "weight" => values(&l.weight.val().transpose()),
        _ => values(&l.bias.as_ref().unwrap().val()),
    };
    let norm = |n: &burn::nn::LayerNorm| match field {
        "weight" => values(&n.gamma.val()),
        _ => values(&n.beta.as_ref().unwrap().val()),
    };
    match module {
        ["embeddings", "word_embeddings"] => values(&e.word_embeddings.weight.val()),
        ["embeddings", "position_embeddings"] => values(&e.position_embeddings.weight.val()),
        ["embeddings", "token_type_embeddings"] => values(&e.token_type_embeddings.weight.val()),
        ["embeddings", "LayerNorm"] => norm(&e.layer_norm),
        ["encoder", "layer", i, rest @ ..] => {
            let b = &model.encoder.layer[i.parse::<usize>().unwrap()];
            match rest {
                ["attention", "self", "query"] => linear(&b.attention.query),
                ["attention", "self", "key"] => linear(&b.attention.key),
                ["attention", "self", "value"] => linear(&b.attention.value),
                ["attention", "output", "dense"] => linear(&b.attention.output),
                ["attention", "output", "LayerNorm"] => norm(&b.norm1),
                ["intermediate", "dense"] => linear(&b.mlp.fc1),
                ["output", "dense"] => linear(&b.mlp.fc2),
                ["output", "LayerNorm"] => norm(&b.norm2),
                _ => panic!("unknown name {name}"),
            }
        }
        _ => panic!("unknown name {name}"),
    }
}

#[test]
fn every_tensor_lands_in_its_place() {
    let config = tiny_config();
    // A `bert.` prefix (BertFor* checkpoints) plus the tensors the import ignores.
    let mut tensors = checkpoint("bert.", &config);
    tensors.push(f32_tensor("bert.pooler.dense.weight", &[4, 4], &[0.5; 16]));
    tensors.push(f32_tensor("bert.pooler.dense.bias", &[4], &[0.5; 4]));
    tensors.push(Stored {
        name: "bert.embeddings.position_ids".into(),
        dtype: "I64",
        shape: vec![1, 5],
        bytes: (0..5i64).flat_map(|i| i.to_le_bytes()).collect(),
    });
    let path = write("tiny_bert.safetensors", &encode(&tensors));
    let model = load_bert_safetensors(&path, &config, &test_device()).unwrap();
    for (k, (name, shape)) in hf_names(&config).iter().enumerate() {
        let len = shape.iter().product();
        assert_eq!(model_values(&model, name), fill(k, len), "{name}");
    }
}

#[test]
fn every_offending_key_is_listed_in_one_error() {
    let config = tiny_config();
    let mut tensors = checkpoint("", &config);
    let take = |tensors: &mut Vec<Stored>, name: &str| {
        let at = tensors.iter().position(|t| t.name == name).unwrap();
        tensors.remove(at)
    };
    take(&mut tensors, "encoder.layer.1.output.dense.bias");
    take(&mut tensors, "embeddings.LayerNorm.weight");
    let mut wide = take(&mut tensors, "encoder.layer.0.intermediate.dense.weight");
    wide.shape = vec![4, 6]; // transposed: PyTorch stores [out = 6, in = 4]
    tensors.push(wide);
    let mut ints = take(&mut tensors, "encoder.layer.0.attention.self.key.bias");
    ints.dtype = "I32";
    tensors.push(ints);
    tensors.push(f32_tensor("cls.predictions.bias", &[7], &[0.0; 7]));
    tensors.push(f32_tensor(
        "encoder.layer.2.output.dense.bias",
        &[4],
        &[0.0; 4],
    ));
    let path = write("offending.safetensors", &encode(&tensors));
    let err = load_bert_safetensors(&path, &config, &test_device()).unwrap_err();
    let ImportError::Tensors {
        missing,
        unexpected,
        mismatched,
        ..
    } = &err
    else {
        panic!("expected ImportError::Tensors, got {err}");
    };
    assert_eq!(
        missing,
        &[
            "embeddings.LayerNorm.weight",
            "encoder.layer.1.output.dense.bias"
        ]
    );
    assert_eq!(
        unexpected,
        &["cls.predictions.bias", "encoder.layer.2.output.dense.bias"]
    );
    assert_eq!(
        mismatched,
        &[
            "encoder.layer.0.attention.self.key.bias: dtype I32, expected a float type",
            "encoder.layer.0.intermediate.dense.weight: expected shape [6, 4], found [4, 6]",
        ]
    );
    let text = data::error_chain(&err);
    assert!(
        text.starts_with(&path.display().to_string())
            && text.contains("missing (2)")
            && text.contains("unexpected (2)")
            && text.contains("wrong shape or dtype (2)"),
        "{text}"
    );
}

#[test]
fn half_precision_and_f64_convert_exactly() {
    let halves = |bits: &[u16]| bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    let tensors = [
        Stored {
            name: "f16".into(),
            dtype: "F16",
            shape: vec![7],
            // 1, -2, 65504 (max), 2^-24 (smallest subnormal), 0.5, -0, +inf
            bytes: halves(&[0x3C00, 0xC000, 0x7BFF, 0x0001, 0x3800, 0x8000, 0x7C00]),
        },
        Stored {
            name: "bf16".into(),
            dtype: "BF16",
            shape: vec![3],
            bytes: halves(&[0x3F80, 0xC040, 0x4049]), // 1, -3, 3.140625
        },
        Stored {
            name: "f64".into(),
            dtype: "F64",
            shape: vec![2],
            bytes: [0.25f64, -1e10]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect(),
        },
    ];
    let file = SafeTensors::read(&write("halves.safetensors", &encode(&tensors))).unwrap();
    let f16 = file.to_f32("f16").unwrap();
    assert_eq!(f16[..6], [1.0, -2.0, 65504.0, 2f32.powi(-24), 0.5, -0.0]);
    assert!(f16[5].is_sign_negative() && f16[6] == f32::INFINITY);
    assert_eq!(file.to_f32("bf16").unwrap(), [1.0, -3.0, 3.140625]);
    assert_eq!(file.to_f32("f64").unwrap(), [0.25, -1e10]);
    let info = file.info("bf16").unwrap();
    assert_eq!(
        (info.dtype.as_str(), info.shape.as_slice()),
        ("BF16", &[3][..])
    );
    assert_eq!(file.tensors().count(), 3);

    // A whole checkpoint in BF16 loads (values of the form k + j/64 are exact in bf16 here).
    let config = tiny_config().with_vocab_size(2).with_max_position(2);
    let bf16: Vec<Stored> = checkpoint("", &config)
        .into_iter()
        .map(|t| Stored {
            bytes: t.bytes.chunks(4).flat_map(|b| [b[2], b[3]]).collect(),
            dtype: "BF16",
            ..t
        })
        .collect();
    let path = write("tiny_bf16.safetensors", &encode(&bf16));
    let model = load_bert_safetensors(&path, &config, &test_device()).unwrap();
    assert_eq!(
        values(&model.embeddings.token_type_embeddings.weight.val()),
        fill(2, 8)
    );
}

#[test]
fn malformed_files_are_named() {
    let good = encode(&[f32_tensor("w", &[2, 2], &[1.0, 2.0, 3.0, 4.0])]);
    let header = |json: &str| {
        let mut bytes = (json.len() as u64).to_le_bytes().to_vec();
        bytes.extend(json.as_bytes());
        bytes.extend([0u8; 16]);
        bytes
    };
    // The messages are the `safetensors` crate's, after the file name.
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "short",
            vec![1, 2, 3],
            "not a valid safetensors file: header too small",
        ),
        ("cut_header", good[..20].to_vec(), "invalid header length"),
        (
            "cut_data",
            good[..good.len() - 4].to_vec(),
            "incomplete metadata, file not fully covered",
        ),
        ("not_json", header("{nope"), "invalid JSON in header"),
        (
            "no_offsets",
            header(r#"{"w":{"dtype":"F32","shape":[2]}}"#),
            "missing field `data_offsets`",
        ),
        (
            "wrong_span",
            header(r#"{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#),
            "invalid shape, data type, or offset for tensor",
        ),
        (
            "bad_dtype",
            header(r#"{"w":{"dtype":"F12","shape":[1],"data_offsets":[0,2]}}"#),
            "unknown variant `F12`",
        ),
    ];
    for (name, bytes, message) in cases {
        let path = write(&format!("{name}.safetensors"), &bytes);
        let err = SafeTensors::read(&path)
            .map_err(|e| data::error_chain(&e))
            .unwrap_err();
        assert!(
            err.starts_with(&path.display().to_string()) && err.contains(message),
            "{name}: {err}"
        );
    }
    let absent = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("absent.safetensors");
    let err = SafeTensors::read(&absent)
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(
        err.contains("absent.safetensors: cannot read the file"),
        "{err}"
    );
    let file = SafeTensors::read(&write("good.safetensors", &good)).unwrap();
    assert!(
        file.to_f32("v")
            .map_err(|e| data::error_chain(&e))
            .unwrap_err()
            .contains("no tensor \"v\"")
    );
}

/// A config.json read and turned into the model's configuration.
fn read_config(path: &Path) -> Result<BertConfig, ImportError> {
    HfBertConfig::read(path).map(BertConfig::from)
}

#[test]
fn hf_config_json() {
    let minilm = json!({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
        "hidden_size": 384, "num_hidden_layers": 6, "num_attention_heads": 12,
        "intermediate_size": 1536, "vocab_size": 30522, "max_position_embeddings": 512,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute"
    });
    let config_file = |name: &str, value: &serde_json::Value| {
        write(name, serde_json::to_string(value).unwrap().as_bytes())
    };
    let read = read_config(&config_file("minilm.json", &minilm)).unwrap();
    // The MiniLM file gives exactly the crate's defaults (the minilm_l6 preset).
    assert_eq!(format!("{read:?}"), format!("{:?}", BertConfig::new()));

    let variant = |edit: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| {
        let mut value = minilm.clone();
        edit(value.as_object_mut().unwrap());
        value
    };
    let cases = [
        (
            variant(&|m| {
                m.remove("hidden_size");
            }),
            "missing field `hidden_size`",
        ),
        (
            variant(&|m| {
                m.insert("num_hidden_layers".into(), json!(-1));
            }),
            "num_hidden_layers: invalid value: integer `-1`",
        ),
        (
            variant(&|m| {
                m.insert("hidden_act".into(), json!("relu"));
            }),
            "hidden_act: = \"relu\": only \"gelu\"",
        ),
        (
            variant(&|m| {
                m.insert("model_type".into(), json!("xlm-roberta"));
            }),
            "model_type: = \"xlm-roberta\": only \"bert\" or \"roberta\"",
        ),
    ];
    for (i, (value, message)) in cases.iter().enumerate() {
        let path = config_file(&format!("bad{i}.json"), value);
        let err = read_config(&path)
            .map_err(|e| data::error_chain(&e))
            .unwrap_err();
        assert!(
            err.starts_with(&path.display().to_string()) && err.contains(message),
            "{err}"
        );
    }

    // A config the model cannot be built with fails before the weights are read.
    let heads = read_config(&config_file(
        "heads.json",
        &variant(&|m| {
            m.insert("num_attention_heads".into(), json!(5));
        }),
    ))
    .unwrap();
    let err = load_bert_safetensors(&write("unused.safetensors", b""), &heads, &test_device())
        .unwrap_err();
    assert!(
        matches!(&err, ImportError::Config { .. })
            && data::error_chain(&err).contains("n_heads = 5"),
        "{err}"
    );
}
