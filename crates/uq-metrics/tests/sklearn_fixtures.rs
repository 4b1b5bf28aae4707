//! Every metric against the scikit-learn / numpy references written by
//! `scripts/metrics_fixtures.py`, to 1e-9 absolute.

use std::collections::BTreeMap;

use serde::Deserialize;
use uq_metrics::{
    Logits, MemberProbs, Options, Probs, Score, ScoreInput, adaptive_ece, aupr_in, aupr_out, auroc,
    evaluate, fpr95, ood_report, reliability_diagram, score,
};

const TOL: f64 = 1e-9;

#[derive(Deserialize)]
struct Fixture {
    ood: Vec<OodCase>,
    classification: Vec<ClassificationCase>,
    scores: Vec<ScoresCase>,
}

#[derive(Deserialize)]
struct OodCase {
    name: String,
    id: Vec<f64>,
    ood: Vec<f64>,
    expected: BTreeMap<String, f64>,
}

#[derive(Deserialize)]
struct ClassificationCase {
    name: String,
    n: usize,
    c: usize,
    probs: Vec<f64>,
    labels: Vec<usize>,
    bins: usize,
    adaptive_bins: usize,
    expected: ClassificationExpected,
}

#[derive(Deserialize)]
struct ClassificationExpected {
    accuracy: f64,
    nll: f64,
    brier: f64,
    ece: f64,
    aece: f64,
    classwise_ece: f64,
    aurc: f64,
    augrc: f64,
    reliability: Vec<Bin>,
}

#[derive(Deserialize)]
struct Bin {
    lo: f64,
    hi: f64,
    count: usize,
    confidence: Option<f64>,
    accuracy: Option<f64>,
}

#[derive(Deserialize)]
struct ScoresCase {
    name: String,
    m: usize,
    n: usize,
    c: usize,
    members: Vec<f64>,
    logits: Vec<f64>,
    expected: BTreeMap<String, Option<Vec<f64>>>,
}

fn fixture() -> Fixture {
    let text = include_str!("fixtures/sklearn.json");
    serde_json::from_str(text).expect("fixture parses")
}

fn close(case: &str, what: &str, ours: f64, theirs: f64) {
    assert!(
        (ours - theirs).abs() <= TOL,
        "{case}: {what} = {ours}, sklearn/numpy gives {theirs}"
    );
}

#[test]
fn fixture_has_enough_cases() {
    let f = fixture();
    assert!(f.ood.len() + f.classification.len() + f.scores.len() >= 20);
}

#[test]
fn ood_metrics_match_sklearn() {
    for case in fixture().ood {
        let (id, ood, name) = (&case.id, &case.ood, case.name.as_str());
        let report = ood_report(id, ood).unwrap();
        let single = [
            ("auroc", report.auroc, auroc(id, ood).unwrap()),
            ("aupr_in", report.aupr_in, aupr_in(id, ood).unwrap()),
            ("aupr_out", report.aupr_out, aupr_out(id, ood).unwrap()),
            ("fpr95", report.fpr95, fpr95(id, ood).unwrap()),
        ];
        for (metric, from_report, alone) in single {
            assert_eq!(from_report, alone, "{name}: {metric} report vs alone");
            close(name, metric, from_report, case.expected[metric]);
        }
    }
}

#[test]
fn classification_metrics_match_sklearn() {
    for case in fixture().classification {
        let name = case.name.as_str();
        let probs = Probs::new(case.probs, case.n, case.c).unwrap();
        let opts = Options {
            bins: case.bins,
            adaptive_bins: case.adaptive_bins,
        };
        let r = evaluate(&probs, &case.labels, &opts).unwrap();
        let e = &case.expected;
        assert_eq!(r.n, case.n);
        close(name, "accuracy", r.accuracy, e.accuracy);
        close(name, "nll", r.nll, e.nll);
        close(name, "brier", r.brier, e.brier);
        close(name, "ece", r.ece, e.ece);
        close(name, "aece", r.aece, e.aece);
        close(name, "classwise_ece", r.classwise_ece, e.classwise_ece);
        close(name, "aurc", r.aurc, e.aurc);
        close(name, "augrc", r.augrc, e.augrc);
        let aece = adaptive_ece(&probs, &case.labels, case.adaptive_bins).unwrap();
        assert_eq!(aece, r.aece);

        let bins = reliability_diagram(&probs, &case.labels, case.bins).unwrap();
        assert_eq!(bins.len(), e.reliability.len(), "{name}: bin count");
        for (b, (ours, theirs)) in bins.iter().zip(&e.reliability).enumerate() {
            assert_eq!(ours.count, theirs.count, "{name}: bin {b} count");
            close(name, "bin lo", ours.lo, theirs.lo);
            close(name, "bin hi", ours.hi, theirs.hi);
            for (what, mine, reference) in [
                ("bin confidence", ours.confidence, theirs.confidence),
                ("bin accuracy", ours.accuracy, theirs.accuracy),
            ] {
                match (mine, reference) {
                    (Some(x), Some(y)) => close(name, what, x, y),
                    (None, None) => {}
                    _ => panic!("{name}: bin {b} {what}: {mine:?} vs {reference:?}"),
                }
            }
        }
    }
}

#[test]
fn scores_match_numpy() {
    for case in fixture().scores {
        let name = case.name.as_str();
        let members = MemberProbs::new(case.members, case.m, case.n, case.c).unwrap();
        let logits = Logits::new(case.logits, case.n, case.c).unwrap();
        let input = ScoreInput {
            probs: None,
            members: Some(&members),
            logits: Some(&logits),
        };
        assert_eq!(
            case.expected.len(),
            Score::ALL.len(),
            "{name}: one entry per score"
        );
        for kind in Score::ALL {
            let ours = score(kind, &input);
            match &case.expected[kind.name()] {
                Some(theirs) => {
                    let ours = ours.unwrap();
                    assert_eq!(ours.len(), theirs.len());
                    for (a, b) in ours.iter().zip(theirs) {
                        close(name, kind.name(), *a, *b);
                    }
                }
                None => assert!(ours.is_err(), "{name}: {kind} should be refused"),
            }
        }
    }
}
