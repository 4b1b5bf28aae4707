//! Split conformal prediction: hand cases, the set / score equivalence, the finite-sample
//! coverage guarantee by simulation, and set size against model sharpness.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{
    ConformalReport, ConformalScore, Probs, Raps, accuracy, conformal, conformal_scores,
    conformal_threshold, prediction_sets,
};

fn normal(rng: &mut StdRng) -> f64 {
    let u: f64 = 1.0 - rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.random::<f64>()).cos()
}

fn softmax(g: &[f64], beta: f64) -> Vec<f64> {
    let max = g.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = g.iter().map(|x| (beta * (x - max)).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.iter().map(|x| x / sum).collect()
}

/// `n` i.i.d. samples: the model predicts `softmax(beta g)` for standard normal `g`, the label
/// is drawn from `softmax(label_beta g)` (label_beta != beta: a miscalibrated model).
fn draw(rng: &mut StdRng, n: usize, c: usize, beta: f64, label_beta: f64) -> (Probs, Vec<usize>) {
    let (mut data, mut labels) = (Vec::with_capacity(n * c), Vec::with_capacity(n));
    for _ in 0..n {
        let g: Vec<f64> = (0..c).map(|_| normal(rng)).collect();
        data.extend(softmax(&g, beta));
        let (u, mut mass) = (rng.random::<f64>(), 0.0);
        let truth = softmax(&g, label_beta);
        let y = (0..c).find(|&k| {
            mass += truth[k];
            u < mass
        });
        labels.push(y.unwrap_or(c - 1));
    }
    (Probs::new(data, n, c).unwrap(), labels)
}

#[test]
fn raps_by_hand() {
    // Row [0.5, 0.3, 0.2]: APS masses 0.5, 0.8, 1.0 by rank; penalty 0.1 past rank 1 adds
    // 0, 0.1, 0.2. Row [0.1, 0.6, 0.3] ranks 1, 2, 0.
    let probs = Probs::new(vec![0.5, 0.3, 0.2, 0.1, 0.6, 0.3], 2, 3).unwrap();
    let raps = ConformalScore::Raps(Raps {
        penalty: 0.1,
        k_reg: 1,
    });
    let s = conformal_scores(&probs, &[2, 0], raps).unwrap();
    assert!(
        (s[0] - 1.2).abs() < 1e-15 && (s[1] - 1.2).abs() < 1e-15,
        "{s:?}"
    );
    // q = 0.95: row 0 keeps ranks 1 and 2 (0.5, 0.9); row 1 keeps 1 and 2 (0.6, 1.0 > 0.95: no).
    let sets = prediction_sets(&probs, 0.95, raps);
    assert_eq!(sets, [vec![0, 1], vec![1]]);
    // Penalty 0 is APS, bit for bit; k_reg past the last rank is too.
    let free = ConformalScore::Raps(Raps {
        penalty: 0.0,
        k_reg: 1,
    });
    let lax = ConformalScore::Raps(Raps {
        penalty: 0.5,
        k_reg: 3,
    });
    let aps = conformal_scores(&probs, &[2, 0], ConformalScore::Aps).unwrap();
    assert_eq!(conformal_scores(&probs, &[2, 0], free).unwrap(), aps);
    assert_eq!(conformal_scores(&probs, &[2, 0], lax).unwrap(), aps);
    // Names round-trip, with the parameters when they are not the defaults.
    assert_eq!(raps.to_string(), "raps");
    assert_eq!(lax.to_string(), "raps(penalty=0.5, k_reg=3)");
    assert_eq!(
        "raps(penalty=0.5, k_reg=3)".parse::<ConformalScore>(),
        Ok(lax)
    );
    assert_eq!("raps(k_reg=1)".parse::<ConformalScore>(), Ok(raps));
    assert_eq!("raps".parse::<ConformalScore>(), Ok(raps));
}

#[test]
fn thr_by_hand() {
    // Scores 1 - p[y]: 0.1, 1 - 0.7, 0.6, 1 - 0.8. n = 4, alpha 0.4: k = ceil(5 * 0.6) = 3.
    let cal = Probs::new(vec![0.9, 0.1, 0.3, 0.7, 0.6, 0.4, 0.8, 0.2], 4, 2).unwrap();
    let labels = [0, 1, 1, 0];
    let q = conformal_threshold(&cal, &labels, ConformalScore::Thr, 0.4).unwrap();
    assert_eq!(q, 1.0 - 0.7);
    // [0.7, 0.3] ties the threshold on class 0 and is kept; [0.5, 0.5] gets the empty set.
    let test = Probs::new(vec![0.5, 0.5, 0.75, 0.25, 0.7, 0.3, 0.1, 0.9], 4, 2).unwrap();
    let sets = prediction_sets(&test, q, ConformalScore::Thr);
    assert_eq!(sets, [vec![], vec![0], vec![0], vec![1]]);
    let r = conformal(
        &cal,
        &labels,
        &test,
        &[0, 0, 1, 1],
        ConformalScore::Thr,
        0.4,
    )
    .unwrap();
    assert_eq!((r.threshold, r.coverage, r.set_size), (q, 0.5, 0.75));
}

#[test]
fn aps_by_hand() {
    // Row 0 ranks 0, 1, 2 (masses 0.5, 0.8, 1.0); row 1 ranks 1, 2, 0 (0.4, 0.8, 1.0): the tie
    // between classes 1 and 2 goes to the lower index.
    let probs = Probs::new(vec![0.5, 0.3, 0.2, 0.2, 0.4, 0.4], 2, 3).unwrap();
    let aps = ConformalScore::Aps;
    let s = |labels: &[usize]| conformal_scores(&probs, labels, aps).unwrap();
    assert_eq!(s(&[0, 1]), [0.5, 0.4]);
    assert_eq!(s(&[1, 2]), [0.8, 0.8]);
    assert_eq!(s(&[2, 0]), [1.0, 1.0]);
    assert_eq!(prediction_sets(&probs, 0.8, aps), [vec![0, 1], vec![1, 2]]);
    assert_eq!(prediction_sets(&probs, 0.45, aps), [vec![], vec![1]]);
    assert_eq!(prediction_sets(&probs, f64::INFINITY, aps)[0], [0, 1, 2]);
    assert!(
        prediction_sets(&probs, f64::NAN, aps)
            .iter()
            .all(Vec::is_empty)
    );
}

#[test]
fn a_class_is_in_the_set_exactly_when_its_score_is_within_the_threshold() {
    let mut rng = StdRng::seed_from_u64(41);
    let (n, c) = (200, 6);
    let (probs, labels) = draw(&mut rng, n, c, 1.5, 1.5);
    for score in ConformalScore::ALL {
        // s(x_i, k) for every sample i and class k.
        let by_class: Vec<Vec<f64>> = (0..c)
            .map(|k| conformal_scores(&probs, &vec![k; n], score).unwrap())
            .collect();
        let mut thresholds: Vec<f64> = [0.05, 0.1, 0.3]
            .iter()
            .map(|&a| conformal_threshold(&probs, &labels, score, a).unwrap())
            .collect();
        // Thresholds equal to some sample's score: the boundary case.
        thresholds.extend([by_class[0][3], by_class[2][17], by_class[5][100]]);
        for q in thresholds {
            let sets = prediction_sets(&probs, q, score);
            for (i, set) in sets.iter().enumerate() {
                for (k, class_scores) in by_class.iter().enumerate() {
                    assert_eq!(
                        set.contains(&k),
                        class_scores[i] <= q,
                        "{score} q {q} i {i} k {k}"
                    );
                }
            }
        }
    }
}

#[test]
fn coverage_lies_within_the_finite_sample_bound() {
    // Split conformal on exchangeable data: E[coverage] in [1 - alpha, 1 - alpha + 1/(n+1)]
    // (continuous scores, no ties). Each repetition draws fresh calibration and test sets;
    // their mean coverage has standard error sd / sqrt(reps), estimated from the repetitions,
    // and we allow four. With n = 50 the exact value is k/(n+1) (0.902 for alpha 0.1, 0.804 for
    // 0.2); an off-by-one k (ceil(n (1 - alpha))) would give 0.882 and 0.784, outside.
    let (reps, n_cal, n_test, c) = (800, 50, 100, 10);
    let mut rng = StdRng::seed_from_u64(42);
    for score in ConformalScore::ALL {
        for alpha in [0.1, 0.2] {
            let coverages: Vec<f64> = (0..reps)
                .map(|_| {
                    let (cal, cal_labels) = draw(&mut rng, n_cal, c, 2.0, 1.0);
                    let (test, test_labels) = draw(&mut rng, n_test, c, 2.0, 1.0);
                    conformal(&cal, &cal_labels, &test, &test_labels, score, alpha)
                        .unwrap()
                        .coverage
                })
                .collect();
            let mean = coverages.iter().sum::<f64>() / reps as f64;
            let var = coverages.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (reps - 1) as f64;
            let se = (var / reps as f64).sqrt();
            let (lo, hi) = (1.0 - alpha, 1.0 - alpha + 1.0 / (n_cal + 1) as f64);
            assert!(
                mean >= lo - 4.0 * se && mean <= hi + 4.0 * se,
                "{score} alpha {alpha}: mean coverage {mean} (se {se}) outside [{lo}, {hi}]"
            );
        }
    }
}

#[test]
fn sharper_models_get_smaller_sets() {
    // Labels drawn from the model itself: sharper predictions are more accurate, and the
    // sets needed for 90% coverage shrink. 2000 samples keep the noise far below the steps.
    let (n, c, alpha) = (2000, 10, 0.1);
    let mut rng = StdRng::seed_from_u64(43);
    for score in ConformalScore::ALL {
        let mut previous = (0.0, f64::INFINITY);
        for beta in [0.5, 1.0, 2.0, 4.0] {
            let (cal, cal_labels) = draw(&mut rng, n, c, beta, beta);
            let (test, test_labels) = draw(&mut rng, n, c, beta, beta);
            let acc = accuracy(&test, &test_labels).unwrap();
            let r = conformal(&cal, &cal_labels, &test, &test_labels, score, alpha).unwrap();
            assert!(
                acc > previous.0 && r.set_size < previous.1,
                "{score} beta {beta}: accuracy {acc}, set size {} after {previous:?}",
                r.set_size
            );
            previous = (acc, r.set_size);
        }
    }
}

#[test]
fn too_small_a_calibration_set_gives_full_sets() {
    let mut rng = StdRng::seed_from_u64(44);
    let (cal, labels) = draw(&mut rng, 9, 4, 1.0, 1.0);
    let (test, test_labels) = draw(&mut rng, 30, 4, 1.0, 1.0);
    for score in ConformalScore::ALL {
        // n = 9, alpha 0.05: k = ceil(9.5) = 10 > 9.
        let r = conformal(&cal, &labels, &test, &test_labels, score, 0.05).unwrap();
        assert_eq!(
            (r.threshold, r.coverage, r.set_size),
            (f64::INFINITY, 1.0, 4.0)
        );
        // alpha 0.1: k = 9, the largest calibration score.
        let mut scores = conformal_scores(&cal, &labels, score).unwrap();
        scores.sort_by(f64::total_cmp);
        let q = conformal_threshold(&cal, &labels, score, 0.1).unwrap();
        assert_eq!(q, scores[8]);
        // alpha 0.7: (n + 1)(1 - alpha) is 3 (3.0000000000000004 in f64): the 3rd smallest.
        let q = conformal_threshold(&cal, &labels, score, 0.7).unwrap();
        assert_eq!(q, scores[2]);
    }
}

#[test]
fn score_names_and_reports_round_trip() {
    for score in ConformalScore::ALL {
        assert_eq!(score.name().parse::<ConformalScore>().unwrap(), score);
        assert_eq!(score.to_string(), score.name());
        assert_eq!(serde_json::to_value(score).unwrap(), score.name());
    }
    assert_eq!(
        serde_json::from_str::<ConformalScore>(r#""aps""#).unwrap(),
        ConformalScore::Aps
    );
    let full = ConformalReport {
        alpha: 0.05,
        score: ConformalScore::Thr,
        threshold: f64::INFINITY,
        coverage: 1.0,
        set_size: 4.0,
    };
    let json = serde_json::to_string(&full).unwrap();
    assert!(
        json.contains(r#""score":"thr""#) && json.contains(r#""threshold":null"#),
        "{json}"
    );
    assert_eq!(
        serde_json::from_str::<ConformalReport>(&json).unwrap(),
        full
    );
}
