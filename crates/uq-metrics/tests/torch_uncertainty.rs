//! Class-wise ECE, AUGRC and RAPS against torch-uncertainty's own values, written by
//! `scripts/torch_uncertainty_fixtures.py` (float64, no probability on a bin edge, no ties).

use serde::Deserialize;
use uq_metrics::{ConformalScore, Probs, Raps, augrc, classwise_ece, conformal_scores};

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    n: usize,
    c: usize,
    bins: usize,
    probs: Vec<f64>,
    labels: Vec<usize>,
    classwise_ece: f64,
    augrc: f64,
    raps: Vec<RapsCase>,
}

#[derive(Deserialize)]
struct RapsCase {
    penalty: f64,
    k_reg: usize,
    class_scores: Vec<f64>,
    label_scores: Vec<f64>,
}

fn fixture() -> Fixture {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch_uncertainty.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture exists")).unwrap()
}

#[test]
fn classwise_ece_matches_torch_uncertainty() {
    for case in fixture().cases {
        let probs = Probs::new(case.probs, case.n, case.c).unwrap();
        let ours = classwise_ece(&probs, &case.labels, case.bins).unwrap();
        assert!(
            (ours - case.classwise_ece).abs() < 1e-12,
            "{}: {ours} vs {}",
            case.name,
            case.classwise_ece
        );
    }
}

/// torch-uncertainty integrates the generalized risk `g_k = errors(k) / N` by the trapezoid
/// rule from coverage 1/N and rescales by N / (N - 1), `(sum g - (g_1 + g_N) / 2) / (N - 1)`;
/// uqformer's AUGRC is the mean `sum g / N`. So ours must be
/// `((N - 1) tu + (g_1 + g_N) / 2) / N`, with `g_1` the most confident sample's error over N
/// and `g_N` the error rate.
#[test]
fn augrc_is_torch_uncertaintys_curve_without_its_trapezoid() {
    for case in fixture().cases {
        let (n, c) = (case.n, case.c);
        let rows: Vec<&[f64]> = case.probs.chunks_exact(c).collect();
        let argmax = |row: &[f64]| (0..c).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
        let correct: Vec<bool> = (rows.iter().zip(&case.labels))
            .map(|(row, &y)| argmax(row) == y)
            .collect();
        let confidence = |row: &[f64]| row.iter().copied().fold(f64::MIN, f64::max);
        let uncertainty: Vec<f64> = rows.iter().map(|r| 1.0 - confidence(r)).collect();
        let most_confident = (0..n)
            .min_by(|&a, &b| uncertainty[a].total_cmp(&uncertainty[b]))
            .unwrap();
        let nf = n as f64;
        let g1 = f64::from(u8::from(!correct[most_confident])) / nf;
        let gn = correct.iter().filter(|ok| !**ok).count() as f64 / nf;
        let expected = ((nf - 1.0) * case.augrc + (g1 + gn) / 2.0) / nf;
        let ours = augrc(&uncertainty, &correct).unwrap();
        assert!(
            (ours - expected).abs() < 1e-12,
            "{}: {ours} vs {expected} (torch-uncertainty's value {})",
            case.name,
            case.augrc
        );
    }
}

#[test]
fn raps_scores_match_torch_uncertainty() {
    for case in fixture().cases {
        let probs = Probs::new(case.probs.clone(), case.n, case.c).unwrap();
        for r in &case.raps {
            let score = ConformalScore::Raps(Raps {
                penalty: r.penalty,
                k_reg: r.k_reg,
            });
            let label = conformal_scores(&probs, &case.labels, score).unwrap();
            close(&label, &r.label_scores, &case.name, score);
            // Class k's score of every sample, laid out [N, C] as the fixture's.
            let by_class: Vec<Vec<f64>> = (0..case.c)
                .map(|k| conformal_scores(&probs, &vec![k; case.n], score).unwrap())
                .collect();
            let flat: Vec<f64> = (0..case.n * case.c)
                .map(|i| by_class[i % case.c][i / case.c])
                .collect();
            close(&flat, &r.class_scores, &case.name, score);
        }
    }
}

fn close(ours: &[f64], theirs: &[f64], name: &str, score: ConformalScore) {
    assert_eq!(ours.len(), theirs.len());
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!((a - b).abs() < 1e-12, "{name} {score} [{i}]: {a} vs {b}");
    }
}
