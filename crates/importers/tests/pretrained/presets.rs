//! The shapes of pretrained checkpoints.

use burn::module::Module;

use crate::test_device;

#[test]
fn minilm_l6_matches_its_spec_and_the_published_parameter_count() {
    let mini = importers::minilm_l6();
    assert_eq!(
        (
            mini.vocab_size,
            mini.d_model,
            mini.n_layers,
            mini.n_heads,
            mini.d_mlp,
            mini.max_position
        ),
        (30522, 384, 6, 12, 1536, 512)
    );
    assert_eq!(mini.layer_norm_eps, 1e-12);
    // all-MiniLM-L6-v2 has 22,713,216 parameters (22.7M) including its pooler (384·384 + 384),
    // which this encoder leaves out.
    let model = mini.init(&test_device()).unwrap();
    assert_eq!(model.num_params(), 22_713_216 - (384 * 384 + 384));
}
