//! The ROC and risk-coverage curves: hand-computed cases, and exact agreement with the scalar
//! metrics computed independently (AUROC as the trapezoid area, AURC as the mean risk).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{aurc, auroc, risk_coverage, roc_curve};

fn trapezoid(points: &[(f64, f64)]) -> f64 {
    points
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) * (w[1].1 + w[0].1) / 2.0)
        .sum()
}

#[test]
fn roc_curve_by_hand() {
    // Thresholds 0.9 (ood), 0.5 (one id, one ood: a tie), 0.1 (id).
    let roc = roc_curve(&[0.5, 0.1], &[0.9, 0.5]).unwrap();
    assert_eq!(roc, vec![(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)]);
    assert_eq!(trapezoid(&roc), 0.875);
}

#[test]
fn roc_area_is_auroc_with_and_without_ties() {
    let mut rng = StdRng::seed_from_u64(7);
    for levels in [4u32, 1000] {
        let id: Vec<f64> = (0..300)
            .map(|_| f64::from(rng.random_range(0..levels)))
            .collect();
        let ood: Vec<f64> = (0..200)
            .map(|_| {
                f64::from(rng.random_range(0..levels)) + 0.3 * levels as f64 * rng.random::<f64>()
            })
            .collect();
        let roc = roc_curve(&id, &ood).unwrap();
        assert!((trapezoid(&roc) - auroc(&id, &ood).unwrap()).abs() < 1e-12);
        assert_eq!(roc.first(), Some(&(0.0, 0.0)));
        assert_eq!(roc.last(), Some(&(1.0, 1.0)));
        assert!(roc.windows(2).all(|w| w[1].0 >= w[0].0 && w[1].1 >= w[0].1));
    }
}

#[test]
fn risk_coverage_by_hand() {
    // Most confident first: 0.1 right, then a tie at 0.2 (one wrong of two), then 0.9 wrong.
    let curve = risk_coverage(&[0.9, 0.2, 0.1, 0.2], &[false, true, true, false]).unwrap();
    assert_eq!(curve, vec![(0.25, 0.0), (0.75, 1.0 / 3.0), (1.0, 0.5)]);
}

#[test]
fn risk_coverage_mean_risk_is_aurc_without_ties() {
    let mut rng = StdRng::seed_from_u64(11);
    let u: Vec<f64> = (0..500).map(|_| rng.random::<f64>()).collect();
    // Errors more likely at high uncertainty, so the curve is not flat.
    let correct: Vec<bool> = u.iter().map(|&x| rng.random::<f64>() > x * 0.6).collect();
    let curve = risk_coverage(&u, &correct).unwrap();
    assert_eq!(curve.len(), u.len());
    let mean = curve.iter().map(|p| p.1).sum::<f64>() / curve.len() as f64;
    assert!((mean - aurc(&u, &correct).unwrap()).abs() < 1e-12);
    let errors = correct.iter().filter(|c| !**c).count() as f64;
    assert_eq!(curve.last(), Some(&(1.0, errors / u.len() as f64)));
}

#[test]
fn curves_reject_bad_input() {
    assert!(roc_curve(&[], &[1.0]).is_err());
    assert!(roc_curve(&[f64::NAN], &[1.0]).is_err());
    assert!(risk_coverage(&[0.1, 0.2], &[true]).is_err());
}
