//! Scaled dot-product attention for evaluation on flex, reading the heads where they lie.
//!
//! Per (batch entry, head): the scores by gemm reading q and k in their own strides, a softmax
//! pass over the rows (the vectorised exponential of [`rows`](crate::rows)), the context by gemm
//! written straight into its place in `[B, T, H, d_h]`, so joining the heads back to
//! `[B, T, H·d_h]` is a view. burn-flex's kernel (the same two products and softmax) first
//! copies q, k and v contiguous by head, expands the key mask to `[B, H, T, T]`, takes a scalar
//! `exp` per score and writes `[B, H, T, d_h]`, which the join copies once more.

use burn::backend::flex::FlexTensor;
use burn::backend::ops::FloatTensorOps;
use burn::backend::{BoolStore, DType, Flex, TensorMetadata};
use rayon::prelude::*;

use crate::matmul::{Ptr, THREADED, View, product_here};

/// `softmax(q kᵀ / √d_h) v` on `[B, H, T, d_h]` heads in any strides (k and v of the same
/// shape, with `T_k` keys), keys where `key_padding` `[B, T_k]` is true weighted 0; the context
/// `[B, H, T, d_h]`, laid out `[B, T, H, d_h]`. `None` for what it does not take (not f32,
/// broadcast or mismatched dimensions, an empty tensor, a mask not stored a byte an element).
pub(super) fn attention(
    q: &FlexTensor,
    k: &FlexTensor,
    v: &FlexTensor,
    key_padding: Option<&FlexTensor>,
) -> Option<FlexTensor> {
    let (q, k, v) = (View::of(q)?, View::of(k)?, View::of(v)?);
    let &[batch, heads, tokens, head_dim] = q.dims.as_slice() else {
        return None;
    };
    let keys = k.dims[2];
    let fits = k.dims == [batch, heads, keys, head_dim] && v.dims == k.dims;
    if !fits || batch * heads * tokens * keys * head_dim == 0 {
        return None;
    }
    // Each key's weight in the softmax, per batch entry: 0 where it is padding.
    let keep: Vec<f32> = match key_padding {
        Some(m) => (mask_bytes(m, [batch, keys])?.iter())
            .map(|&padded| f32::from(padded == 0))
            .collect(),
        None => vec![1.0; batch * keys],
    };
    let width = heads * head_dim;
    let len = batch * tokens * width;
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let dst = Ptr(out.spare_capacity_mut().as_mut_ptr().cast::<f32>());
    let scale = 1.0 / (head_dim as f32).sqrt();
    let head = |scores: &mut Vec<f32>, task: usize| {
        let (b, h) = (task / heads, task % heads);
        let at = |x: &View| {
            x.ptr
                .offset(b as isize * x.strides[0] + h as isize * x.strides[1])
        };
        // SAFETY: the offsets and strides are the operands' own layouts, within their storage;
        // `scores` holds tokens × keys values; each task writes its own head's columns
        // `h·d_h..(h+1)·d_h` of its batch entry's rows of `out`'s capacity, without reading.
        unsafe {
            let (q, k) = (
                (at(&q), q.strides[3], q.strides[2]),
                (at(&k), k.strides[2], k.strides[3]),
            );
            product_here(
                [tokens, keys, head_dim],
                (scores.as_mut_ptr(), keys),
                [q, k],
                scale,
                false,
            );
        }
        crate::rows::softmax_rows(scores, &keep[b * keys..(b + 1) * keys]);
        let context = (dst.at(b * tokens * width + h * head_dim), width);
        // SAFETY: as above.
        unsafe {
            let (p, v) = (
                (scores.as_ptr(), 1, keys as isize),
                (at(&v), v.strides[3], v.strides[2]),
            );
            product_here([tokens, head_dim, keys], context, [p, v], 1.0, false);
        }
    };
    let tasks = batch * heads;
    let scratch = || vec![0.0f32; tokens * keys];
    // Whole heads to each thread, from gemm's own threading size (both products together).
    if tasks > 1 && tasks * tokens * keys * 2 * head_dim >= THREADED {
        (0..tasks).into_par_iter().for_each_init(scratch, head);
    } else {
        let mut scores = scratch();
        (0..tasks).for_each(|t| head(&mut scores, t));
    }
    // SAFETY: every element of the first `len` was written above (each head's columns of each
    // row of each batch entry).
    unsafe { out.set_len(len) };
    let joined = crate::matmul::flex_tensor([batch, tokens, heads, head_dim].into(), out);
    Some(Flex::float_swap_dims(joined, 1, 2))
}

/// A bool mask's bytes, one per element (contiguous, row-major `dims`).
fn mask_bytes(mask: &FlexTensor, dims: [usize; 2]) -> Option<&[u8]> {
    let one_byte = matches!(mask.dtype(), DType::Bool(BoolStore::Native | BoolStore::U8));
    let layout = mask.layout();
    let fits = one_byte && mask.shape().to_vec() == dims && layout.is_contiguous();
    let start = layout.start_offset();
    fits.then(|| &mask.storage::<u8>()[start..start + dims[0] * dims[1]])
}

#[cfg(test)]
mod tests {
    use burn::tensor::{TensorData, Tolerance};

    use super::{Flex, FlexTensor, FloatTensorOps};

    use crate::ops::attention_ops;
    use crate::testing::{pools, spread};

    /// `[B, H, T, d_h]` heads as a projection leaves them: a view of `[B, T, H, d_h]`.
    fn heads_of(b: usize, h: usize, t: usize, d: usize, seed: usize) -> FlexTensor {
        Flex::float_swap_dims(spread([b, t, h, d], seed), 1, 2)
    }

    fn mask(b: usize, keys: usize, padded: &[usize]) -> FlexTensor {
        // Sequence i ignores its last `padded[i]` keys.
        let m: Vec<bool> = (0..b * keys)
            .map(|i| i % keys >= keys - padded[i / keys])
            .collect();
        FlexTensor::from_data(TensorData::new(m, [b, keys]))
    }

    /// The kernel gives burn-flex's attention on strided heads (q and k views of `[B, T, H, d_h]`,
    /// v contiguous by head), with and without a key mask (one sequence with every key masked:
    /// zeros for both), as many keys as queries or fewer, on one thread and on two, with whole
    /// heads shared out (the first shapes) and run in turn (the last).
    #[test]
    fn matches_burns_attention_on_strided_heads() {
        let tol = Tolerance::rel_abs(1e-5, 1e-6);
        for (b, h, t, keys, d) in [(3, 3, 37, 37, 40), (2, 4, 33, 29, 24), (1, 2, 5, 5, 8)] {
            let (q, k) = (heads_of(b, h, t, d, 1), heads_of(b, h, keys, d, 2));
            let v = spread([b, h, keys, d], 3);
            let padded: Vec<usize> = (0..b).map(|i| [0, 3, keys][i % 3]).collect();
            pools(|| {
                for m in [None, Some(mask(b, keys, &padded))] {
                    let ours = super::attention(&q, &k, &v, m.as_ref()).expect("f32 heads");
                    assert_eq!(ours.layout().shape().to_vec(), [b, h, t, d]);
                    let burn = attention_ops::<Flex>(q.clone(), k.clone(), v.clone(), m);
                    (ours.into_data()).assert_approx_eq::<f32>(&burn.into_data(), tol);
                }
            });
        }
    }

    /// The context comes back as the view of `[B, T, H, d_h]`: joining the heads is free.
    #[test]
    fn the_context_is_laid_out_by_token() {
        let q = heads_of(2, 3, 4, 5, 1);
        let out = super::attention(&q, &q, &q, None).unwrap();
        let joined = Flex::float_swap_dims(out, 1, 2);
        assert!(joined.layout().is_contiguous());
    }

    /// Shapes it does not take fall back to Burn's kernel: mismatched heads, other dtypes.
    #[test]
    fn declines_what_it_does_not_take() {
        let q = spread([1, 2, 4, 8], 1);
        let other_heads = spread([1, 3, 4, 8], 2);
        assert!(super::attention(&q, &other_heads, &other_heads, None).is_none());
        let f64s = FlexTensor::from_data(TensorData::new(vec![0.5f64; 64], [1, 2, 4, 8]));
        assert!(super::attention(&f64s, &f64s, &f64s, None).is_none());
        assert!(super::attention(&q, &q, &q, Some(&mask(2, 4, &[0, 0]))).is_none());
    }
}
