//! Matrix products on flex that use every thread from a smaller size than burn-flex does, and
//! add the bias as they write the product.
//!
//! burn-flex 0.22.1 runs a product on one thread below 192³ multiply-adds (192³ per matrix, or
//! 128³ over at least 4 batched matrices). Fused Hydra's products at batch 1 (three members'
//! rows in one matrix, or one matrix per member) sit between gemm's own threading threshold
//! (48·48·256) and flex's, where a second thread that is awake takes part of them (gemm alone on
//! 51x64x256: 16.3 µs on one thread, 9.2 µs on two; docs/performance.md); a single model's
//! products at batch 1 stay below both. gemm writes the output directly, where flex zeroes a
//! buffer and copies it to align it first, and adds the bias in the same pass
//! (`dst = bias + lhs·rhs`), where a Linear adds it in another op.

use burn::backend::flex::FlexTensor;
use burn::backend::{DType, TensorMetadata};
use burn::tensor::{Shape, TensorData};

/// Multiply-adds from which a product is split over rayon's threads: gemm's own threshold.
pub(super) const THREADED: usize = 48 * 48 * 256;

/// A strided f32 operand: its first element, and for each dimension its size and stride.
pub(super) struct View {
    pub(super) ptr: Ptr<f32>,
    pub(super) dims: Vec<usize>,
    pub(super) strides: Vec<isize>,
}

impl View {
    /// `None` unless f32 (a bf16 or f16 tensor takes flex's own path).
    pub(super) fn of(t: &FlexTensor) -> Option<Self> {
        (t.dtype() == DType::F32).then(|| {
            let data: &[f32] = t.storage();
            let ptr = data[t.layout().start_offset()..].as_ptr().cast_mut();
            Self {
                ptr: Ptr(ptr),
                dims: t.shape().to_vec(),
                strides: t.layout().strides().to_vec(),
            }
        })
    }

    /// The same elements seen as `dims` (row-major), when the layout allows it without a copy:
    /// here, when the tensor is contiguous.
    pub(super) fn contiguous_as(t: &FlexTensor, dims: Vec<usize>) -> Option<Self> {
        let view = Self::of(t)?;
        let same = t.shape().num_elements() == dims.iter().product::<usize>();
        (same && t.layout().is_contiguous()).then(|| {
            let mut strides = vec![1isize; dims.len()];
            for d in (0..dims.len().saturating_sub(1)).rev() {
                strides[d] = strides[d + 1] * dims[d + 1] as isize;
            }
            Self {
                dims,
                strides,
                ..view
            }
        })
    }

    /// Element offset of batch entry `b` of `batch` (0 along dimensions this view broadcasts).
    fn offset(&self, b: usize, batch: &[usize]) -> isize {
        let (mut rest, mut off) = (b, 0isize);
        for d in (0..batch.len()).rev() {
            let i = rest % batch[d];
            rest /= batch[d];
            if self.dims[d] != 1 {
                off += i as isize * self.strides[d];
            }
        }
        off
    }

    /// The last two dimensions swapped: the transpose, read in place.
    fn transposed(mut self) -> Self {
        let rank = self.dims.len();
        self.dims.swap(rank - 2, rank - 1);
        self.strides.swap(rank - 2, rank - 1);
        self
    }

    fn stride(&self, from_end: usize) -> isize {
        self.strides[self.strides.len() - from_end]
    }
}

/// `lhs · rhs + bias`, the bias of the product's shape with the rows dimension 1 (`[.., 1, n]`,
/// batch dimensions equal or 1) and contiguous rows.
pub(super) fn matmul_add(
    lhs: &FlexTensor,
    rhs: &FlexTensor,
    bias: &FlexTensor,
) -> Option<FlexTensor> {
    product(View::of(lhs)?, View::of(rhs)?, Some(View::of(bias)?), None)
}

/// `lhs · rhs` in any strides (a transposed view is read in place), batch dimensions equal or
/// 1: the products of attention and of the backward passes.
pub(super) fn matmul(lhs: &FlexTensor, rhs: &FlexTensor) -> Option<FlexTensor> {
    product(View::of(lhs)?, View::of(rhs)?, None, None)
}

/// A Linear on contiguous `x` `[.., k]`: `x · weight + bias`, weight `[k, n]`, bias `[n]`.
pub(super) fn linear(x: &FlexTensor, weight: &FlexTensor, bias: &FlexTensor) -> Option<FlexTensor> {
    let (x, leading) = rows_of(x)?;
    let n = *weight.shape().to_vec().last()?;
    let bias = View::contiguous_as(bias, vec![1, n])?;
    product(
        x,
        View::of(weight)?,
        Some(bias),
        Some([leading, vec![n]].concat()),
    )
}

/// The gradient of a Linear's input: `grad · weightᵀ`, grad `[.., n]` contiguous, weight
/// `[k, n]` read transposed in place.
pub(super) fn linear_x_grad(weight: &FlexTensor, grad: &FlexTensor) -> Option<FlexTensor> {
    let (grad, leading) = rows_of(grad)?;
    let weight = View::of(weight)?.transposed();
    let k = weight.dims[1];
    product(grad, weight, None, Some([leading, vec![k]].concat()))
}

/// The gradient of a Linear's weight: `xᵀ · grad` over every leading row, x `[.., k]` and grad
/// `[.., n]` contiguous, giving `[k, n]`.
pub(super) fn linear_weight_grad(x: &FlexTensor, grad: &FlexTensor) -> Option<FlexTensor> {
    product(rows_of(x)?.0.transposed(), rows_of(grad)?.0, None, None)
}

/// Contiguous `t` `[.., k]` seen as `[rows, k]`, with its leading dimensions.
pub(super) fn rows_of(t: &FlexTensor) -> Option<(View, Vec<usize>)> {
    let dims = t.shape().to_vec();
    let (&k, leading) = dims.split_last()?;
    let view = View::contiguous_as(t, vec![leading.iter().product(), k])?;
    Some((view, leading.to_vec()))
}

/// `lhs · rhs (+ bias)` (see [`matmul_add`]), shaped `out_dims` when given (as many elements);
/// `None` for shapes it does not take. gemm writes the output directly: no zeroed buffer.
fn product(
    lhs: View,
    rhs: View,
    bias: Option<View>,
    out_dims: Option<Vec<usize>>,
) -> Option<FlexTensor> {
    let (batch, m, k, n) = shapes(&lhs, &rhs, bias.as_ref())?;
    let count: usize = batch.iter().product();
    let per = m * n * k;
    let len = count * m * n;
    let mut out: Vec<f32> = Vec::with_capacity(len);
    let dst = Ptr(out.spare_capacity_mut().as_mut_ptr().cast::<f32>());
    // Columns `cols` of batch entry `b`'s product.
    let piece = |b: usize, cols: std::ops::Range<usize>, threads: gemm::Parallelism| {
        let block = dst.at(b * m * n + cols.start);
        let width = cols.len();
        // SAFETY: the offsets and strides are the operands' own layouts, within their storage;
        // each piece writes its own columns of its batch entry's m·n block of `out`'s
        // capacity: with a bias, every row with the bias first, which gemm then reads and adds
        // to; without, gemm writes without reading.
        unsafe {
            if let Some(bias) = &bias {
                let row = bias
                    .ptr
                    .offset(bias.offset(b, &batch) + cols.start as isize);
                fill_rows(block, [m, n, width], row, threads);
            }
            gemm::gemm(
                m,
                width,
                k,
                block,
                1,
                n as isize,
                bias.is_some(),
                lhs.ptr.offset(lhs.offset(b, &batch)),
                lhs.stride(1),
                lhs.stride(2),
                rhs.ptr
                    .offset(rhs.offset(b, &batch) + cols.start as isize * rhs.stride(1)),
                rhs.stride(1),
                rhs.stride(2),
                1.0,
                1.0,
                false,
                false,
                false,
                threads,
            )
        }
    };
    let threads = rayon::current_num_threads();
    if per >= THREADED {
        (0..count).for_each(|b| piece(b, 0..n, gemm::Parallelism::Rayon(0)));
    } else if count * per >= THREADED && threads > 1 {
        // Pieces of whole batch entries when they share out evenly among the threads, else
        // each entry's columns in `split` parts (3 members on 2 threads: 6 pieces, not 2 + 1).
        use rayon::prelude::*;
        let split = threads / gcd(count, threads);
        let width = n.div_ceil(split).next_multiple_of(16).min(n);
        let pieces = n.div_ceil(width);
        (0..count * pieces).into_par_iter().for_each(|p| {
            let start = (p % pieces) * width;
            piece(
                p / pieces,
                start..(start + width).min(n),
                gemm::Parallelism::None,
            )
        });
    } else {
        (0..count).for_each(|b| piece(b, 0..n, gemm::Parallelism::None));
    }
    // SAFETY: every element of the first `len` was written above.
    unsafe { out.set_len(len) };
    let dims = out_dims.unwrap_or_else(|| [batch, vec![m, n]].concat());
    Some(flex_tensor(Shape::from(dims), out))
}

/// Each of the `m` rows (`n` apart) of `block` starts with the `width` values at `row`; from
/// every thread when gemm shares out the product (one thread's copy kept the other waiting).
///
/// # Safety
/// `row` holds `width` values, `block` `m` rows of `n` with room for `width` in each.
pub(super) unsafe fn fill_rows(
    block: *mut f32,
    [m, n, width]: [usize; 3],
    row: *const f32,
    threads: gemm::Parallelism,
) {
    let (row, rows) = (Ptr(row.cast_mut()), Ptr(block));
    // SAFETY: the caller's; each row is written by one call.
    let fill =
        move |i: usize| unsafe { std::ptr::copy_nonoverlapping(row.at(0), rows.at(i * n), width) };
    if matches!(threads, gemm::Parallelism::Rayon(_)) {
        use rayon::prelude::*;
        (0..m).into_par_iter().with_min_len(64).for_each(fill);
    } else {
        (0..m).for_each(fill);
    }
}

/// A strided matrix operand: its first element, column stride and row stride.
pub(super) type Operand = (*const f32, isize, isize);

/// `beta · lhs · rhs` for `[m, n, k]` (`lhs` m × k, `rhs` k × n) into `dst` (a pointer and its
/// row stride) on the calling thread: added to what `dst` holds when `add`, else written
/// without reading it.
///
/// # Safety
/// Every element of the operands and of `dst`'s m × n block lies within its buffer.
pub(super) unsafe fn product_here(
    [m, n, k]: [usize; 3],
    (dst, dst_rs): (*mut f32, usize),
    [lhs, rhs]: [Operand; 2],
    beta: f32,
    add: bool,
) {
    // SAFETY: the caller's.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            dst_rs as isize,
            add,
            lhs.0,
            lhs.1,
            lhs.2,
            rhs.0,
            rhs.1,
            rhs.2,
            if add { 1.0 } else { 0.0 },
            beta,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

/// The broadcast batch dimensions and `(m, k, n)` of `lhs [.., m, k] · rhs [.., k, n] (+ bias
/// [.., 1, n])` (bias rows contiguous); `None` for shapes the product does not take.
fn shapes(
    lhs: &View,
    rhs: &View,
    bias: Option<&View>,
) -> Option<(Vec<usize>, usize, usize, usize)> {
    let rank = lhs.dims.len();
    if rank < 2 || rhs.dims.len() != rank || bias.is_some_and(|b| b.dims.len() != rank) {
        return None;
    }
    let (m, k, n) = (lhs.dims[rank - 2], lhs.dims[rank - 1], rhs.dims[rank - 1]);
    if rhs.dims[rank - 2] != k || m == 0 || n == 0 || k == 0 {
        return None;
    }
    let mut batch = Vec::with_capacity(rank - 2);
    for d in 0..rank - 2 {
        let sizes = [lhs.dims[d], rhs.dims[d], bias.map_or(1, |b| b.dims[d])];
        let size = sizes.into_iter().max().unwrap_or(1);
        if sizes.into_iter().any(|s| s != size && s != 1) {
            return None;
        }
        batch.push(size);
    }
    if let Some(bias) = bias
        && (bias.dims[rank - 2] != 1 || bias.dims[rank - 1] != n || (n > 1 && bias.stride(1) != 1))
    {
        return None;
    }
    Some((batch, m, k, n))
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A raw pointer shared by the threads that write disjoint blocks through it (or only read).
#[derive(Clone, Copy)]
pub(super) struct Ptr<T>(pub(super) *mut T);

// SAFETY: see `Ptr`: the blocks written are disjoint (one per batch entry).
unsafe impl<T> Send for Ptr<T> {}
unsafe impl<T> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    pub(super) fn at(self, i: usize) -> *mut T {
        self.0.wrapping_add(i)
    }

    pub(super) fn offset(self, i: isize) -> *const T {
        self.0.wrapping_offset(i)
    }
}

/// A flex tensor of `shape` holding `values` (row-major).
pub(crate) fn flex_tensor(shape: Shape, values: Vec<f32>) -> FlexTensor {
    debug_assert_eq!(values.len(), shape.num_elements());
    FlexTensor::from_data(TensorData::new(values, shape))
}

#[cfg(test)]
mod tests {
    use burn::nn::LinearConfig;
    use burn::tensor::{Device, Distribution, FloatDType, Tensor, Tolerance};

    use crate::testing::{grads, pools};

    /// `lhs · rhs + bias` in f64 from the tensors' values, batch dimensions broadcast.
    fn reference<const D: usize>(lhs: &Tensor<D>, rhs: &Tensor<D>, bias: &Tensor<D>) -> Vec<f64> {
        let (ld, rd, bd) = (lhs.dims(), rhs.dims(), bias.dims());
        let values = |t: &Tensor<D>| t.to_data().convert::<f64>().try_to_vec::<f64>().unwrap();
        let (l, r, b) = (values(lhs), values(rhs), values(bias));
        let (m, k, n) = (ld[D - 2], ld[D - 1], rd[D - 1]);
        let batch: Vec<usize> = (0..D - 2).map(|d| ld[d].max(rd[d]).max(bd[d])).collect();
        // Row-major index of batch entry `e` in a tensor of batch dims `dims` (1 = broadcast).
        let entry = |e: usize, dims: &[usize]| {
            let (mut rest, mut index) = (e, 0);
            for d in 0..D - 2 {
                let size: usize = batch[d + 1..].iter().product();
                let i = rest / size;
                rest %= size;
                index = index * dims[d] + if dims[d] == 1 { 0 } else { i };
            }
            index
        };
        let mut out = Vec::new();
        for e in 0..batch.iter().product() {
            let (li, ri, bi) = (entry(e, &ld), entry(e, &rd), entry(e, &bd));
            for i in 0..m {
                for j in 0..n {
                    let dot: f64 = (0..k)
                        .map(|p| l[(li * m + i) * k + p] * r[(ri * k + p) * n + j])
                        .sum();
                    out.push(dot + b[bi * n + j]);
                }
            }
        }
        out
    }

    fn check<const D: usize>(lhs: Tensor<D>, rhs: Tensor<D>, bias: Tensor<D>, what: &str) {
        let expected = reference(&lhs, &rhs, &bias);
        let burn = lhs.clone().matmul(rhs.clone()) + bias.clone();
        let ours = crate::matmul_add(lhs, rhs, bias);
        assert_eq!(ours.dims(), burn.dims(), "{what}");
        let got = ours.to_data().try_to_vec::<f32>().unwrap();
        assert_eq!(got.len(), expected.len(), "{what}");
        for (i, (&g, &e)) in got.iter().zip(&expected).enumerate() {
            assert!(
                (g as f64 - e).abs() <= 1e-4 * (1.0 + e.abs()),
                "{what}[{i}]: {g} vs {e}"
            );
        }
        let tol = Tolerance::absolute(1e-4);
        ours.into_data()
            .assert_approx_eq::<f32>(&burn.into_data(), tol);
    }

    /// Every path of the product (one thread, the pieces of small batched products, gemm's
    /// own split of large ones), on pools of 1, 2 and 3 threads, against an f64 reference.
    #[test]
    fn matmul_add_matches_a_reference_on_every_path() {
        let device = Device::flex();
        device.seed(11);
        let normal = Distribution::Normal(0.0, 1.0);
        let r3 = |dims: [usize; 3]| Tensor::<3>::random(dims, normal, &device);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let at = |what: &str| format!("{what}, {threads} thread(s)");
                // 3 members' Q/K/V at batch 1: pieces of columns on 2 threads.
                check(
                    r3([3, 17, 64]),
                    r3([3, 64, 384]),
                    r3([3, 1, 384]),
                    &at("grouped"),
                );
                // Widths that are not multiples of the pieces' 16 columns.
                check(
                    r3([3, 64, 64]),
                    r3([3, 64, 50]),
                    r3([3, 1, 50]),
                    &at("narrow"),
                );
                // One product above gemm's threshold: gemm splits it.
                check(
                    r3([1, 51, 64]),
                    r3([1, 64, 256]),
                    r3([1, 1, 256]),
                    &at("averaged"),
                );
                // Small: one thread; the bias broadcast over the batch.
                check(r3([2, 5, 7]), r3([2, 7, 3]), r3([1, 1, 3]), &at("small"));
                // One input stream for every group (a shared embedding's pixels).
                check(
                    r3([1, 17, 64]),
                    r3([3, 64, 96]),
                    r3([3, 1, 96]),
                    &at("broadcast"),
                );
                // A strided input (transposed view).
                let strided = r3([3, 64, 40]).swap_dims(1, 2);
                check(strided, r3([3, 64, 96]), r3([3, 1, 96]), &at("strided"));
                // Two batch dimensions, broadcast in one operand each.
                let lhs = Tensor::<4>::random([2, 3, 9, 16], normal, &device);
                let rhs = Tensor::<4>::random([1, 3, 16, 40], normal, &device);
                let bias = Tensor::<4>::random([2, 1, 1, 40], normal, &device);
                check(lhs, rhs, bias, &at("4-d"));
            });
        }
    }

    /// Shapes and types the kernel does not take go to Burn's ops, with the same result.
    #[test]
    fn other_dtypes_take_burns_ops() {
        let device = Device::flex();
        device.seed(12);
        let normal = Distribution::Normal(0.0, 1.0);
        let half =
            |dims: [usize; 3]| Tensor::<3>::random(dims, normal, &device).cast(FloatDType::BF16);
        let (lhs, rhs, bias) = (half([3, 8, 16]), half([3, 16, 4]), half([3, 1, 4]));
        let burn = lhs.clone().matmul(rhs.clone()) + bias.clone();
        let ours = crate::matmul_add(lhs, rhs, bias);
        ours.into_data().assert_eq(&burn.into_data(), true);
    }

    /// `linear` is `Linear::forward`: the same values on flex, and under autodiff the same
    /// values and gradients (input, weight, bias) as Burn's op, whose backward pass runs flex's
    /// products, on pools of 1 and 2 threads.
    #[test]
    fn linear_is_the_layers_forward() {
        let device = Device::flex();
        device.seed(13);
        let normal = Distribution::Normal(0.0, 1.0);
        let layer = LinearConfig::new(64, 96).init(&device);
        let x = Tensor::<3>::random([4, 17, 64], normal, &device);
        let tol = Tolerance::absolute(1e-4);
        let ours = crate::linear(&layer, x.clone()).into_data();
        ours.assert_approx_eq::<f32>(&layer.forward(x.clone()).into_data(), tol);
        // Not contiguous: Burn's op.
        let t = Tensor::<3>::random([4, 64, 17], normal, &device).swap_dims(1, 2);
        let ours = crate::linear(&layer, t.clone()).into_data();
        ours.assert_eq(&layer.forward(t).into_data(), true);

        let autodiff = device.autodiff();
        let layer = LinearConfig::new(64, 96).init(&autodiff);
        let tol = Tolerance::rel_abs(1e-4, 1e-4);
        pools(|| {
            // Contiguous (our products), then a transposed view (Burn's, equal bits).
            let inputs = [
                Tensor::<3>::random([4, 70, 64], normal, &autodiff),
                Tensor::<3>::random([4, 64, 17], normal, &autodiff).swap_dims(1, 2),
            ];
            for (i, x) in inputs.into_iter().enumerate() {
                let x = x.require_grad();
                let wrt: [&dyn Fn(&_) -> _; 3] = [
                    &|g| x.grad(g).unwrap().into_data(),
                    &|g| layer.weight.grad(g).unwrap().into_data(),
                    &|g| layer.bias.as_ref().unwrap().grad(g).unwrap().into_data(),
                ];
                let ours = grads(crate::linear(&layer, x.clone()), &autodiff, &wrt);
                let burn = grads(layer.forward(x.clone()), &autodiff, &wrt);
                // y, dx, dw, db.
                for (o, b) in ours.iter().zip(&burn) {
                    if i == 0 {
                        o.assert_approx_eq::<f32>(b, tol);
                    } else {
                        o.assert_eq(b, true);
                    }
                }
            }
        });
    }

    /// `matmul` under autodiff: the values and both gradients of Burn's `matmul`, for
    /// contiguous and transposed operands (attention's `q kᵀ`) on pools of 1 and 2 threads,
    /// and broadcast batch dimensions (Burn's op, equal bits).
    #[test]
    fn matmul_gradients_match_burns() {
        let device = Device::flex().autodiff();
        device.seed(15);
        let normal = Distribution::Normal(0.0, 1.0);
        let r4 = |dims: [usize; 4]| Tensor::<4>::random(dims, normal, &device);
        let tol = Tolerance::rel_abs(1e-4, 1e-4);
        let check = |lhs: Tensor<4>, rhs: Tensor<4>, exact: bool| {
            let (lhs, rhs) = (lhs.require_grad(), rhs.require_grad());
            let wrt: [&dyn Fn(&_) -> _; 2] = [&|g| lhs.grad(g).unwrap().into_data(), &|g| {
                rhs.grad(g).unwrap().into_data()
            }];
            let ours = grads(crate::matmul(lhs.clone(), rhs.clone()), &device, &wrt);
            let burn = grads(lhs.clone().matmul(rhs.clone()), &device, &wrt);
            for (o, b) in ours.iter().zip(&burn) {
                if exact {
                    o.assert_eq(b, true);
                } else {
                    o.assert_approx_eq::<f32>(b, tol);
                }
            }
        };
        pools(|| {
            // Scores: q [B, H, T, d] · kᵀ, k a transposed view; then probabilities · v.
            check(
                r4([2, 3, 33, 16]),
                r4([2, 3, 33, 16]).swap_dims(2, 3),
                false,
            );
            check(r4([2, 3, 33, 33]), r4([2, 3, 33, 16]), false);
            // Heads split from [B, T, H, d]: strided batch dimensions.
            let split = |t: Tensor<4>| t.swap_dims(1, 2);
            check(
                split(r4([2, 40, 3, 16])),
                split(r4([2, 40, 3, 16])).swap_dims(2, 3),
                false,
            );
            // Large enough for gemm's own split.
            check(r4([1, 1, 96, 128]), r4([1, 1, 128, 160]), false);
        });
        check(r4([2, 3, 9, 16]), r4([1, 3, 16, 5]), true);
    }
}
