//! Ensemble diversity on hand-computed cases and invariants that tie its fields together.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{Diversity, MemberProbs, NLL_EPS, accuracy, diversity};

/// `m` members, `n` samples, `c` classes; every probability well above `NLL_EPS`.
fn random_members(rng: &mut StdRng, m: usize, n: usize, c: usize) -> Vec<f64> {
    let mut data = Vec::with_capacity(m * n * c);
    for _ in 0..m * n {
        let row: Vec<f64> = (0..c).map(|_| 0.05 + rng.random::<f64>().powi(3)).collect();
        let sum: f64 = row.iter().sum();
        data.extend(row.iter().map(|p| p / sum));
    }
    data
}

#[test]
fn two_members_by_hand() {
    // Sample 0: one-hot members on different classes. Sample 1: both [0.5, 0.5] (argmax 0).
    let members = MemberProbs::new(vec![1.0, 0.0, 0.5, 0.5, 0.0, 1.0, 0.5, 0.5], 2, 2, 2).unwrap();
    let d = diversity(&members, Some(&[0, 1])).unwrap();
    assert_eq!(d.disagreement, 0.5);
    let ln2 = 2f64.ln();
    assert!(
        (d.mutual_info - ln2 / 2.0).abs() < 1e-15,
        "{}",
        d.mutual_info
    );
    // KL on sample 0 is -ln(NLL_EPS) = 52 ln 2 each way; 0 on sample 1; 4 (pair, sample) terms.
    let kl = -NLL_EPS.ln() * 2.0 / 4.0;
    assert!(
        (d.pairwise_kl - kl).abs() < 1e-12,
        "{} vs {kl}",
        d.pairwise_kl
    );
    // Member 0: right on sample 0 only; member 1: wrong on both. Mean [.5, .5], [.5, .5]: right
    // on sample 0 (class 0), wrong on sample 1.
    assert_eq!(d.member_accuracy, 0.25);
    assert_eq!(d.ensemble_gain, 0.25);
}

#[test]
fn identical_members_are_not_diverse() {
    let mut rng = StdRng::seed_from_u64(11);
    let one = random_members(&mut rng, 1, 20, 4);
    let members = MemberProbs::new([&one[..], &one, &one].concat(), 3, 20, 4).unwrap();
    let labels: Vec<usize> = (0..20).map(|i| i % 4).collect();
    let d = diversity(&members, Some(&labels)).unwrap();
    assert_eq!((d.disagreement, d.pairwise_kl), (0.0, 0.0));
    // The member mean can differ from the member by rounding; MI only by that much.
    assert!(d.mutual_info < 1e-15, "{}", d.mutual_info);
    assert_eq!(d.ensemble_gain, 0.0);
}

#[test]
fn fields_agree_with_each_other_and_with_accuracy() {
    let mut rng = StdRng::seed_from_u64(12);
    for (m, n, c) in [(2, 30, 3), (5, 40, 6), (8, 10, 10)] {
        let members = MemberProbs::new(random_members(&mut rng, m, n, c), m, n, c).unwrap();
        let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..c)).collect();
        let d = diversity(&members, Some(&labels)).unwrap();
        assert!((0.0..=1.0).contains(&d.disagreement));
        // MI = mean_k KL(p_k || mean) <= mean_k (1/M) sum_j KL(p_k || p_j) by convexity of KL
        // in its second argument, i.e. MI <= (M - 1)/M * pairwise KL (no clipping here).
        let bound = (m - 1) as f64 / m as f64 * d.pairwise_kl;
        assert!(
            d.mutual_info > 0.0 && d.mutual_info <= bound + 1e-15,
            "{d:?}"
        );
        let mean_accuracy = accuracy(&members.mean(), &labels).unwrap();
        assert!((d.ensemble_gain + d.member_accuracy - mean_accuracy).abs() < 1e-15);
    }
}

#[test]
fn member_order_does_not_matter() {
    let mut rng = StdRng::seed_from_u64(13);
    let (m, n, c) = (4, 25, 5);
    let data = random_members(&mut rng, m, n, c);
    let labels: Vec<usize> = (0..n).map(|_| rng.random_range(0..c)).collect();
    let members = MemberProbs::new(data.clone(), m, n, c).unwrap();
    let reversed: Vec<f64> = data.chunks_exact(n * c).rev().flatten().copied().collect();
    let reversed = MemberProbs::new(reversed, m, n, c).unwrap();
    let (a, b) = (
        diversity(&members, Some(&labels)).unwrap(),
        diversity(&reversed, Some(&labels)).unwrap(),
    );
    assert_eq!(a.disagreement, b.disagreement);
    assert_eq!(a.member_accuracy, b.member_accuracy);
    for (x, y) in [
        (a.mutual_info, b.mutual_info),
        (a.pairwise_kl, b.pairwise_kl),
    ] {
        assert!((x - y).abs() < 1e-14, "{x} vs {y}");
    }
}

#[test]
fn without_labels_the_accuracy_fields_are_nan_and_survive_json() {
    let mut rng = StdRng::seed_from_u64(14);
    let members = MemberProbs::new(random_members(&mut rng, 3, 8, 3), 3, 8, 3).unwrap();
    let d = diversity(&members, None).unwrap();
    assert!(d.ensemble_gain.is_nan() && d.member_accuracy.is_nan());
    assert!(d.disagreement.is_finite() && d.pairwise_kl > 0.0);
    let json = serde_json::to_string(&d).unwrap();
    assert!(json.contains(r#""member_accuracy":null"#), "{json}");
    let back: Diversity = serde_json::from_str(&json).unwrap();
    assert!(back.ensemble_gain.is_nan() && back.member_accuracy.is_nan());
    assert_eq!(
        (back.disagreement, back.mutual_info, back.pairwise_kl),
        (d.disagreement, d.mutual_info, d.pairwise_kl)
    );
}
