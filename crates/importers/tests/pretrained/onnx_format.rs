//! The ONNX reader on protobuf written here byte by byte: every decoded field kind (packed and
//! unpacked repeats, raw and typed tensor data, attributes, shapes), skipped unknown fields,
//! and the errors for malformed files.

use std::path::PathBuf;

use importers::{Attribute, Dim, Node, OnnxGraph, OnnxTensor, ValueInfo};

fn varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn tag(field: u32, wire: u8) -> Vec<u8> {
    let mut out = Vec::new();
    varint(u64::from(field) << 3 | u64::from(wire), &mut out);
    out
}

/// A varint field (int64 as two's complement).
fn int(field: u32, v: i64) -> Vec<u8> {
    let mut out = tag(field, 0);
    varint(v as u64, &mut out);
    out
}

/// A length-delimited field.
fn bytes(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = tag(field, 2);
    varint(payload.len() as u64, &mut out);
    out.extend(payload);
    out
}

fn string(field: u32, s: &str) -> Vec<u8> {
    bytes(field, s.as_bytes())
}

fn float(field: u32, v: f32) -> Vec<u8> {
    let mut out = tag(field, 5);
    out.extend(v.to_le_bytes());
    out
}

fn packed_varints(field: u32, values: &[i64]) -> Vec<u8> {
    let mut payload = Vec::new();
    for &v in values {
        varint(v as u64, &mut payload);
    }
    bytes(field, &payload)
}

fn message(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

/// A model whose graph holds `parts` (node = 1, initializer = 5, input = 11, output = 12).
fn model(parts: &[Vec<u8>]) -> Vec<u8> {
    message(&[int(1, 7), string(2, "test"), bytes(7, &message(parts))])
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("onnx_format");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn tensor(name: &str, dims: &[usize], data_type: i32, floats: Option<Vec<f32>>) -> OnnxTensor {
    OnnxTensor {
        name: name.into(),
        dims: dims.to_vec(),
        data_type,
        floats,
    }
}

#[test]
fn every_field_kind_is_decoded() {
    let initializers = [
        // dims unpacked, raw_data
        message(&[
            int(1, 2),
            int(1, 3),
            int(2, 1),
            string(8, "w"),
            bytes(9, &f32_bytes(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0])),
        ]),
        // dims packed, float_data packed, an unknown 64-bit field skipped
        message(&[
            packed_varints(1, &[3]),
            int(2, 1),
            bytes(4, &f32_bytes(&[1.5, -2.0, 0.25])),
            [tag(99, 1), 7u64.to_le_bytes().to_vec()].concat(),
            string(8, "p"),
        ]),
        // float_data unpacked
        message(&[
            int(1, 2),
            int(2, 1),
            float(4, -0.5),
            float(4, 8.0),
            string(8, "u"),
        ]),
        // double_data packed, converted to f32
        message(&[
            int(1, 2),
            int(2, 11),
            bytes(
                10,
                &[0.5f64, -1e3]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect::<Vec<_>>(),
            ),
            string(8, "d"),
        ]),
        // INT64: kept without values
        message(&[
            int(1, 2),
            int(2, 7),
            packed_varints(7, &[4, -1]),
            string(8, "i"),
        ]),
        // a scalar
        message(&[int(2, 1), string(8, "s"), bytes(9, &f32_bytes(&[1e-6]))]),
    ];
    let constant = message(&[int(2, 1), bytes(9, &f32_bytes(&[2.0]))]);
    let attributes = [
        message(&[string(1, "alpha"), float(2, 0.5), int(20, 1)]),
        message(&[string(1, "axis"), int(3, -1), int(20, 2)]),
        message(&[string(1, "mode"), string(4, "cubic"), int(20, 3)]),
        message(&[string(1, "value"), bytes(5, &constant), int(20, 4)]),
        message(&[
            string(1, "strides"),
            packed_varints(8, &[14, 14]),
            int(20, 7),
        ]),
        message(&[string(1, "pads"), int(8, 0), int(8, -2), int(20, 7)]),
    ];
    let mut node = vec![
        string(1, "x"),
        string(1, "w"),
        string(2, "y"),
        string(3, "mm"),
        string(4, "MatMul"),
        string(6, "a doc string, skipped"),
    ];
    node.extend(attributes.iter().map(|a| bytes(5, a)));
    let dims = message(&[
        bytes(1, &string(2, "batch")),
        bytes(1, &int(1, 3)),
        bytes(1, &[]),
    ]);
    let tensor_type = message(&[int(1, 1), bytes(2, &dims)]);
    let input = message(&[string(1, "x"), bytes(2, &bytes(1, &tensor_type))]);
    let mut graph = vec![bytes(1, &message(&node)), string(2, "g")];
    graph.extend(initializers.iter().map(|t| bytes(5, t)));
    graph.push(bytes(11, &input));
    graph.push(bytes(12, &message(&[string(1, "y")])));

    let path = write("every_field.onnx", &model(&graph));
    let read = OnnxGraph::read(&path).unwrap();
    assert_eq!(read.path, path);
    assert_eq!(
        read.initializers,
        [
            tensor("w", &[2, 3], 1, Some(vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0])),
            tensor("p", &[3], 1, Some(vec![1.5, -2.0, 0.25])),
            tensor("u", &[2], 1, Some(vec![-0.5, 8.0])),
            tensor("d", &[2], 11, Some(vec![0.5, -1000.0])),
            tensor("i", &[2], 7, None),
            tensor("s", &[], 1, Some(vec![1e-6])),
        ]
    );
    let attribute = |name: &str| Attribute {
        name: name.into(),
        ..Attribute::default()
    };
    assert_eq!(
        read.nodes,
        [Node {
            name: "mm".into(),
            op_type: "MatMul".into(),
            inputs: vec!["x".into(), "w".into()],
            outputs: vec!["y".into()],
            attributes: vec![
                Attribute {
                    f: Some(0.5),
                    ..attribute("alpha")
                },
                Attribute {
                    i: Some(-1),
                    ..attribute("axis")
                },
                Attribute {
                    s: Some("cubic".into()),
                    ..attribute("mode")
                },
                Attribute {
                    t: Some(tensor("", &[], 1, Some(vec![2.0]))),
                    ..attribute("value")
                },
                Attribute {
                    ints: vec![14, 14],
                    ..attribute("strides")
                },
                Attribute {
                    ints: vec![0, -2],
                    ..attribute("pads")
                },
            ],
        }]
    );
    assert_eq!(
        read.inputs,
        [ValueInfo {
            name: "x".into(),
            elem_type: 1,
            dims: vec![Dim::Param("batch".into()), Dim::Value(3), Dim::Unknown],
        }]
    );
    assert_eq!(
        read.outputs,
        [ValueInfo {
            name: "y".into(),
            elem_type: 0,
            dims: vec![],
        }]
    );
    assert_eq!(read.initializer("p").unwrap().dims, [3]);
    assert!(read.initializer("q").is_none());
    assert_eq!(read.consumers("w").count(), 1);
    assert_eq!(read.consumers("y").count(), 0);
    assert_eq!(read.producer("y").unwrap().name, "mm");
    assert_eq!(
        read.nodes[0].attribute("mode").unwrap().s.as_deref(),
        Some("cubic")
    );
}

#[test]
fn malformed_files_are_named_with_the_place_and_the_fault() {
    let in_graph = |part: Vec<u8>| model(&[part]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("empty", vec![], "no graph (field 7) in 0 bytes"),
        (
            "cut_varint",
            vec![0x3a, 0x80],
            "truncated varint: the data ends inside it (in ModelProto at byte 1)",
        ),
        (
            "cut_length",
            vec![0x3a, 0x05, 0x00],
            "truncated: field 7 needs 5 bytes but only 1 remain (in ModelProto at byte 2)",
        ),
        ("group", vec![0x0b, 0x0c], "unknown wire type 3 in field 1"),
        (
            "long_varint",
            [vec![0x08], vec![0xff; 10], vec![0x01]].concat(),
            "varint longer than 10 bytes (in ModelProto at byte 1)",
        ),
        ("field_zero", vec![0x00, 0x00], "invalid field number 0"),
        (
            "node_overruns_graph",
            model(&[[tag(1, 2), vec![50], string(4, "Add")].concat()]),
            "field 1 needs 50 bytes but only 5 remain (in GraphProto",
        ),
        (
            "op_type_as_varint",
            in_graph(bytes(1, &int(4, 3))),
            "field 4 should be length-delimited (in NodeProto",
        ),
        (
            "short_raw_data",
            in_graph(bytes(
                5,
                &message(&[int(1, 2), int(2, 1), string(8, "bad"), bytes(9, &[0; 4])]),
            )),
            "tensor \"bad\": raw_data has 4 bytes, expected 8 for 2 values (in TensorProto",
        ),
        (
            "few_floats",
            in_graph(bytes(
                5,
                &message(&[int(1, 3), int(2, 1), string(8, "few"), float(4, 1.0)]),
            )),
            "tensor \"few\": 1 stored values, expected 3",
        ),
        (
            "negative_dim",
            in_graph(bytes(
                5,
                &message(&[int(1, -4), int(2, 1), string(8, "neg")]),
            )),
            "tensor \"neg\": negative dimension -4",
        ),
        (
            "external",
            in_graph(bytes(
                5,
                &message(&[int(1, 1), int(2, 1), string(8, "ext"), int(14, 1)]),
            )),
            "tensor \"ext\": external data is not supported",
        ),
    ];
    for (name, bytes, expected) in cases {
        let path = write(&format!("{name}.onnx"), &bytes);
        let err = OnnxGraph::read(&path)
            .map_err(|e| data::error_chain(&e))
            .unwrap_err();
        assert!(
            err.starts_with(&format!("{}: malformed ONNX file: ", path.display()))
                && err.contains(expected),
            "{name}: {err}"
        );
    }
    let absent = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("absent.onnx");
    let err = OnnxGraph::read(&absent)
        .map_err(|e| data::error_chain(&e))
        .unwrap_err();
    assert!(err.contains("absent.onnx: cannot read the file"), "{err}");
}
