//! Learning-rate schedule: linear warm-up, then cosine decay to zero.

/// Learning rate at optimiser step `step` (0-based) of `total` steps.
pub fn cosine_with_warmup(peak: f64, step: usize, warmup: usize, total: usize) -> f64 {
    if step < warmup {
        return peak * (step + 1) as f64 / warmup as f64;
    }
    let decay = total.saturating_sub(warmup).max(1);
    let progress = ((step - warmup) as f64 / decay as f64).min(1.0);
    peak * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos())
}

#[cfg(test)]
mod tests {
    use super::cosine_with_warmup as lr;

    #[test]
    fn warms_up_linearly_then_decays_to_zero() {
        assert_eq!(lr(1.0, 0, 4, 20), 0.25);
        assert_eq!(lr(1.0, 3, 4, 20), 1.0);
        assert_eq!(lr(1.0, 4, 4, 20), 1.0, "decay starts at the peak");
        assert!(
            (lr(1.0, 12, 4, 20) - 0.5).abs() < 1e-12,
            "half-way through the decay"
        );
        assert!(lr(1.0, 20, 4, 20).abs() < 1e-12);
        assert_eq!(lr(2.0, 0, 0, 10), 2.0, "no warm-up");
    }
}
