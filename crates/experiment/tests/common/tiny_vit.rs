//! The tiny ViT of the end-to-end tests, shared with the CLI's tests (which include this file).

/// `[backbone]` as TOML text for `concat!`: the ViT the end-to-end tests train on the bundled
/// 28x28 sets (7x7 patches, width 16, two heads, MLP 32, dropout 0.1), `$layers` blocks deep.
macro_rules! tiny_vit {
    ($layers:literal) => {
        concat!(
            "[backbone]\npreset = \"vit_tiny_28\"\npatch_size = 7\nd_model = 16\nn_layers = ",
            $layers,
            "\nn_heads = 2\nd_mlp = 32\ndropout = 0.1\n"
        )
    };
}
