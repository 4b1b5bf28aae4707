use backbone::{BertConfig, BlockShape, ViTConfig, block_flops};

fn small() -> ViTConfig {
    // 8x8x1, patch 4: 4 patches + class token = 5 tokens; D 8, 2 heads of 4, F 16, 3 classes.
    ViTConfig::new()
        .with_image_size(8)
        .with_patch_size(4)
        .with_d_model(8)
        .with_n_layers(1)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_num_classes(3)
}

#[test]
fn vit_flops_match_a_hand_count() {
    // patch 4·(16·8)·2 = 1024; QKV 3·5·8·8·2 = 1920; scores and context 2·(2·5·5·4)·2 = 800;
    // output 5·8·8·2 = 640; MLP 2·5·8·16·2 = 2560; classifier 8·3·2 = 48.
    assert_eq!(
        small().flops_per_sample(),
        1024 + 1920 + 800 + 640 + 2560 + 48
    );
}

#[test]
fn pruned_blocks_cost_less_as_counted() {
    let one_head = BlockShape {
        heads: 1,
        ..BlockShape::full(2)
    };
    // QKV 3·5·8·4·2 = 960; scores and context 2·(5·5·4)·2 = 400; output 5·4·8·2 = 320; MLP 2560.
    assert_eq!(block_flops(one_head, 5, 8, 4, 16), 960 + 400 + 320 + 2560);
    let gone = BlockShape {
        heads: 2,
        attention: false,
        activation: false,
    };
    // Only the merged D×D map: 5·8·8·2.
    assert_eq!(block_flops(gone, 5, 8, 4, 16), 640);
    let config = small().with_n_layers(2);
    assert_eq!(
        config.flops(&[BlockShape::full(2), gone]),
        small().flops_per_sample() + 640
    );
}

#[test]
fn bert_flops_count_the_blocks_and_classifier() {
    let config = BertConfig::new()
        .with_d_model(8)
        .with_n_heads(2)
        .with_d_mlp(16)
        .with_n_layers(1);
    let expected = 1920 + 800 + 640 + 2560 + 8 * 2 * 2;
    assert_eq!(config.flops(5, 2, &[BlockShape::full(2)]), expected);
}
