use backbone::{BertConfig, ViTConfig};

use super::*;

fn device() -> Device {
    Device::flex()
}

fn ints(values: Vec<i64>, shape: [usize; 2]) -> Tensor<2, Int> {
    Tensor::from_data(TensorData::new(values, shape), &device())
}

fn labels(from: i64, n: usize) -> Tensor<1, Int> {
    let ids: Vec<i64> = (from..from + n as i64).collect();
    Tensor::from_data(TensorData::new(ids, [n]), &device())
}

/// Seven samples in batches of 3 whose image value equals the label; two OOD batches.
fn numbered() -> Calibration {
    let batch = |from: i64, n: usize| {
        let images: Vec<f32> = (from..from + n as i64).map(|i| i as f32).collect();
        let images = Tensor::<4>::from_data(TensorData::new(images, [n, 1, 1, 1]), &device());
        (Input::Images(images), labels(from, n))
    };
    Calibration {
        batches: vec![batch(0, 3), batch(3, 3), batch(6, 1)],
        ood: vec![batch(10, 2).0, batch(12, 2).0],
    }
}

fn floats(x: &Input) -> Vec<f32> {
    let Input::Images(x) = x else {
        panic!("images expected")
    };
    x.to_data().try_to_vec::<f32>().unwrap()
}

fn longs<const D: usize>(t: &Tensor<D, Int>) -> Vec<i64> {
    t.to_data().convert::<i64>().try_to_vec::<i64>().unwrap()
}

fn ids(data: &Calibration) -> (Vec<Vec<f32>>, Vec<Vec<i64>>) {
    let images = data.batches.iter().map(|(x, _)| floats(x)).collect();
    let labels = data.batches.iter().map(|(_, y)| longs(y)).collect();
    (images, labels)
}

#[test]
fn bootstrap_keeps_pairs_and_batch_sizes() {
    let data = numbered();
    let resample = data.bootstrap(3).unwrap();
    let (images, labels) = ids(&resample);
    let sizes: Vec<usize> = images.iter().map(Vec::len).collect();
    assert_eq!(sizes, [3, 3, 1]);
    let images: Vec<f32> = images.concat();
    let labels: Vec<i64> = labels.concat();
    assert!(images.iter().zip(&labels).all(|(&x, &y)| x == y as f32));
    assert!(labels.iter().all(|&y| (0..7).contains(&y)));
    // With replacement: 7 draws from 7 repeat some sample (all distinct has odds 7!/7^7).
    let mut distinct = labels.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert!(distinct.len() < 7, "{labels:?}");
    let ood: Vec<f32> = resample.ood.iter().flat_map(floats).collect();
    assert_eq!(ood.len(), 4);
    assert!(ood.iter().all(|v| (10.0..14.0).contains(v)));
    assert_eq!(ids(&data.bootstrap(3).unwrap()), ids(&resample));
    assert_ne!(ids(&data.bootstrap(4).unwrap()), ids(&resample));
}

/// Token batches of lengths 2 and 4: row i holds ids `i, 40 + i, ...` up to its length.
fn token_batches() -> Calibration {
    let batch = |from: i64, n: usize, len: usize| {
        let ids: Vec<i64> = (0..n as i64)
            .flat_map(|i| (0..len as i64).map(move |t| from + i + 40 * t))
            .collect();
        let ids = ints(ids, [n, len]);
        let mask = ids.clone().ones_like();
        (Input::Tokens { ids, mask }, labels(from, n))
    };
    Calibration {
        batches: vec![batch(0, 3, 2), batch(3, 2, 4)],
        ood: vec![],
    }
}

#[test]
fn bootstrap_pads_token_batches_to_the_longest() {
    let resample = token_batches().bootstrap(5).unwrap();
    let sizes: Vec<usize> = resample
        .batches
        .iter()
        .map(|(x, _)| x.batch_size())
        .collect();
    assert_eq!(sizes, [3, 2]);
    for (input, labels) in &resample.batches {
        let Input::Tokens { ids, mask } = input else {
            panic!("tokens expected")
        };
        assert_eq!(ids.dims()[1], 4);
        for ((row, mask), label) in (longs(ids).chunks(4))
            .zip(longs(mask).chunks(4))
            .zip(longs(labels))
        {
            // The first id is the label; short rows end in masked id-0 padding.
            let len = if label < 3 { 2 } else { 4 };
            let expected: Vec<i64> = (0..4)
                .map(|t| if t < len { label + 40 * t } else { 0 })
                .collect();
            assert_eq!(row, expected);
            let ones: Vec<i64> = (0..4).map(|t| i64::from(t < len)).collect();
            assert_eq!(mask, ones);
        }
    }
}

#[test]
fn take_keeps_the_leading_samples() {
    let data = numbered().take(4);
    assert_eq!(ids(&data).1, [vec![0, 1, 2], vec![3]]);
    let ood: Vec<usize> = data.ood.iter().map(Input::batch_size).collect();
    assert_eq!(ood, [2, 2]);
    assert_eq!(ids(&numbered().take(50)).1.concat().len(), 7);
}

#[test]
fn check_rejects_empty_data_mismatched_labels_and_the_wrong_input() {
    let vit = Classifier::from(ViTConfig::new().init(&device()).unwrap());
    let empty = Calibration {
        batches: vec![],
        ood: vec![],
    };
    let err = empty.check(&vit).unwrap_err().to_string();
    assert!(err.contains("Calibration.batches"), "{err}");
    let mut data = numbered();
    data.batches[1].1 = data.batches[1].1.clone().narrow(0, 0, 2);
    let err = data.check(&vit).unwrap_err().to_string();
    assert!(
        err.contains("Calibration.batches[1] = 3 samples with 2 labels"),
        "{err}"
    );

    let err = token_batches().check(&vit).unwrap_err().to_string();
    assert!(
        err.starts_with("Calibration.batches[0] = token sequences"),
        "{err}"
    );
    let bert = BertConfig::new()
        .with_vocab_size(50)
        .with_d_model(8)
        .with_n_layers(1)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_max_position(3)
        .init_classifier(2, &device())
        .unwrap();
    let bert = Classifier::from(bert);
    let err = numbered().check(&bert).unwrap_err().to_string();
    assert!(err.starts_with("Calibration.batches[0] = images"), "{err}");
    // Batch 1 has 4 tokens per sequence, the position table 3.
    let err = token_batches().check(&bert).unwrap_err().to_string();
    assert!(
        err.contains("Calibration.batches[1] = 4 tokens per sequence"),
        "{err}"
    );
    let mut data = token_batches();
    data.batches.truncate(1);
    assert!(data.check(&bert).is_ok());
    // Batch 0's ids reach 40 + 2 = 42; a vocabulary of 50 holds them, one of 40 does not.
    let small = BertConfig::new()
        .with_vocab_size(40)
        .with_d_model(8)
        .with_n_layers(1)
        .with_n_heads(2)
        .with_d_mlp(16)
        .init_classifier(2, &device())
        .unwrap();
    let err = data
        .check(&Classifier::from(small))
        .unwrap_err()
        .to_string();
    assert!(err.contains("token ids from 0 to 42"), "{err}");
    data.ood = numbered().ood;
    let err = data.check(&bert).unwrap_err().to_string();
    assert!(err.starts_with("Calibration.ood[0] = images"), "{err}");
}
