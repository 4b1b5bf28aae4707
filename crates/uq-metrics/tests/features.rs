//! The feature-space detectors against the scikit-learn / numpy references written by
//! `scripts/feature_fixtures.py` (to 1e-6, relative to the score's size), and their
//! invariants: an exact affine invariance of Mahalanobis, KNN equal to a plain loop, a far
//! cluster detected, and bad fits refused with the detector named.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::Deserialize;
use uq_metrics::{
    Detector, DetectorOptions, Features, Logits, MetricsError, Shrinkage, auroc, fit, fit_members,
};

const TOL: f64 = 1e-6;

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    detector: String,
    n: usize,
    d: usize,
    train: Vec<f64>,
    labels: Vec<usize>,
    test: Vec<f64>,
    expected: Vec<f64>,
    shrinkage: Option<serde_json::Value>,
    k: Option<usize>,
    vim_dim: Option<usize>,
    c: Option<usize>,
    train_logits: Option<Vec<f64>>,
    test_logits: Option<Vec<f64>>,
}

fn fixture() -> Fixture {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/features.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn shrinkage(value: &Option<serde_json::Value>) -> Shrinkage {
    match value {
        None => Shrinkage::Auto,
        Some(serde_json::Value::Number(a)) => Shrinkage::Fixed(a.as_f64().unwrap()),
        Some(serde_json::Value::String(s)) => match s.as_str() {
            "none" => Shrinkage::None,
            "ledoit_wolf" => Shrinkage::LedoitWolf,
            "auto" => Shrinkage::Auto,
            other => panic!("unknown shrinkage {other}"),
        },
        Some(other) => panic!("unknown shrinkage {other}"),
    }
}

fn close(actual: &[f64], expected: &[f64], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= TOL * e.abs().max(1.0),
            "{what}[{i}]: {a} vs the reference {e}"
        );
    }
}

#[test]
fn every_detector_matches_scikit_learn() {
    let cases = fixture().cases;
    assert!(cases.len() >= 13);
    for case in cases {
        let detector: Detector = case.detector.parse().unwrap();
        let train = Features::new(case.train, case.n, case.d).unwrap();
        let test_n = case.test.len() / case.d;
        let test = Features::new(case.test, test_n, case.d).unwrap();
        let logits =
            |l: Option<Vec<f64>>, n| l.map(|l| Logits::new(l, n, case.c.unwrap()).unwrap());
        let (train_logits, test_logits) = (
            logits(case.train_logits, case.n),
            logits(case.test_logits, test_n),
        );
        let options = DetectorOptions {
            knn_k: case.k.unwrap_or(50),
            vim_dim: case.vim_dim,
            shrinkage: shrinkage(&case.shrinkage),
        };
        let fitted = fit(
            detector,
            &train,
            &case.labels,
            train_logits.as_ref(),
            &options,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let scores = fitted.score(&test, test_logits.as_ref()).unwrap();
        close(&scores, &case.expected, &case.name);
    }
}

/// Seeded Gaussian blobs: `n` rows of width `d` around `classes` centres spread `spread` apart.
fn blobs(
    rng: &mut StdRng,
    n: usize,
    d: usize,
    classes: usize,
    spread: f64,
) -> (Vec<f64>, Vec<usize>) {
    let centres: Vec<f64> = (0..classes * d).map(|_| spread * normal(rng)).collect();
    let labels: Vec<usize> = (0..n).map(|i| i % classes).collect();
    let x = (0..n)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .map(|(i, j)| centres[labels[i] * d + j] + normal(rng))
        .collect();
    (x, labels)
}

fn normal(rng: &mut StdRng) -> f64 {
    // Box-Muller from two uniforms in (0, 1].
    let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn scores(
    detector: Detector,
    train: &[f64],
    labels: &[usize],
    test: &[f64],
    d: usize,
    options: &DetectorOptions,
) -> Vec<f64> {
    let train = Features::new(train.to_vec(), labels.len(), d).unwrap();
    let test = Features::new(test.to_vec(), test.len() / d, d).unwrap();
    fit(detector, &train, labels, None, options)
        .unwrap()
        .score(&test, None)
        .unwrap()
}

#[test]
fn mahalanobis_is_unchanged_by_an_invertible_affine_map_of_the_features() {
    let mut rng = StdRng::seed_from_u64(7);
    let d = 5;
    let (train, labels) = blobs(&mut rng, 200, d, 4, 2.0);
    let (test, _) = blobs(&mut rng, 30, d, 4, 4.0);
    // x -> A x + b with A lower-triangular, diagonal 1..2: invertible.
    let a: Vec<f64> = (0..d * d)
        .map(|k| match (k / d, k % d) {
            (i, j) if i == j => 1.0 + rng.random::<f64>(),
            (i, j) if j < i => normal(&mut rng),
            _ => 0.0,
        })
        .collect();
    let b: Vec<f64> = (0..d).map(|_| 10.0 * normal(&mut rng)).collect();
    let map = |x: &[f64]| -> Vec<f64> {
        (x.chunks_exact(d))
            .flat_map(|row| {
                (0..d)
                    .map(|i| (0..d).map(|j| a[i * d + j] * row[j]).sum::<f64>() + b[i])
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let options = DetectorOptions {
        shrinkage: Shrinkage::None,
        ..Default::default()
    };
    for detector in [Detector::Mahalanobis, Detector::RelativeMahalanobis] {
        let plain = scores(detector, &train, &labels, &test, d, &options);
        let mapped = scores(detector, &map(&train), &labels, &map(&test), d, &options);
        close(&mapped, &plain, detector.name());
    }
}

#[test]
fn member_detectors_average_the_members_own_detectors() {
    let mut rng = StdRng::seed_from_u64(13);
    let d = 4;
    let features = |rng: &mut StdRng, n: usize| -> (Vec<Features>, Vec<usize>) {
        let (a, labels) = blobs(rng, n, d, 3, 2.0);
        let (b, _) = blobs(rng, n, d, 3, 2.0);
        let member = |x: Vec<f64>| Features::new(x, n, d).unwrap();
        (vec![member(a), member(b)], labels)
    };
    let (train, labels) = features(&mut rng, 120);
    let (test, _) = features(&mut rng, 25);
    let options = DetectorOptions {
        knn_k: 5,
        ..Default::default()
    };
    for detector in [Detector::Mahalanobis, Detector::Knn] {
        let fitted = fit_members(detector, &train, &labels, None, &options).unwrap();
        assert_eq!((fitted.m(), fitted.detector()), (2, detector));
        let mean = fitted.score(&test, None).unwrap();
        let alone: Vec<Vec<f64>> = (0..2)
            .map(|k| {
                let f = fit(detector, &train[k], &labels, None, &options).unwrap();
                f.score(&test[k], None).unwrap()
            })
            .collect();
        let expected: Vec<f64> = (0..25).map(|i| (alone[0][i] + alone[1][i]) / 2.0).collect();
        assert_eq!(mean, expected, "{detector}");
    }
    // A member's failure names the member; a member count other than the fit's is refused.
    let too_few = DetectorOptions {
        knn_k: 500,
        ..Default::default()
    };
    let err = fit_members(Detector::Knn, &train, &labels, None, &too_few)
        .err()
        .unwrap();
    assert!(
        err.to_string().starts_with("member 0: knn detector"),
        "{err}"
    );
    let fitted = fit_members(Detector::Knn, &train, &labels, None, &options).unwrap();
    assert!(matches!(
        fitted.score(&test[..1], None),
        Err(MetricsError::ShapeMismatch {
            expected: 2,
            found: 1,
            ..
        })
    ));
}

#[test]
fn knn_screening_keeps_neighbours_f32_cannot_tell_apart() {
    // Training features within 1e-5 of a few directions: their f32 dot products with a query
    // tie or misorder, so the screening must keep every feature whose f32 key is within the
    // error bound, and the f64 re-measure decide. The reference ranks by the same f64 key
    // (|t|² − 2 q·t after normalising), one loop per query.
    let mut rng = StdRng::seed_from_u64(17);
    let (d, n, q) = (24, 400, 40);
    let directions: Vec<Vec<f64>> = (0..4)
        .map(|_| (0..d).map(|_| normal(&mut rng)).collect())
        .collect();
    let near = |count: usize, rng: &mut StdRng| -> Vec<f64> {
        (0..count)
            .flat_map(|i| {
                let dir = directions[i % 4].clone();
                dir.into_iter()
                    .map(|v| v + 1e-5 * normal(rng))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (train, test) = (near(n, &mut rng), near(q, &mut rng));
    let unit = |x: &[f64]| -> Vec<f64> {
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt() + uq_metrics::NORM_EPS;
        x.iter().map(|v| v / norm).collect()
    };
    let labels = vec![0; n];
    for k in [1, 7, 50, 99, 100, 101] {
        let options = DetectorOptions {
            knn_k: k,
            ..Default::default()
        };
        let fast = scores(Detector::Knn, &train, &labels, &test, d, &options);
        for (i, query) in test.chunks_exact(d).enumerate() {
            let qu = unit(query);
            let q_sq: f64 = qu.iter().map(|v| v * v).sum();
            let mut d2: Vec<f64> = (train.chunks_exact(d))
                .map(|t| {
                    let tu = unit(t);
                    let t_sq: f64 = tu.iter().map(|v| v * v).sum();
                    q_sq + t_sq - 2.0 * qu.iter().zip(&tu).map(|(a, b)| a * b).sum::<f64>()
                })
                .collect();
            d2.sort_by(f64::total_cmp);
            let expected = d2[k - 1].max(0.0).sqrt();
            // Distances are about 1e-5; the two sums of 24 products round differently, within
            // about 1e-16 in d², so 1e-10 in the distance.
            assert!(
                (fast[i] - expected).abs() < 1e-10,
                "k {k} query {i}: {} vs {expected}",
                fast[i]
            );
        }
    }
}

#[test]
fn knn_equals_a_brute_force_loop() {
    let mut rng = StdRng::seed_from_u64(11);
    let d = 7;
    // More queries than one product chunk, so the chunking is exercised.
    let (train, labels) = blobs(&mut rng, 300, d, 3, 1.5);
    let (test, _) = blobs(&mut rng, 600, d, 3, 1.5);
    let unit = |x: &[f64]| -> Vec<f64> {
        let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt() + uq_metrics::NORM_EPS;
        x.iter().map(|v| v / norm).collect()
    };
    for k in [1, 2, 17, 300] {
        let options = DetectorOptions {
            knn_k: k,
            ..Default::default()
        };
        let fast = scores(Detector::Knn, &train, &labels, &test, d, &options);
        let slow: Vec<f64> = (test.chunks_exact(d))
            .map(|q| {
                let q = unit(q);
                let mut dist: Vec<f64> = (train.chunks_exact(d))
                    .map(|t| {
                        unit(t)
                            .iter()
                            .zip(&q)
                            .map(|(a, b)| (a - b).powi(2))
                            .sum::<f64>()
                            .sqrt()
                    })
                    .collect();
                dist.sort_by(f64::total_cmp);
                dist[k - 1]
            })
            .collect();
        close(&fast, &slow, &format!("knn k = {k}"));
    }
}

#[test]
fn a_cluster_far_from_the_training_gaussians_is_detected() {
    let mut rng = StdRng::seed_from_u64(3);
    let d = 8;
    let (train, labels) = blobs(&mut rng, 400, d, 4, 3.0);
    // ID test features: fresh noise around training features.
    let id: Vec<f64> = (0..200)
        .flat_map(|i| (0..d).map(move |j| (i, j)))
        .map(|(i, j)| train[(i % 400) * d + j] + 0.5 * normal(&mut rng))
        .collect();
    let ood: Vec<f64> = (0..200 * d).map(|_| 25.0 + normal(&mut rng)).collect();
    for detector in [
        Detector::Mahalanobis,
        Detector::RelativeMahalanobis,
        Detector::Knn,
    ] {
        let s_id = scores(
            detector,
            &train,
            &labels,
            &id,
            d,
            &DetectorOptions::default(),
        );
        let s_ood = scores(
            detector,
            &train,
            &labels,
            &ood,
            d,
            &DetectorOptions::default(),
        );
        let a = auroc(&s_id, &s_ood).unwrap();
        assert!(a > 0.99, "{detector}: AUROC {a}");
    }
}

fn detector_error(result: Result<impl Sized, MetricsError>) -> (String, String) {
    match result {
        Err(MetricsError::Detector { detector, reason }) => (detector.to_string(), reason),
        Err(other) => panic!("expected a detector error, got {other}"),
        Ok(_) => panic!("expected a detector error, got a fit"),
    }
}

#[test]
fn bad_fits_are_errors_that_name_the_detector() {
    let mut rng = StdRng::seed_from_u64(5);
    let d = 12;
    let (x, labels) = blobs(&mut rng, 10, d, 2, 1.0);
    let train = Features::new(x, 10, d).unwrap();
    // 10 samples in 2 classes: 8 degrees of freedom for a 12-dimensional covariance.
    let none = DetectorOptions {
        shrinkage: Shrinkage::None,
        ..Default::default()
    };
    for detector in [Detector::Mahalanobis, Detector::RelativeMahalanobis] {
        let (name, reason) = detector_error(fit(detector, &train, &labels, None, &none));
        assert_eq!(name, detector.name());
        assert!(
            reason.contains("singular") && reason.contains("shrink"),
            "{reason}"
        );
        // With shrinkage the same fit works and scores finitely.
        let fitted = fit(detector, &train, &labels, None, &DetectorOptions::default()).unwrap();
        assert!(
            fitted
                .score(&train, None)
                .unwrap()
                .iter()
                .all(|s| s.is_finite())
        );
    }
    let big_k = DetectorOptions {
        knn_k: 11,
        ..Default::default()
    };
    let (name, reason) = detector_error(fit(Detector::Knn, &train, &labels, None, &big_k));
    assert_eq!(name, "knn");
    assert!(
        reason.contains("k = 11") && reason.contains("10 training features"),
        "{reason}"
    );
    // ViM without logits names what is missing.
    let err = fit(
        Detector::Vim,
        &train,
        &labels,
        None,
        &DetectorOptions::default(),
    )
    .err();
    assert!(
        matches!(err, Some(MetricsError::MissingInput { score: "vim", .. })),
        "{err:?}"
    );
    // A class without features.
    let skipped: Vec<usize> = labels.iter().map(|&l| l * 2).collect();
    let (_, reason) = detector_error(fit(
        Detector::Mahalanobis,
        &train,
        &skipped,
        None,
        &DetectorOptions::default(),
    ));
    assert!(
        reason.contains("class 1 has no training features"),
        "{reason}"
    );
    // Non-finite features are refused where they enter, with their position.
    let mut bad = vec![0.5; 2 * d];
    bad[d + 3] = f64::NAN;
    match Features::new(bad, 2, d) {
        Err(MetricsError::NonFinite {
            what: "features",
            index,
            ..
        }) => assert_eq!(index, d + 3),
        other => panic!("expected a non-finite error, got {other:?}"),
    }
    // Scoring features of another width.
    let fitted = fit(
        Detector::Knn,
        &train,
        &labels,
        None,
        &DetectorOptions {
            knn_k: 3,
            ..Default::default()
        },
    )
    .unwrap();
    let narrow = Features::new(vec![1.0; 4], 1, 4).unwrap();
    let (_, reason) = detector_error(fitted.score(&narrow, None));
    assert!(
        reason.contains("width 4") && reason.contains("width 12"),
        "{reason}"
    );
}

#[test]
fn detector_names_round_trip_and_ood_scores_parse_both_kinds() {
    for d in Detector::ALL {
        assert_eq!(d.name().parse::<Detector>().unwrap(), d);
        assert_eq!(
            d.name().parse::<uq_metrics::OodScore>().unwrap(),
            uq_metrics::OodScore::Feature(d)
        );
    }
    assert_eq!(
        "energy".parse::<uq_metrics::OodScore>().unwrap(),
        uq_metrics::OodScore::Output(uq_metrics::Score::Energy)
    );
    let err = "mahalanobiss"
        .parse::<uq_metrics::OodScore>()
        .unwrap_err()
        .to_string();
    assert!(err.contains("msp") && err.contains("knn"), "{err}");
}
