//! Bad input gives a descriptive error, never a panic.

use uq_metrics::{
    Logits, MemberProbs, MetricsError, Probs, Score, ScoreInput, adaptive_ece, aurc, auroc, ece,
    nll, ood_report, reliability_diagram, score,
};

fn probs() -> Probs {
    Probs::new(vec![0.9, 0.1, 0.2, 0.8], 2, 2).unwrap()
}

#[test]
fn probs_construction_rejects_bad_data() {
    assert_eq!(
        Probs::new(vec![], 0, 3).unwrap_err(),
        MetricsError::Empty { what: "probs" }
    );
    assert_eq!(
        Probs::new(vec![0.5, 0.5, 1.0], 2, 2).unwrap_err(),
        MetricsError::ShapeMismatch {
            what: "probs",
            expected: 4,
            found: 3
        }
    );
    let err = Probs::new(vec![0.5, 0.5, f64::NAN, 1.0], 2, 2).unwrap_err();
    assert!(
        matches!(err, MetricsError::NonFinite { index: 2, .. }),
        "{err:?}"
    );
    assert_eq!(
        Probs::new(vec![1.5, -0.5], 1, 2).unwrap_err(),
        MetricsError::NotProbability {
            what: "probs",
            index: 0,
            value: 1.5
        }
    );
    let err = Probs::new(vec![0.5, 0.5, 0.3, 0.3], 2, 2).unwrap_err();
    assert!(
        matches!(err, MetricsError::NotNormalised { row: 1, .. }),
        "{err:?}"
    );
    let err = Probs::with_tolerance(vec![0.5, 0.5], 1, 2, -1.0).unwrap_err();
    assert!(
        matches!(err, MetricsError::InvalidOption { name: "tol", .. }),
        "{err:?}"
    );
    // Huge dims overflow the element count: a shape error, not a panic.
    let err = Probs::new(vec![1.0], usize::MAX, 2).unwrap_err();
    assert!(matches!(err, MetricsError::ShapeMismatch { .. }), "{err:?}");
}

#[test]
fn sum_tolerance_is_configurable() {
    // An f32-saved softmax row: off by ~1e-7, inside the default tolerance, outside 1e-9.
    let row = vec![0.1 + 1e-7, 0.9];
    assert!(Probs::new(row.clone(), 1, 2).is_ok());
    assert!(Probs::with_tolerance(row.clone(), 1, 2, 1e-9).is_err());
    assert!(MemberProbs::with_tolerance(row, 1, 1, 2, 1e-9).is_err());
}

#[test]
fn labels_must_fit_the_probs() {
    let p = probs();
    assert_eq!(
        nll(&p, &[0]).unwrap_err(),
        MetricsError::ShapeMismatch {
            what: "labels",
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        ece(&p, &[0, 2], 15).unwrap_err(),
        MetricsError::LabelOutOfRange {
            index: 1,
            label: 2,
            classes: 2
        }
    );
}

#[test]
fn zero_bins_are_refused() {
    let p = probs();
    for result in [
        ece(&p, &[0, 1], 0).map(|_| ()),
        adaptive_ece(&p, &[0, 1], 0).map(|_| ()),
        reliability_diagram(&p, &[0, 1], 0).map(|_| ()),
    ] {
        assert!(matches!(
            result,
            Err(MetricsError::InvalidOption { name: "bins", .. })
        ));
    }
}

#[test]
fn ood_metrics_need_both_sides_and_finite_scores() {
    assert_eq!(
        auroc(&[], &[1.0]).unwrap_err(),
        MetricsError::MissingClass { missing: "ID" }
    );
    assert_eq!(
        ood_report(&[1.0], &[]).unwrap_err(),
        MetricsError::MissingClass { missing: "OOD" }
    );
    let err = ood_report(&[1.0], &[0.0, f64::INFINITY]).unwrap_err();
    assert!(
        matches!(
            err,
            MetricsError::NonFinite {
                what: "ood scores",
                index: 1,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn aurc_checks_its_inputs() {
    assert!(matches!(aurc(&[], &[]), Err(MetricsError::Empty { .. })));
    assert!(matches!(
        aurc(&[0.1, 0.2], &[true]),
        Err(MetricsError::ShapeMismatch {
            what: "correct",
            ..
        })
    ));
    assert!(matches!(
        aurc(&[f64::NAN], &[true]),
        Err(MetricsError::NonFinite { .. })
    ));
}

#[test]
fn scores_say_what_they_are_missing() {
    let p = probs();
    let one_member = MemberProbs::new(vec![0.9, 0.1, 0.2, 0.8], 1, 2, 2).unwrap();
    let only_probs = ScoreInput {
        probs: Some(&p),
        ..ScoreInput::default()
    };
    for (kind, needs) in [
        (Score::MutualInfo, "member probs"),
        (Score::Disagreement, "member probs"),
        (Score::MemberVariance, "member probs"),
        (Score::MaxLogit, "logits"),
        (Score::Energy, "logits"),
    ] {
        assert_eq!(
            score(kind, &only_probs).unwrap_err(),
            MetricsError::MissingInput {
                score: kind.name(),
                needs
            }
        );
    }
    let err = score(Score::Msp, &ScoreInput::default()).unwrap_err();
    assert!(matches!(
        err,
        MetricsError::MissingInput { score: "msp", .. }
    ));
    let single = ScoreInput {
        members: Some(&one_member),
        ..ScoreInput::default()
    };
    assert!(score(Score::Disagreement, &single).is_err());
    assert!(Logits::new(vec![1.0, f64::NEG_INFINITY], 1, 2).is_err());
}

#[test]
fn unknown_score_names_list_the_known_ones() {
    let err = "max-logit".parse::<Score>().unwrap_err();
    assert_eq!(err, MetricsError::UnknownScore("max-logit".into()));
    let text = err.to_string();
    assert!(
        text.contains("'max-logit'") && text.contains("max_logit"),
        "{text}"
    );
}

#[test]
fn messages_name_the_input_and_the_value() {
    let err = Probs::new(vec![0.5, 0.5, 0.3, 0.3], 2, 2).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("probs row 1") && text.contains("0.6"),
        "{text}"
    );
    let text = auroc(&[f64::NAN], &[1.0]).unwrap_err().to_string();
    assert!(text.contains("id scores[0] = NaN"), "{text}");
}
