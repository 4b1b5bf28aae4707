//! `Preprocess` against `transformers`' own image processors (Pillow backend) on three small
//! PNGs: the configs they write are read as they are, and every output value must agree.
//! Fixture: scripts/preprocess_reference.py (transformers 5.25, Pillow 13.0).

use std::path::PathBuf;

use data::{ImageIndex, ImageItem, Preprocess};
use serde_json::Value;

/// Cases that Pillow 13 resamples vertically first, where the crate (and Pillow up to 12, whose
/// `ImagingResampleInner` always goes horizontally first) rounds the intermediate bytes
/// differently: values there may move by up to two byte steps (one per pass).
const VERTICAL_FIRST: [(&str, &str); 2] = [("deit", "grey.png"), ("vit", "grey.png")];

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/preprocess"
    ))
}

#[test]
fn vit_deit_and_clip_outputs_match_transformers() {
    let text = std::fs::read_to_string(fixtures().join("reference.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let processors = reference["processors"].as_object().unwrap();
    assert_eq!(processors.len(), 3);
    for (name, processor) in processors {
        let pre = Preprocess::from_hf_value(&processor["config"]).unwrap();
        let outputs = processor["outputs"].as_object().unwrap();
        assert_eq!(outputs.len(), 3);
        for (file, output) in outputs {
            let index = ImageIndex {
                name: "reference".into(),
                split: "all".into(),
                classes: vec!["x".into()],
                items: vec![ImageItem {
                    path: fixtures().join(file),
                    label: 0,
                }],
            };
            let batch = index.read_batch(&pre, &[0]).unwrap();
            let shape: Vec<usize> = serde_json::from_value(output["shape"].clone()).unwrap();
            assert_eq!(batch.dims.to_vec(), shape, "{name} {file}");
            let want: Vec<f32> = serde_json::from_value(output["values"].clone()).unwrap();
            assert_eq!(batch.pixels.len(), want.len());
            let step = 1.0 / 255.0 / pre.std.iter().copied().fold(f32::INFINITY, f32::min);
            let tolerance = if VERTICAL_FIRST.contains(&(name.as_str(), file.as_str())) {
                2.0 * step + 1e-6
            } else {
                1e-6
            };
            for (i, (got, want)) in batch.pixels.iter().zip(&want).enumerate() {
                assert!(
                    (got - want).abs() <= tolerance,
                    "{name} {file} value {i}: {got} vs transformers' {want}"
                );
            }
        }
    }
}
