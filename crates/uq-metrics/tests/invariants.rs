//! Invariants and brute-force cross-checks (independent, naive definitions).

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{
    Logits, MemberProbs, Options, Probs, Score, ScoreInput, adaptive_ece, augrc, aupr_in, aupr_out,
    aurc, auroc, classwise_ece, ece, evaluate, fpr95, ood_report, reliability_diagram, score,
};

fn uniform(rng: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random::<f64>()).collect()
}

/// Scores on a coarse grid: many ties, within and across the two sides.
fn grid(rng: &mut StdRng, n: usize, levels: u32) -> Vec<f64> {
    (0..n)
        .map(|_| f64::from(rng.random_range(0..levels)) / 4.0)
        .collect()
}

fn neg(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| -x).collect()
}

/// P(ood > id) + P(ood == id) / 2 over all pairs.
fn pairwise_auroc(id: &[f64], ood: &[f64]) -> f64 {
    let mut wins = 0.0;
    for o in ood {
        for i in id {
            wins += if o > i {
                1.0
            } else if o == i {
                0.5
            } else {
                0.0
            };
        }
    }
    wins / (id.len() * ood.len()) as f64
}

/// Average precision straight from its definition, one threshold per distinct score.
fn naive_average_precision(pos: &[f64], neg: &[f64]) -> f64 {
    let mut thresholds: Vec<f64> = pos.iter().chain(neg).copied().collect();
    thresholds.sort_by(|a, b| b.total_cmp(a));
    thresholds.dedup();
    let mut previous_recall = 0.0;
    let mut ap = 0.0;
    for t in thresholds {
        let tp = pos.iter().filter(|&&s| s >= t).count() as f64;
        let fp = neg.iter().filter(|&&s| s >= t).count() as f64;
        let recall = tp / pos.len() as f64;
        if tp > 0.0 {
            ap += (recall - previous_recall) * tp / (tp + fp);
        }
        previous_recall = recall;
    }
    ap
}

/// FPR at the highest threshold whose TPR reaches 95%.
fn naive_fpr95(id: &[f64], ood: &[f64]) -> f64 {
    let mut thresholds: Vec<f64> = id.iter().chain(ood).copied().collect();
    thresholds.sort_by(|a, b| b.total_cmp(a));
    for t in thresholds {
        let tpr = ood.iter().filter(|&&s| s >= t).count() as f64 / ood.len() as f64;
        if tpr >= 0.95 {
            return id.iter().filter(|&&s| s >= t).count() as f64 / id.len() as f64;
        }
    }
    unreachable!("the lowest threshold has TPR 1")
}

#[test]
fn auroc_flips_under_negation_without_ties() {
    let mut rng = StdRng::seed_from_u64(1);
    let (id, ood) = (uniform(&mut rng, 57), uniform(&mut rng, 43));
    let a = auroc(&id, &ood).unwrap();
    let b = auroc(&neg(&id), &neg(&ood)).unwrap();
    assert!((a + b - 1.0).abs() < 1e-12, "{a} + {b} != 1");
    assert!(a > 0.0 && a < 1.0);
}

#[test]
fn ood_metrics_are_invariant_to_strictly_increasing_maps() {
    let mut rng = StdRng::seed_from_u64(2);
    let (id, ood) = (grid(&mut rng, 40, 30), grid(&mut rng, 30, 30));
    let map = |v: &[f64]| {
        v.iter()
            .map(|x| (x * 0.5).exp() * 3.0 - 7.0)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ood_report(&id, &ood).unwrap(),
        ood_report(&map(&id), &map(&ood)).unwrap()
    );
}

#[test]
fn ood_metrics_match_naive_definitions_with_ties() {
    let mut rng = StdRng::seed_from_u64(3);
    for trial in 0..20 {
        let (n_id, n_ood) = (rng.random_range(1..30), rng.random_range(1..30));
        let (id, ood) = (grid(&mut rng, n_id, 6), grid(&mut rng, n_ood, 7));
        let r = ood_report(&id, &ood).unwrap();
        let expect = [
            ("auroc", r.auroc, pairwise_auroc(&id, &ood)),
            ("aupr_out", r.aupr_out, naive_average_precision(&ood, &id)),
            (
                "aupr_in",
                r.aupr_in,
                naive_average_precision(&neg(&id), &neg(&ood)),
            ),
            ("fpr95", r.fpr95, naive_fpr95(&id, &ood)),
        ];
        for (what, ours, naive) in expect {
            assert!(
                (ours - naive).abs() < 1e-12,
                "trial {trial} {what}: {ours} vs {naive}"
            );
        }
    }
}

#[test]
fn aupr_in_is_aupr_out_with_roles_swapped() {
    let mut rng = StdRng::seed_from_u64(4);
    let (id, ood) = (grid(&mut rng, 25, 9), grid(&mut rng, 18, 9));
    assert_eq!(
        aupr_in(&id, &ood).unwrap(),
        aupr_out(&neg(&ood), &neg(&id)).unwrap()
    );
}

#[test]
fn separated_and_constant_scores_give_textbook_values() {
    let (id, ood) = ([0.1, 0.2, 0.3], [0.7, 0.8]);
    let r = ood_report(&id, &ood).unwrap();
    assert_eq!(
        (r.auroc, r.aupr_in, r.aupr_out, r.fpr95),
        (1.0, 1.0, 1.0, 0.0)
    );
    let r = ood_report(&[0.5; 3], &[0.5; 2]).unwrap();
    assert_eq!((r.auroc, r.fpr95), (0.5, 1.0));
    assert!((r.aupr_out - 0.4).abs() < 1e-15 && (r.aupr_in - 0.6).abs() < 1e-15);
    // Signed zeros are one tie.
    assert_eq!(auroc(&[-0.0], &[0.0]).unwrap(), 0.5);
    assert_eq!(fpr95(&[0.0, 1.0], &[-0.0]).unwrap(), 1.0);
}

/// Rows `[c, 1 - c]` (class 0 predicted for c >= 0.5), correct a fraction c of the time.
fn calibrated(groups: &[(f64, usize, usize)]) -> (Probs, Vec<usize>) {
    let mut data = Vec::new();
    let mut labels = Vec::new();
    for &(c, size, hits) in groups {
        for k in 0..size {
            data.extend([c, 1.0 - c]);
            labels.push(if k < hits { 0 } else { 1 });
        }
    }
    (Probs::new(data, labels.len(), 2).unwrap(), labels)
}

#[test]
fn perfectly_calibrated_predictions_have_zero_ece() {
    let (probs, labels) = calibrated(&[(0.6, 5, 3), (0.8, 5, 4), (1.0, 5, 5)]);
    assert!(ece(&probs, &labels, 15).unwrap() < 1e-12);
    assert!(ece(&probs, &labels, 4).unwrap() < 1e-12);
    // Three equal-mass bins of five hold exactly the three groups.
    assert!(adaptive_ece(&probs, &labels, 3).unwrap() < 1e-12);
    // One bin mixes them: |mean acc - mean conf| is still 0 here (both 0.8).
    assert!(ece(&probs, &labels, 1).unwrap() < 1e-12);
}

#[test]
fn ece_of_an_overconfident_model_is_its_gap() {
    // Confidence 0.9, accuracy 0.5: ECE = 0.4 with any equal-width binning.
    let (probs, labels) = calibrated(&[(0.9, 10, 5)]);
    for bins in [1, 7, 15, 100] {
        assert!((ece(&probs, &labels, bins).unwrap() - 0.4).abs() < 1e-12);
    }
    // Equal-mass bins split the tie in input order: 5 correct, then 5 wrong.
    assert!((adaptive_ece(&probs, &labels, 1).unwrap() - 0.4).abs() < 1e-12);
    let two = adaptive_ece(&probs, &labels, 2).unwrap();
    assert!((two - (0.5 * 0.1 + 0.5 * 0.9)).abs() < 1e-12, "{two}");
}

#[test]
fn reliability_bins_partition_the_samples_on_half_open_edges() {
    // Confidences on exact edges of 4 bins: 0.5 -> bin 1 (0.25, 0.5], 0.75 -> bin 2, 1.0 -> bin 3.
    let (probs, labels) = calibrated(&[(0.5, 2, 1), (0.75, 3, 3), (1.0, 1, 1)]);
    let bins = reliability_diagram(&probs, &labels, 4).unwrap();
    let counts: Vec<usize> = bins.iter().map(|b| b.count).collect();
    assert_eq!(counts, [0, 2, 3, 1]);
    assert_eq!((bins[0].confidence, bins[0].accuracy), (None, None));
    assert_eq!(
        (bins[1].confidence, bins[1].accuracy),
        (Some(0.5), Some(0.5))
    );
    assert_eq!((bins[3].lo, bins[3].hi), (0.75, 1.0));
}

/// Naive AURC for one fixed ranking (most confident first).
fn aurc_of_order(errors: &[bool]) -> f64 {
    let mut wrong = 0.0;
    let mut sum = 0.0;
    for (k, &e) in errors.iter().enumerate() {
        wrong += f64::from(u8::from(e));
        sum += wrong / (k + 1) as f64;
    }
    sum / errors.len() as f64
}

/// Naive AUGRC for one fixed ranking: the mean over k of (errors among the first k) / N.
fn augrc_of_order(errors: &[bool]) -> f64 {
    let n = errors.len() as f64;
    let mut wrong = 0.0;
    let mut sum = 0.0;
    for &e in errors {
        wrong += f64::from(u8::from(e));
        sum += wrong / n;
    }
    sum / n
}

fn permutations(items: &[bool]) -> Vec<Vec<bool>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

#[test]
fn aurc_with_ties_is_the_mean_over_orders_of_each_tie_group() {
    // Uncertainties: group 0.1 (3 samples), 0.2 (1), 0.5 (3); errors are the `false`s.
    let uncertainty = [0.5, 0.1, 0.2, 0.1, 0.5, 0.1, 0.5];
    let correct = [true, false, true, true, false, true, false];
    let errors = |u: f64| -> Vec<bool> {
        (0..7)
            .filter(|&i| uncertainty[i] == u)
            .map(|i| !correct[i])
            .collect()
    };
    let (a, b, c) = (errors(0.1), errors(0.2), errors(0.5));
    let (mut total, mut total_g, mut count) = (0.0, 0.0, 0);
    for pa in permutations(&a) {
        for pc in permutations(&c) {
            let order: Vec<bool> = pa.iter().chain(&b).chain(&pc).copied().collect();
            total += aurc_of_order(&order);
            total_g += augrc_of_order(&order);
            count += 1;
        }
    }
    let ours = aurc(&uncertainty, &correct).unwrap();
    assert!((ours - total / f64::from(count)).abs() < 1e-12);
    let ours = augrc(&uncertainty, &correct).unwrap();
    assert!((ours - total_g / f64::from(count)).abs() < 1e-12);
}

#[test]
fn aurc_without_ties_is_the_naive_curve_area() {
    let mut rng = StdRng::seed_from_u64(5);
    let uncertainty = uniform(&mut rng, 50);
    let correct: Vec<bool> = (0..50).map(|_| rng.random_bool(0.7)).collect();
    let mut order: Vec<usize> = (0..50).collect();
    order.sort_by(|&i, &j| uncertainty[i].total_cmp(&uncertainty[j]));
    let errors: Vec<bool> = order.iter().map(|&i| !correct[i]).collect();
    let naive = aurc_of_order(&errors);
    assert!((aurc(&uncertainty, &correct).unwrap() - naive).abs() < 1e-12);
    let naive = augrc_of_order(&errors);
    assert!((augrc(&uncertainty, &correct).unwrap() - naive).abs() < 1e-12);
    // All correct: no risk anywhere; all wrong: risk 1 everywhere, and the generalized risk
    // grows from 1/N to 1, so its mean is (N + 1) / 2N.
    assert_eq!(aurc(&uncertainty, &[true; 50]).unwrap(), 0.0);
    assert_eq!(aurc(&uncertainty, &[false; 50]).unwrap(), 1.0);
    assert_eq!(augrc(&uncertainty, &[true; 50]).unwrap(), 0.0);
    assert!((augrc(&uncertainty, &[false; 50]).unwrap() - 51.0 / 100.0).abs() < 1e-15);
}

#[test]
fn classwise_ece_by_hand() {
    // Two bins: (0, 0.5] and (0.5, 1]. Class 0's forecasts 0.8, 0.4, 0.5 against [1, 1, 0]:
    // bin 1 holds 0.4 (hit) and 0.5 (miss): |1 - 0.9|; bin 2 holds 0.8 (hit): |1 - 0.8|.
    // Class 1's forecasts 0.2, 0.6, 0.5 against [0, 0, 1]: bin 1: 0.2 and 0.5 with one hit,
    // |1 - 0.7|; bin 2: 0.6, no hit, |0 - 0.6|.
    let probs = Probs::new(vec![0.8, 0.2, 0.4, 0.6, 0.5, 0.5], 3, 2).unwrap();
    let labels = [0, 0, 1];
    let class0 = (0.1 + 0.2) / 3.0;
    let class1 = (0.3 + 0.6) / 3.0;
    let got = classwise_ece(&probs, &labels, 2).unwrap();
    assert!((got - (class0 + class1) / 2.0).abs() < 1e-15, "{got}");
    // With two classes and one bin, each class's term is |freq - mean p| over all samples,
    // and the two are equal (p1 = 1 - p0, [y = 1] = 1 - [y = 0]).
    let one_bin = classwise_ece(&probs, &labels, 1).unwrap();
    assert!(
        (one_bin - ((2.0 - 1.7) / 3.0_f64).abs()).abs() < 1e-15,
        "{one_bin}"
    );
}

#[test]
fn evaluate_agrees_with_hand_computed_values() {
    let probs = Probs::new(vec![0.8, 0.2, 0.4, 0.6, 0.5, 0.5], 3, 2).unwrap();
    let labels = [0, 0, 1];
    let r = evaluate(&probs, &labels, &Options::default()).unwrap();
    assert_eq!(r.n, 3);
    assert!((r.accuracy - 1.0 / 3.0).abs() < 1e-15); // argmax of [0.5, 0.5] is 0
    let nll = -(0.8f64.ln() + 0.4f64.ln() + 0.5f64.ln()) / 3.0;
    assert!((r.nll - nll).abs() < 1e-15);
    let brier = (2.0 * 0.04 + 2.0 * 0.36 + 2.0 * 0.25) / 3.0;
    assert!((r.brier - brier).abs() < 1e-15);
    let json = serde_json::to_value(&r).unwrap();
    for key in [
        "n",
        "accuracy",
        "nll",
        "brier",
        "ece",
        "aece",
        "classwise_ece",
        "aurc",
        "augrc",
    ] {
        assert!(json.get(key).is_some(), "report lacks {key}");
    }
}

#[test]
fn options_deserialise_with_defaults() {
    let o: Options = serde_json::from_str(r#"{"bins": 10}"#).unwrap();
    assert_eq!((o.bins, o.adaptive_bins), (10, 15));
    assert!(serde_json::from_str::<Options>(r#"{"bin": 10}"#).is_err());
}

#[test]
fn scores_on_constructed_inputs() {
    let c = 4;
    let uniform_row = vec![0.25; c];
    let peaked = [0.7, 0.1, 0.1, 0.1];
    // Two samples; three members that agree on sample 0 and disagree on sample 1.
    let members: Vec<f64> = [
        [&uniform_row[..], &peaked[..]].concat(),
        [&uniform_row[..], &[0.1, 0.7, 0.1, 0.1][..]].concat(),
        [&uniform_row[..], &peaked[..]].concat(),
    ]
    .concat();
    let members = MemberProbs::new(members, 3, 2, c).unwrap();
    let logits = Logits::new(vec![2.0, 2.0, 2.0, 2.0, 9.0, 1.0, 0.0, -3.0], 2, c).unwrap();
    let input = ScoreInput {
        probs: None,
        members: Some(&members),
        logits: Some(&logits),
    };
    let get = |kind| score(kind, &input).unwrap();
    let ln_c = (c as f64).ln();
    assert!((get(Score::Entropy)[0] - ln_c).abs() < 1e-15);
    assert!((get(Score::Msp)[0] - 0.75).abs() < 1e-15);
    assert_eq!(get(Score::MutualInfo)[0], 0.0);
    assert_eq!(get(Score::MemberVariance)[0], 0.0);
    // Sample 0: all agree (argmax ties -> class 0). Sample 1: one pair of three agrees.
    let disagreement = get(Score::Disagreement);
    assert_eq!(disagreement[0], 0.0);
    assert!((disagreement[1] - 2.0 / 3.0).abs() < 1e-15);
    assert!(get(Score::MutualInfo)[1] > 0.0);
    // Variance of (0.7, 0.1, 0.7) is 0.08 on classes 0 and 1.
    assert!((get(Score::MemberVariance)[1] - 0.16).abs() < 1e-15);
    assert!((get(Score::Energy)[0] - (-2.0 - ln_c)).abs() < 1e-14);
    assert_eq!(get(Score::MaxLogit), [-2.0, -9.0]);

    // With explicit probs, MSP and entropy use them rather than the member mean.
    let probs = Probs::new([peaked, peaked].concat(), 2, c).unwrap();
    let with_probs = ScoreInput {
        probs: Some(&probs),
        ..input
    };
    assert_eq!(
        score(Score::Msp, &with_probs).unwrap(),
        [0.30000000000000004; 2]
    );
}

#[test]
fn score_names_round_trip() {
    for kind in Score::ALL {
        assert_eq!(kind.name().parse::<Score>().unwrap(), kind);
        assert_eq!(kind.to_string(), kind.name());
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.name());
    }
}

#[test]
fn f32_inputs_widen_exactly() {
    let probs = Probs::from_f32(&[0.1, 0.9, 0.3, 0.7], 2, 2).unwrap();
    assert_eq!(probs.row(0)[0], f64::from(0.1f32));
    let members = MemberProbs::from_f32(&[0.5, 0.5], 1, 1, 2).unwrap();
    assert_eq!(members.mean().row(0), [0.5, 0.5]);
    let logits = Logits::from_f32(&[1.5, -2.0], 1, 2).unwrap();
    assert_eq!(logits.n(), 1);
}
