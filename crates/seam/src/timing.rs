//! Interleaved wall-clock timing of several models, shared by the evaluation's cost table and
//! HetDPT's latency budget: models are timed round-robin (A B C ... A B C ...), so that a slow
//! spell of a shared machine hits all of them alike rather than one.

use std::time::Instant;

/// One round: `call(i)` for each model `i` in turn, timed alone; its time (ms) is pushed to
/// `times[i]`. The call must wait for its result (read it back), since backends may run
/// asynchronously.
pub fn round(times: &mut [Vec<f64>], mut call: impl FnMut(usize)) {
    for (i, t) in times.iter_mut().enumerate() {
        let start = Instant::now();
        call(i);
        t.push(start.elapsed().as_secs_f64() * 1e3);
    }
}

/// The first quartile, median and third quartile, linearly interpolated between order
/// statistics (numpy's default); NaN for no values.
pub fn quartiles(values: &mut [f64]) -> [f64; 3] {
    values.sort_by(f64::total_cmp);
    [0.25, 0.5, 0.75].map(|q| quantile(values, q))
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return f64::NAN;
    };
    let pos = q * last as f64;
    let (lo, frac) = (pos.floor() as usize, pos.fract());
    let hi = (lo + 1).min(last);
    sorted[lo] + frac * (sorted[hi] - sorted[lo])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_match_numpy() {
        // numpy.quantile([3, 1, 4, 1, 5, 9, 2, 6], [0.25, 0.5, 0.75]) = [1.75, 3.5, 5.25].
        assert_eq!(
            quartiles(&mut [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0]),
            [1.75, 3.5, 5.25]
        );
        assert_eq!(quartiles(&mut [7.0]), [7.0; 3]);
        assert!(quartiles(&mut []).iter().all(|q| q.is_nan()));
    }

    #[test]
    fn a_round_calls_each_model_once_in_order() {
        let mut calls = Vec::new();
        let mut times = vec![vec![1.0], Vec::new(), Vec::new()];
        round(&mut times, |i| calls.push(i));
        assert_eq!(calls, [0, 1, 2]);
        assert_eq!(times.iter().map(Vec::len).collect::<Vec<_>>(), [2, 1, 1]);
        assert_eq!(times[0][0], 1.0, "earlier times are kept");
        assert!(times.iter().flatten().all(|t| *t >= 0.0 && t.is_finite()));
    }
}
