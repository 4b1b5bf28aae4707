//! The machine's f32 FMA peak: every thread runs independent chains of fused multiply-adds on
//! the widest vectors the CPU has (AVX-512, else AVX2 with FMA), enough chains to cover the FMA
//! latency on two ports, so the loop is bound by FMA throughput alone.

use std::time::Instant;

/// Independent accumulators per thread: latency 4 cycles x 2 FMA ports, with room to spare.
const CHAINS: usize = 12;
/// Iterations per thread (about 0.1-0.3 s on a current core).
const ITERS: u64 = 20_000_000;

/// GFLOP/s of `threads` threads at once (2 FLOPs per lane per FMA); none on a CPU without FMA.
pub fn peak_gflop_per_s(threads: usize) -> Option<f64> {
    let flops_per_iter = per_iter()?;
    let start = Instant::now();
    let sums: Vec<f32> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(|| chains(ITERS))).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("fma thread"))
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    // Keeps the work observable, so it is not optimised away.
    assert!(sums.iter().all(|x| x.is_finite()));
    Some(threads as f64 * ITERS as f64 * flops_per_iter / seconds / 1e9)
}

/// FLOPs per loop iteration of [`chains`] on this CPU.
fn per_iter() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            return Some((CHAINS * 16 * 2) as f64);
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            return Some((CHAINS * 8 * 2) as f64);
        }
    }
    None
}

fn chains(iters: u64) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked above).
            return unsafe { x86::avx512(iters) };
        }
        // SAFETY: only reached where `per_iter` found AVX2 and FMA.
        return unsafe { x86::avx2(iters) };
    }
    #[allow(unreachable_code)]
    0.0
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::CHAINS;

    #[target_feature(enable = "avx512f")]
    pub unsafe fn avx512(iters: u64) -> f32 {
        let (a, b) = (_mm512_set1_ps(0.999_999), _mm512_set1_ps(1e-7));
        let mut acc = [_mm512_set1_ps(1.0); CHAINS];
        for _ in 0..iters {
            for x in &mut acc {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        let sum = acc
            .iter()
            .fold(_mm512_setzero_ps(), |s, &x| _mm512_add_ps(s, x));
        _mm512_reduce_add_ps(sum)
    }

    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn avx2(iters: u64) -> f32 {
        let (a, b) = (_mm256_set1_ps(0.999_999), _mm256_set1_ps(1e-7));
        let mut acc = [_mm256_set1_ps(1.0); CHAINS];
        for _ in 0..iters {
            for x in &mut acc {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let sum = acc
            .iter()
            .fold(_mm256_setzero_ps(), |s, &x| _mm256_add_ps(s, x));
        let mut lanes = [0.0f32; 8];
        // SAFETY: `lanes` holds the 8 floats the store writes.
        unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum) };
        lanes.iter().sum()
    }
}
