//! Bicubic resampling of a square grid of vectors (position embeddings), as PyTorch's
//! `interpolate(size=.., mode="bicubic", align_corners=False)` without antialiasing and ONNX
//! `Resize` (cubic, a = -0.75, half_pixel, exclude_outside = 0) compute it: output index `o`
//! samples the input at `x = (o + 0.5) · from / to - 0.5` with Keys' cubic kernel on the four
//! nearest rows (columns), indices clamped to the border.

/// Keys' cubic-convolution parameter used by PyTorch and by ONNX `Resize`'s default.
pub(super) const CUBIC_A: f64 = -0.75;

/// Keys' kernel at distance `x`.
fn keys(x: f64) -> f64 {
    let (x, a) = (x.abs(), CUBIC_A);
    if x <= 1.0 {
        ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    } else {
        0.0
    }
}

/// For each output index, its four input indices (clamped) and weights.
fn taps(from: usize, to: usize) -> Vec<[(usize, f64); 4]> {
    let scale = from as f64 / to as f64;
    let last = from as i64 - 1;
    (0..to)
        .map(|o| {
            let x = (o as f64 + 0.5) * scale - 0.5;
            let base = x.floor();
            let t = x - base;
            std::array::from_fn(|k| {
                let index = (base as i64 + k as i64 - 1).clamp(0, last) as usize;
                (index, keys(t + 1.0 - k as f64))
            })
        })
        .collect()
}

/// `grid` `[from, from, channels]` (row-major) resized to `[to, to, channels]`, separably:
/// rows first, then columns, accumulated in f64.
pub(super) fn resize(grid: &[f32], from: usize, to: usize, channels: usize) -> Vec<f32> {
    debug_assert_eq!(grid.len(), from * from * channels);
    let taps = taps(from, to);
    // rows: [to, from, channels]
    let mut rows = vec![0.0f64; to * from * channels];
    for (r, row_taps) in taps.iter().enumerate() {
        for &(i, w) in row_taps {
            let src = &grid[i * from * channels..(i + 1) * from * channels];
            let dst = &mut rows[r * from * channels..(r + 1) * from * channels];
            for (d, &s) in dst.iter_mut().zip(src) {
                *d += w * f64::from(s);
            }
        }
    }
    let mut out = vec![0.0f64; to * to * channels];
    for r in 0..to {
        for (c, col_taps) in taps.iter().enumerate() {
            let dst = &mut out[(r * to + c) * channels..(r * to + c + 1) * channels];
            for &(j, w) in col_taps {
                let src = &rows[(r * from + j) * channels..(r * from + j + 1) * channels];
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d += w * s;
                }
            }
        }
    }
    out.into_iter().map(|v| v as f32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_size_is_the_identity_exactly() {
        let grid: Vec<f32> = (0..5 * 5 * 3).map(|i| (i as f32 * 0.37).sin()).collect();
        assert_eq!(resize(&grid, 5, 5, 3), grid);
    }

    #[test]
    fn kernel_values_by_hand() {
        // a = -0.75: k(0.5) = 0.59375, k(1.5) = -0.09375, k(1) = k(2) = 0, k(0) = 1.
        assert_eq!(
            [keys(0.0), keys(0.5), keys(1.0), keys(1.5), keys(2.0)],
            [1.0, 0.59375, 0.0, -0.09375, 0.0]
        );
        // 2x2 -> 1x1 samples the centre: weights (-0.09375 + 0.59375) on each side = the mean.
        let got = resize(&[1.0, 2.0, 3.0, 6.0], 2, 1, 1);
        assert!((got[0] - 3.0).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn separable_passes_equal_the_direct_sixteen_tap_sum() {
        // The definition: out(r, c) = Σ_{i,j} k(x_r - i) k(x_c - j) grid(clamp i, clamp j)
        // over the 4x4 source pixels around (x_r, x_c), x = (o + 0.5) from / to - 0.5.
        for (from, to) in [(37, 8), (5, 9), (6, 6), (3, 1)] {
            let channels = 2;
            let grid: Vec<f32> = (0..from * from * channels)
                .map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0)
                .collect();
            let out = resize(&grid, from, to, channels);
            let source = |o: usize| (o as f64 + 0.5) * from as f64 / to as f64 - 0.5;
            let clamp = |i: f64| i.clamp(0.0, from as f64 - 1.0) as usize;
            for (r, c, ch) in (0..to * to * channels)
                .map(|p| (p / channels / to, p / channels % to, p % channels))
            {
                let (y, x) = (source(r), source(c));
                let mut want = 0.0;
                for i in -1..=2 {
                    for j in -1..=2 {
                        let (si, sj) = (y.floor() + f64::from(i), x.floor() + f64::from(j));
                        let v = grid[(clamp(si) * from + clamp(sj)) * channels + ch];
                        want += keys(y - si) * keys(x - sj) * f64::from(v);
                    }
                }
                let got = f64::from(out[(r * to + c) * channels + ch]);
                assert!(
                    (got - want).abs() < 1e-5,
                    "{from}->{to} ({r}, {c}, {ch}): {got} vs {want}"
                );
            }
        }
    }
}
