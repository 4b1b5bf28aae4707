//! A block's MLP for evaluation on flex, `fc2(GELU(fc1(x)))`, a block of rows at a time.
//!
//! Through the separate ops the hidden activations (`[rows, F]`: 12.8 MB per block of
//! `vit_192x12` at batch 64) are written with fc1's bias, read and written back by gemm, read
//! and written by GELU and read by fc2's gemm, each time from memory. Here each thread takes
//! blocks of rows whose hidden activations stay in its cache (about 512 KB), in a scratch buffer
//! it keeps: fc1's bias rows, fc1's product, GELU and fc2's product on one block before the next.
//! Blocks cost gemm a packing of both weights each, so wide hidden layers (MiniLM's and
//! DINOv2-S's 1,536) keep the separate ops.

use std::cell::RefCell;

use burn::backend::TensorMetadata;
use burn::backend::flex::FlexTensor;
use burn::tensor::Shape;
use rayon::prelude::*;

use crate::matmul::{Ptr, View, fill_rows, product_here, rows_of};

/// Hidden values per block of rows (512 KB of f32), well inside a core's L2.
const HIDDEN_BLOCK: usize = 1 << 17;

/// The fewest rows a block may have. Each block packs both weight matrices for gemm afresh, a
/// cost against the block's products of about one in its rows: MiniLM's (F = 1,536, 85 rows a
/// block) evaluated 15% slower by blocks than through the separate ops, `vit_192x12`'s (F = 768,
/// 176 rows) 2-4% faster (docs/performance.md).
const MIN_ROWS: usize = 128;

thread_local! {
    /// Each thread's hidden block, kept between calls.
    static HIDDEN: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// `fc2(GELU(x · w1 + b1)) · w2 + b2` for contiguous `x` `[.., D]`, weights `[D, F]` and
/// `[F, N]`, biases `[F]` and `[N]`. `None` for what it does not take (not f32, mismatched
/// shapes, non-contiguous operands), for hidden widths too large for blocks of [`MIN_ROWS`], and
/// for inputs of fewer than two blocks, where the separate ops share each product among the
/// threads instead.
pub(super) fn mlp(x: &FlexTensor, [w1, b1, w2, b2]: [&FlexTensor; 4]) -> Option<FlexTensor> {
    let (x, leading) = rows_of(x)?;
    let [rows, d] = [x.dims[0], x.dims[1]];
    let matrix = |t: &FlexTensor| View::contiguous_as(t, t.shape().to_vec());
    let (w1, w2) = (matrix(w1)?, matrix(w2)?);
    let (&[d1, f], &[f2, n]) = (w1.dims.as_slice(), w2.dims.as_slice()) else {
        return None;
    };
    let (b1, b2) = (
        View::contiguous_as(b1, vec![f])?,
        View::contiguous_as(b2, vec![n])?,
    );
    if d1 != d || f2 != f || HIDDEN_BLOCK / f < MIN_ROWS || rows * f < 2 * HIDDEN_BLOCK {
        return None;
    }
    // As many blocks for each thread, each within HIDDEN_BLOCK.
    let threads = rayon::current_num_threads();
    let blocks = (rows * f).div_ceil(HIDDEN_BLOCK).next_multiple_of(threads);
    let block = rows.div_ceil(blocks);
    let mut out: Vec<f32> = Vec::with_capacity(rows * n);
    let dst = Ptr(out.spare_capacity_mut().as_mut_ptr().cast::<f32>());
    (0..rows.div_ceil(block)).into_par_iter().for_each(|i| {
        let (start, m) = (i * block, block.min(rows - i * block));
        HIDDEN.with_borrow_mut(|hidden| {
            if hidden.len() < block * f {
                hidden.resize(block * f, 0.0);
            }
            // SAFETY: the views are the operands' own contiguous layouts (checked above), so
            // rows `start..start + m` of x are in its storage; `hidden` holds m·f values; each
            // block writes only its own rows of `out`'s capacity, bias first, which gemm then
            // reads and adds to.
            unsafe {
                // Row-major `[rows, cols]` matrices as gemm operands.
                let rows = |p: *const f32, cols: usize| (p, 1, cols as isize);
                let h = hidden.as_mut_ptr();
                fill_rows(h, [m, f, f], b1.ptr.at(0), gemm::Parallelism::None);
                let (x, w1) = (rows(x.ptr.at(start * d), d), rows(w1.ptr.at(0), f));
                product_here([m, f, d], (h, f), [x, w1], 1.0, true);
                crate::cpu::gelu_here(&mut hidden[..m * f]);
                let o = dst.at(start * n);
                fill_rows(o, [m, n, n], b2.ptr.at(0), gemm::Parallelism::None);
                let (h, w2) = (rows(hidden.as_ptr(), f), rows(w2.ptr.at(0), n));
                product_here([m, n, f], (o, n), [h, w2], 1.0, true);
            }
        })
    });
    // SAFETY: every block wrote its rows, all `rows · n` values.
    unsafe { out.set_len(rows * n) };
    let dims = [leading, vec![n]].concat();
    Some(crate::matmul::flex_tensor(Shape::from(dims), out))
}

#[cfg(test)]
mod tests {
    use burn::nn::LinearConfig;
    use burn::tensor::activation::gelu;
    use burn::tensor::{Device, Distribution, Tensor, Tolerance};

    use crate::testing::{grads, pools, spread};

    /// The MLP by blocks of rows gives what Burn's Linears and GELU give: inputs of many blocks
    /// (the last one shorter), of too few for blocks (the separate ops), on 1 and 2 threads;
    /// under autodiff the same values and gradients as Burn's ops.
    #[test]
    fn blocks_of_rows_give_the_layers_forward() {
        let device = Device::flex();
        device.seed(21);
        let normal = Distribution::Normal(0.0, 1.0);
        let (fc1, fc2) = (
            LinearConfig::new(24, 512).init(&device),
            LinearConfig::new(512, 20).init(&device),
        );
        let burn = |x: Tensor<3>| fc2.forward(gelu(fc1.forward(x)));
        let tol = Tolerance::rel_abs(1e-4, 1e-5);
        pools(|| {
            // 707 rows of 512 hidden values: 3 blocks of 236 rows on one thread, 4 of 177 on
            // two, the last one shorter; 34 rows: the separate ops.
            for dims in [[7, 101, 24], [2, 17, 24]] {
                let x = Tensor::<3>::random(dims, normal, &device);
                let ours = crate::mlp(&fc1, &fc2, x.clone()).into_data();
                ours.assert_approx_eq::<f32>(&burn(x).into_data(), tol);
            }
            let weights = [spread([24, 512], 1), spread([512], 2)];
            let weights = [
                &weights[0],
                &weights[1],
                &spread([512, 20], 3),
                &spread([20], 4),
            ];
            assert!(super::mlp(&spread([7, 101, 24], 5), weights).is_some());
            assert!(super::mlp(&spread([2, 17, 24], 5), weights).is_none());
            // Too wide a hidden layer for blocks of MIN_ROWS rows: the separate ops.
            let wide = [
                spread([24, 1100], 1),
                spread([1100], 2),
                spread([1100, 20], 3),
            ];
            let wide = [&wide[0], &wide[1], &wide[2], weights[3]];
            assert!(super::mlp(&spread([7, 101, 24], 5), wide).is_none());
        });

        let autodiff = device.autodiff();
        let (fc1, fc2) = (
            LinearConfig::new(24, 512).init(&autodiff),
            LinearConfig::new(512, 20).init(&autodiff),
        );
        let x = Tensor::<3>::random([7, 101, 24], normal, &autodiff).require_grad();
        let wrt: [&dyn Fn(&_) -> _; 2] = [&|g| x.grad(g).unwrap().into_data(), &|g| {
            fc1.weight.grad(g).unwrap().into_data()
        }];
        let ours = grads(crate::mlp(&fc1, &fc2, x.clone()), &autodiff, &wrt);
        let burn = grads(fc2.forward(gelu(fc1.forward(x.clone()))), &autodiff, &wrt);
        for (o, b) in ours.iter().zip(&burn) {
            o.assert_approx_eq::<f32>(b, Tolerance::rel_abs(1e-4, 1e-4));
        }
    }
}
