//! Physical pruning against head gates, and its input checks.

use crate::prune;
use backbone::{Classifier, Gates, Input, Mode};
use burn::module::Module;
use hydra::HeadSet;

use crate::{HEADS, assert_close, device, images, logits, tiny, values};

/// Prunes `base` to heads {1, 3} of block 0 and {0} of block 1, checks the result computes what
/// `base` does with the other heads' gates at 0, and returns it.
pub fn pruned_equals_gated(base: &Classifier, x: &Input) -> Classifier {
    let set = HeadSet(vec![vec![1, 3], vec![0]]);
    let pruned = prune(base, &set).unwrap();
    let gates = Gates {
        heads: Some(set.mask(HEADS, &device()).unwrap()),
        ..Gates::none()
    };
    let gated = base.forward(x.clone(), &gates, Mode::Deterministic);
    assert_close(&logits(&pruned, x), &gated, 1e-5);
    pruned
}

#[test]
fn pruned_model_equals_the_gated_base_model() {
    let base = tiny(5);
    let pruned = pruned_equals_gated(&base, &images(4, 5));
    // d_h = 2: block 0 keeps 2 heads (width 4), block 1 one head (width 2).
    let a0 = &pruned.encoder().layer[0].attention;
    let a1 = &pruned.encoder().layer[1].attention;
    assert_eq!(
        (a0.n_heads, a0.query.weight.dims(), a0.output.weight.dims()),
        (2, [8, 4], [4, 8])
    );
    assert_eq!((a1.n_heads, a1.value.weight.dims()), (1, [8, 2]));
    // Each dropped head had 3·(8·2 + 2) Q/K/V and 2·8 output parameters.
    let per_head = 3 * (8 * 2 + 2) + 2 * 8;
    assert_eq!(base.num_params() - pruned.num_params(), 5 * per_head);
}

#[test]
fn mask_marks_the_kept_heads() {
    let mask = HeadSet(vec![vec![0, 3], vec![]])
        .mask(HEADS, &device())
        .unwrap();
    assert_eq!(values(&mask), [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    assert!(
        HeadSet(vec![vec![4], vec![]])
            .mask(HEADS, &device())
            .is_err()
    );
}

#[test]
fn rejects_bad_head_sets() {
    let base = tiny(5);
    for (set, field) in [
        (vec![vec![0], vec![]], "kept head units of block 1"),
        (vec![vec![0, 4], vec![1]], "kept head units of block 0"),
        (vec![vec![2, 1], vec![1]], "kept head units of block 0"),
        (vec![vec![0]], "kept head units"),
    ] {
        let err = prune(&base, &HeadSet(set.clone())).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{field} = ")), "{set:?}: {err}");
    }
}
