//! A tiny BERT classifier backbone on padded token batches.

use backbone::{BertConfig, BlockShape};
use burn::tensor::Int;
use data::{TextDataset, WordPiece};
use train::{TextData, fit};

use super::*;

fn bert_config() -> BertConfig {
    BertConfig::new()
        .with_vocab_size(50)
        .with_d_model(8)
        .with_n_layers(2)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_max_position(16)
}

fn backbone(device: &Device) -> Classifier {
    device.seed(3);
    bert_config().init_classifier(2, device).unwrap().into()
}

/// Three sequences of 6, 4 and 3 tokens, padded to 6 with the id `pad` (mask 0 there).
fn padded(pad: i64, device: &Device) -> Input {
    let rows: [&[i64]; 3] = [&[2, 5, 6, 7, 8, 3], &[2, 9, 10, 3], &[2, 11, 3]];
    let width = 6;
    let (mut ids, mut mask) = (Vec::new(), Vec::new());
    for row in rows {
        for t in 0..width {
            ids.push(row.get(t).copied().unwrap_or(pad));
            mask.push(i64::from(t < row.len()));
        }
    }
    let tensor = |v: Vec<i64>| Tensor::<2, Int>::from_data(TensorData::new(v, [3, width]), device);
    Input::Tokens {
        ids: tensor(ids),
        mask: tensor(mask),
    }
}

#[test]
fn vectorised_forward_equals_looping_over_merged_members() {
    let _guard = serial();
    let device = Device::flex();
    let model = perturb(lora_config().init(backbone(&device), 5).unwrap(), &device);
    let input = padded(0, &device);
    assert_vectorised_equals_merged(&model, &input, 2);
    // Padding is masked in every member's attention and pooling: other ids there change
    // nothing.
    let repadded = to_vec(model.member_logits(padded(40, &device)));
    let error = relative_error(&repadded, &to_vec(model.member_logits(input)));
    assert!(error <= 1e-6, "padding leaks in: relative error {error}");
}

#[test]
fn members_start_with_the_base_features() {
    let _guard = serial();
    let device = Device::flex();
    assert_members_start_at_base(backbone(&device), &padded(0, &device), 8);
}

const VOCAB: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\nthe\nvery\nmovie\nfilm\nplot\ngood\n\
                     great\nfine\nbad\nawful\ndull\n";

/// Short positive (label 1) and negative (label 0) reviews of different lengths.
fn reviews() -> TextDataset {
    let positive = [
        "good",
        "a great movie",
        "very good film",
        "the plot was fine",
    ];
    let negative = [
        "bad",
        "an awful movie",
        "very dull film",
        "the plot was very bad",
    ];
    let (mut texts, mut labels) = (Vec::new(), Vec::new());
    for _ in 0..2 {
        for (p, n) in positive.iter().zip(negative) {
            texts.extend([p.to_string(), n.to_string()]);
            labels.extend([1, 0]);
        }
    }
    TextDataset {
        name: "reviews".into(),
        texts,
        labels,
        num_classes: 2,
    }
}

#[test]
fn training_moves_adapters_and_heads_but_not_the_backbone() {
    let _guard = serial();
    let dir = tempfile::tempdir().unwrap();
    let vocab = dir.path().join("vocab.txt");
    std::fs::write(&vocab, VOCAB).unwrap();
    let tokenizer = WordPiece::from_vocab_file(&vocab).unwrap();
    let set = reviews();
    let data = TextData {
        set: &set,
        tokenizer: &tokenizer,
        max_tokens: 16,
    };
    let device = Device::flex().autodiff();
    let model = lora_config().init(backbone(&device), 2).unwrap();
    assert_training_moves_only_adapters(model, |model| {
        fit(model, data, &recipe(8), &fit_options(&device))
            .unwrap()
            .valid()
    });
}

#[test]
fn parameter_count_and_text_flops_match_their_closed_forms() {
    let _guard = serial();
    let device = Device::flex();
    let backbone = backbone(&device);
    let backbone_params = backbone.num_params();
    let c = bert_config();
    let (l, d, classes) = (c.n_layers, c.d_model, 2);
    let model = LoraConfig {
        text_tokens: 12,
        ..lora_config()
    }
    .init(backbone, 0)
    .unwrap();
    assert_eq!(
        EnsembleModel::num_params(&model),
        4 * l * N * RANK * (d + d) + N * (d * classes + classes) + backbone_params
    );
    let blocks = vec![BlockShape::full(c.n_heads); l];
    // Evaluation merges the adapters: N backbone passes.
    let expected = |t: usize| N as u64 * c.flops(t, classes, &blocks);
    assert_eq!(model.flops_per_sample(), expected(12));
    // The default sequence length.
    let default = lora_config().init(model.backbone, 0).unwrap();
    assert_eq!(default.text_tokens, 128);
    assert_eq!(default.flops_per_sample(), expected(128));
}

#[test]
fn adapters_round_trip_and_refuse_another_backbone() {
    let _guard = serial();
    let device = Device::flex();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bert_adapters.bpk");
    let model = perturb(lora_config().init(backbone(&device), 9).unwrap(), &device);
    assert_adapters_round_trip(&model, &padded(0, &device), &path);
    // Same depth, other widths: the ViT's adapters do not fit BERT's.
    let vit = super::vit::backbone(&device);
    assert!(LoraEnsemble::load_adapters(vit, &lora_config(), &path).is_err());
}
