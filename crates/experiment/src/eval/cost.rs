//! Cost: parameters, FLOPs, latency and peak memory. Latency is timed with every model of a seed
//! interleaved ([`seam::timing`]), after a warm-up; the median and quartiles of the calls are
//! reported.

use backbone::Input;
use burn::tensor::Tensor;
use seam::EnsembleModel;
use seam::timing::{self, quartiles};

use report::summary::Cost;
use runtime::memory;

/// Batch-1 calls per timed block: one call takes about a millisecond, too short to time alone
/// on a shared machine, so each round times a block of them and records the mean call.
const B1_BLOCK: usize = 10;

/// Batch-1 blocks per model and round, themselves round-robin over the models: they are cheap,
/// and batch-1 ratios need many.
const B1_BLOCKS: usize = 6;

/// The cost of each model on `sample` (one evaluation batch of `batch` inputs), its latency from
/// `rounds` round-robin rounds, and with `baseline` (an index into `models`) its latency ratios to
/// that model, paired by round.
pub fn costs(
    models: &[&dyn EnsembleModel],
    sample: &Input,
    batch: usize,
    rounds: usize,
    baseline: Option<usize>,
) -> Vec<Cost> {
    let heap = runtime::device::on_rust_heap(&sample.device());
    let one = sample.clone().narrow(0, 1);
    let full = sample.clone().resized(batch);
    let block = |model: &&dyn EnsembleModel| {
        (0..B1_BLOCK).for_each(|_| sync(model.member_logits(one.clone())));
    };
    let mut b1 = vec![Vec::new(); models.len()];
    let mut at_batch = vec![Vec::new(); models.len()];
    // The pool's threads spin between ops while the models are timed, as a serving process's
    // would (see `pool::hot`); every model is timed so.
    runtime::pool::hot(|| {
        for model in models {
            block(model);
            sync(model.member_logits(full.clone()));
        }
        for _ in 0..rounds {
            for _ in 0..B1_BLOCKS {
                timing::round(&mut b1, |i| block(&models[i]));
            }
            timing::round(&mut at_batch, |i| {
                sync(models[i].member_logits(full.clone()))
            });
        }
    });
    // Each batch-1 time is a block of B1_BLOCK calls: record the mean call.
    (b1.iter_mut().flatten()).for_each(|ms| *ms /= B1_BLOCK as f64);
    let paired = |times: &[Vec<f64>], i: usize| {
        baseline.map(|s| quartiles(&mut paired_ratios(&times[i], &times[s]))[1])
    };
    let (b1_x_single, x_single): (Vec<_>, Vec<_>) = (0..models.len())
        .map(|i| (paired(&b1, i), paired(&at_batch, i)))
        .unzip();
    (models.iter().enumerate())
        .map(|(i, model)| {
            let baseline = memory::reset_peak();
            sync(model.member_logits(full.clone()));
            let peak_mem_bytes = memory::peak_bytes(baseline).filter(|_| heap);
            let [b1_q1, b1_median, b1_q3] = quartiles(&mut b1[i]);
            let [q1, median, q3] = quartiles(&mut at_batch[i]);
            Cost {
                params: model.num_params() as u64,
                flops: model.flops_per_sample(),
                latency_ms_b1: b1_median,
                latency_ms: median,
                latency_ms_b1_q1: b1_q1,
                latency_ms_b1_q3: b1_q3,
                latency_ms_q1: q1,
                latency_ms_q3: q3,
                peak_mem_bytes,
                latency_x_single: x_single[i],
                latency_b1_x_single: b1_x_single[i],
            }
        })
        .collect()
}

/// `times[k] / reference[k]` for each call `k` (the two were timed in the same round).
fn paired_ratios(times: &[f64], reference: &[f64]) -> Vec<f64> {
    times.iter().zip(reference).map(|(t, r)| t / r).collect()
}

/// Waits for the result (backends may run asynchronously).
fn sync(t: Tensor<3>) {
    let _ = t.into_data();
}

#[cfg(test)]
mod tests {
    use super::{paired_ratios, quartiles};

    #[test]
    fn paired_ratios_cancel_a_slow_round() {
        // Round 2 is twice as slow for both: the per-round ratio stays 3.
        let (method, single) = ([3.0, 6.0, 3.0], [1.0, 2.0, 1.0]);
        assert_eq!(paired_ratios(&method, &single), [3.0, 3.0, 3.0]);
        // A ratio of medians would read 3 here too, but not when the slow round hits one
        // method's median call and not the other's.
        let (method, single) = ([3.0, 6.0, 6.0], [1.0, 2.0, 2.0]);
        assert_eq!(quartiles(&mut paired_ratios(&method, &single))[1], 3.0);
    }
}
