//! Bad input gives a descriptive error, never a panic.

use uq_metrics::{
    ConformalScore, Logits, MemberProbs, MetricsError, Probs, Raps, Score, ScoreInput,
    adaptive_ece, aurc, auroc, conformal, conformal_threshold, diversity, ece, fit_temperature,
    nll, ood_report, paired, reliability_diagram, scale_logits, score,
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
    let MetricsError::Unknown(unknown) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        (unknown.what, unknown.name.as_str()),
        ("score", "max-logit")
    );
    assert_eq!(unknown.valid.len(), Score::ALL.len());
    let text = err.to_string();
    assert!(
        text.contains("`max-logit`") && text.contains("msp, entropy, mutual_info, max_logit"),
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

#[test]
fn diversity_needs_two_members_and_fitting_labels() {
    let one = MemberProbs::new(vec![0.9, 0.1, 0.2, 0.8], 1, 2, 2).unwrap();
    let err = diversity(&one, None).unwrap_err();
    assert_eq!(
        err,
        MetricsError::TooFewMembers {
            metric: "diversity",
            needed: 2,
            found: 1
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("diversity needs at least 2 members"),
        "{text}"
    );
    let two = MemberProbs::new(vec![0.9, 0.1, 0.2, 0.8, 0.6, 0.4, 0.5, 0.5], 2, 2, 2).unwrap();
    assert!(matches!(
        diversity(&two, Some(&[0])),
        Err(MetricsError::ShapeMismatch { what: "labels", .. })
    ));
    assert!(matches!(
        diversity(&two, Some(&[0, 5])),
        Err(MetricsError::LabelOutOfRange { label: 5, .. })
    ));
}

#[test]
fn temperature_checks_labels_and_t() {
    let logits = Logits::new(vec![1.0, 2.0, 0.5, -1.0], 2, 2).unwrap();
    assert!(matches!(
        fit_temperature(&logits, &[0, 1, 1]),
        Err(MetricsError::ShapeMismatch { what: "labels", .. })
    ));
    assert_eq!(
        fit_temperature(&logits, &[0, 2]).unwrap_err(),
        MetricsError::LabelOutOfRange {
            index: 1,
            label: 2,
            classes: 2
        }
    );
    for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            matches!(
                scale_logits(&logits, t),
                Err(MetricsError::InvalidOption {
                    name: "temperature",
                    ..
                })
            ),
            "T = {t}"
        );
    }
    // Dividing huge logits by a tiny T overflows: an error, not infinite logits.
    let huge = Logits::new(vec![1e308, 0.0], 1, 2).unwrap();
    assert!(matches!(
        scale_logits(&huge, 0.05),
        Err(MetricsError::NonFinite {
            what: "logits",
            index: 0,
            ..
        })
    ));
}

#[test]
fn paired_values_must_pair_up() {
    assert_eq!(
        paired(&[0.1, 0.2], &[0.3]).unwrap_err(),
        MetricsError::ShapeMismatch {
            what: "paired values b",
            expected: 2,
            found: 1
        }
    );
}

#[test]
fn conformal_checks_alpha_calibration_and_classes() {
    let p = probs();
    for alpha in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
        let err = conformal_threshold(&p, &[0, 1], ConformalScore::Thr, alpha).unwrap_err();
        assert!(
            matches!(err, MetricsError::InvalidOption { name: "alpha", .. }),
            "alpha {alpha}: {err:?}"
        );
    }
    // An empty calibration set cannot even be built.
    assert_eq!(
        Probs::new(vec![], 0, 2).unwrap_err(),
        MetricsError::Empty { what: "probs" }
    );
    assert!(matches!(
        conformal_threshold(&p, &[], ConformalScore::Aps, 0.1),
        Err(MetricsError::ShapeMismatch { what: "labels", .. })
    ));
    let three = Probs::new(vec![0.2, 0.3, 0.5], 1, 3).unwrap();
    assert!(matches!(
        conformal(&p, &[0, 1], &three, &[0], ConformalScore::Thr, 0.1),
        Err(MetricsError::ShapeMismatch {
            what: "test probs row",
            expected: 2,
            found: 3
        })
    ));
    assert!(matches!(
        conformal(&p, &[0, 1], &p, &[0, 2], ConformalScore::Thr, 0.1),
        Err(MetricsError::LabelOutOfRange { label: 2, .. })
    ));
}

#[test]
fn unknown_conformal_score_names_list_the_known_ones() {
    let err = "rap".parse::<ConformalScore>().unwrap_err();
    let text = err.to_string();
    assert_eq!(
        text,
        "unknown conformal score `rap`: expected one of thr, aps, raps"
    );
    assert!(matches!(
        Raps::new(-0.1, 1),
        Err(MetricsError::InvalidOption {
            name: "penalty",
            ..
        })
    ));
    assert!(Raps::new(f64::NAN, 1).is_err());
    assert_eq!(Raps::new(0.1, 1), Ok(Raps::default()));
    // RAPS's parameters: unknown keys, unparsable or negative values are refused whole.
    for bad in [
        "raps(lambda=0.1)",
        "raps(penalty=x)",
        "raps(penalty=-1)",
        "raps(k_reg=1.5)",
        "raps(penalty=0.1",
    ] {
        match bad.parse::<ConformalScore>() {
            Err(MetricsError::Unknown(unknown)) => assert_eq!(unknown.name, bad),
            other => panic!("{bad}: {other:?}"),
        }
    }
}
