//! Hydra's zero-shot mode on CLIP: head-pruned members of one [`ClipZeroShot`] fuse with CLIP's
//! LayerNorm before the blocks (stored once) and each member's projection after them, and the
//! fused model equals the members one by one.

use backbone::{Classifier, ClipConfig, ClipTextConfig, ClipZeroShot, Input};
use burn::tensor::{Int, Tensor, TensorData};

use crate::fused::{assert_shared_embedding, pruned_from};
use crate::{config, device, uniform};

/// Class c's two prompts `[2, 4]` (start 18, end 19; the second padded).
fn prompts(c: i64) -> (Tensor<2, Int>, Tensor<2, Int>) {
    let ids = vec![18, c + 1, c + 2, 19, 18, c + 5, 19, 19];
    let mask = vec![1, 1, 1, 1, 1, 1, 1, 0];
    let tensor = |v: Vec<i64>| Tensor::from_data(TensorData::new(v, [2, 4]), &device());
    (tensor(ids), tensor(mask))
}

#[test]
fn zero_shot_members_fuse_and_equal_the_members() {
    // The tests' ViT as vision tower, a projection to E = 6 (not the width 8), 3 classes.
    let text = ClipTextConfig::new(20, 6, 8, 1, 2, 16, 19);
    let clip = ClipConfig::new(config(), text, 6).init(&device()).unwrap();
    let classes: Vec<_> = (0..3).map(prompts).collect();
    let base = Classifier::from(ClipZeroShot::new(&clip, &classes).unwrap());
    let embedding = base.backbone().embedding_params();
    let x = Input::Images(uniform([4, 1, 8, 8], 3));
    assert_shared_embedding(&pruned_from(&base), &x, embedding);
}
