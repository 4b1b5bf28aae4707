//! What the kernels' gradient tests share.

use burn::backend::flex::FlexTensor;
use burn::tensor::{Device, Gradients, Tensor, TensorData};

/// A flex tensor of spread values in [-2, 2), a different spread for each `seed`; not drawn,
/// as other tests reseed the generator.
pub fn spread<const D: usize>(dims: [usize; D], seed: usize) -> FlexTensor {
    let n = dims.iter().product::<usize>();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i * 7919 + seed * 104_729) % 1000) as f32 / 250.0 - 2.0)
        .collect();
    FlexTensor::from_data(TensorData::new(v, dims))
}

/// Runs `check` on rayon pools of 1 and 2 threads.
pub fn pools(check: impl Fn() + Sync) {
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(&check);
    }
}

/// Values and gradients of `y` under the loss `Σ y²·c` (`c` cycling through 1..2, so that
/// output elements' gradients differ; not drawn, as other tests reseed the generator), for
/// each tensor in `wrt`.
pub fn grads<const D: usize>(
    y: Tensor<D>,
    device: &Device,
    wrt: &[&dyn Fn(&Gradients) -> TensorData],
) -> Vec<TensorData> {
    let c: Vec<f32> = (0..y.shape().num_elements())
        .map(|i| 1.0 + (i % 7) as f32 / 7.0)
        .collect();
    let c = Tensor::<D>::from_data(TensorData::new(c, y.shape()), device);
    let g = (y.clone() * y.clone() * c).sum().backward();
    let mut out = vec![y.into_data()];
    out.extend(wrt.iter().map(|f| f(&g)));
    out
}
