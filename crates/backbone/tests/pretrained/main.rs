//! Importing Hugging Face checkpoints: the safetensors reader and BERT key mapping on small
//! files written here (`format`), and all-MiniLM-L6-v2 against an independent numpy forward
//! (`minilm`, needs `datasets/fetch`).

mod format;
mod minilm;

use burn::tensor::{Device, Tensor};

/// Tests run on the flex CPU device, chosen explicitly.
pub fn test_device() -> Device {
    Device::flex()
}

/// Flattened f32 values of a tensor.
pub fn values<const D: usize>(t: &Tensor<D>) -> Vec<f32> {
    t.to_data()
        .convert::<f32>()
        .try_into_vec::<f32>()
        .expect("f32 values")
}
