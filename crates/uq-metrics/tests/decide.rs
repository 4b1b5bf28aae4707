//! Paired t-test, TOST, Holm and the detectable difference against the scipy / statsmodels
//! references of `scripts/decide_fixtures.py`, and the verdict rule on cases decided by hand.

use serde::Deserialize;
use uq_metrics::{
    MAX_SEEDS, Verdict, decide, detectable_difference, holm, paired_test, seeds_needed,
};

#[derive(Deserialize)]
struct Fixture {
    paired: Vec<PairedCase>,
    holm: Vec<HolmCase>,
}

#[derive(Deserialize)]
struct PairedCase {
    name: String,
    a: Vec<f64>,
    b: Vec<f64>,
    margin: f64,
    p_difference: f64,
    p_equivalence: f64,
    detectable: f64,
    detectable_exact: f64,
    seeds_needed: Option<usize>,
}

#[derive(Deserialize)]
struct HolmCase {
    name: String,
    p: Vec<f64>,
    adjusted: Vec<f64>,
}

fn fixture() -> Fixture {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/decide.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn close(ours: f64, reference: f64, tol: f64, what: &str) {
    let scale = reference.abs().max(1e-300);
    assert!(
        (ours - reference).abs() <= tol * scale,
        "{what}: {ours} vs {reference}"
    );
}

#[test]
fn paired_tests_match_scipy_and_statsmodels() {
    for c in fixture().paired {
        let diffs: Vec<f64> = c.a.iter().zip(&c.b).map(|(a, b)| a - b).collect();
        let t = paired_test(&diffs, c.margin).unwrap();
        close(t.p_difference, c.p_difference, 1e-9, &c.name);
        close(t.p_equivalence, c.p_equivalence, 1e-9, &c.name);
        close(t.detectable, c.detectable, 1e-10, &c.name);
        assert_eq!(t.seeds_needed, c.seeds_needed, "{}", c.name);
        // The 90% interval is the one TOST agrees with, inside the 95% one.
        let within = t.ci90_low > -c.margin && t.ci90_high < c.margin;
        assert_eq!(within, t.p_equivalence < uq_metrics::ALPHA, "{}", c.name);
        let wide = uq_metrics::mean_ci(&diffs);
        assert!(
            wide.ci_low < t.ci90_low && t.ci90_high < wide.ci_high,
            "{}",
            c.name
        );
        // The approximation against the exact noncentral-t solution: a few percent low at two
        // and three seeds, within 1.5% from five.
        let rel = (t.detectable - c.detectable_exact).abs() / c.detectable_exact;
        let bound = if c.a.len() >= 5 { 0.015 } else { 0.15 };
        assert!(rel < bound, "{}: {rel}", c.name);
    }
}

#[test]
fn holm_matches_statsmodels() {
    for c in fixture().holm {
        let ours = holm(&c.p);
        for (o, r) in ours.iter().zip(&c.adjusted) {
            close(*o, *r, 1e-12, &c.name);
        }
    }
}

#[test]
fn holm_leaves_nan_out_of_the_family() {
    let adjusted = holm(&[0.01, f64::NAN, 0.02]);
    assert!(adjusted[1].is_nan());
    // Two tests in the family, not three.
    assert_eq!(adjusted[0], 0.02);
    assert_eq!(adjusted[2], 0.02);
    assert!(holm(&[]).is_empty());
}

#[test]
fn verdicts_follow_the_tests() {
    // Equivalence wins over a significant but small difference.
    assert_eq!(decide(0.001, 0.001, 0.01, true), Verdict::Equivalent);
    assert_eq!(decide(0.03, 0.001, 0.9, true), Verdict::Better);
    assert_eq!(decide(0.03, 0.001, 0.9, false), Verdict::Worse);
    assert_eq!(decide(-0.03, 0.001, 0.9, false), Verdict::Better);
    assert_eq!(decide(0.03, 0.2, 0.6, true), Verdict::Inconclusive);
    assert_eq!(decide(0.03, f64::NAN, 0.01, true), Verdict::Undefined);
    // At the level itself nothing is shown.
    assert_eq!(decide(0.03, 0.05, 0.05, true), Verdict::Inconclusive);
}

#[test]
fn fixture_cases_get_the_verdicts_their_inputs_imply() {
    let verdicts: Vec<(String, Verdict)> = (fixture().paired.into_iter())
        .map(|c| {
            let diffs: Vec<f64> = c.a.iter().zip(&c.b).map(|(a, b)| a - b).collect();
            let t = paired_test(&diffs, c.margin).unwrap();
            let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
            (c.name, decide(mean, t.p_difference, t.p_equivalence, true))
        })
        .collect();
    let of = |name: &str| verdicts.iter().find(|(n, _)| n == name).unwrap().1;
    assert_eq!(of("three_seeds_tie"), Verdict::Inconclusive);
    assert_eq!(of("five_seeds_equivalent"), Verdict::Equivalent);
    assert_eq!(of("ten_seeds_better"), Verdict::Better);
    assert_eq!(of("ten_seeds_worse"), Verdict::Worse);
}

#[test]
fn zero_spread_is_decided_by_the_mean() {
    let same = paired_test(&[0.0, 0.0, 0.0], 0.01).unwrap();
    assert_eq!((same.p_difference, same.p_equivalence), (1.0, 0.0));
    assert_eq!(same.seeds_needed, Some(2));
    let shifted = paired_test(&[0.02, 0.02, 0.02], 0.01).unwrap();
    assert_eq!((shifted.p_difference, shifted.p_equivalence), (0.0, 1.0));
    assert_eq!(
        decide(0.02, shifted.p_difference, shifted.p_equivalence, false),
        Verdict::Worse
    );
}

#[test]
fn one_seed_and_bad_margins() {
    let one = paired_test(&[0.3], 0.01).unwrap();
    assert!(one.p_difference.is_nan() && one.p_equivalence.is_nan() && one.detectable.is_nan());
    assert_eq!(one.seeds_needed, None);
    for margin in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        let err = paired_test(&[0.1, 0.2], margin).unwrap_err().to_string();
        assert!(err.contains("margin"), "{err}");
    }
}

#[test]
fn detectable_difference_falls_with_seeds_and_bounds_the_search() {
    let mut previous = f64::INFINITY;
    for n in 2..200 {
        let d = detectable_difference(0.1, n);
        assert!(d < previous, "n {n}");
        previous = d;
    }
    // seeds_needed is the first n whose detectable difference fits the margin.
    let n = seeds_needed(0.1, 0.05).unwrap();
    assert!(detectable_difference(0.1, n) <= 0.05 && detectable_difference(0.1, n - 1) > 0.05);
    assert_eq!(seeds_needed(1.0, 1e-4), None);
    assert!(detectable_difference(1.0, MAX_SEEDS) > 1e-4);
    assert_eq!(seeds_needed(f64::NAN, 0.1), None);
}
