//! Diversity, temperature scaling, statistics over seeds and conformal prediction against the
//! numpy / scipy references written by `scripts/evidence_fixtures.py` (inputs included).

use serde::Deserialize;
use uq_metrics::{
    ConformalScore, Logits, MemberProbs, Probs, conformal, conformal_threshold, diversity,
    fit_temperature, mean_ci, paired, prediction_sets, t_quantile_975,
};

const TOL: f64 = 1e-10;

#[derive(Deserialize)]
struct Fixture {
    diversity: Vec<DiversityCase>,
    temperature: Vec<TemperatureCase>,
    stats: StatsFixture,
    conformal: Vec<ConformalCase>,
}

#[derive(Deserialize)]
struct DiversityCase {
    name: String,
    m: usize,
    n: usize,
    c: usize,
    members: Vec<f64>,
    labels: Option<Vec<usize>>,
    expected: DiversityExpected,
}

#[derive(Deserialize)]
struct DiversityExpected {
    disagreement: f64,
    mutual_info: f64,
    pairwise_kl: f64,
    ensemble_gain: Option<f64>,
    member_accuracy: Option<f64>,
}

#[derive(Deserialize)]
struct TemperatureCase {
    name: String,
    n: usize,
    c: usize,
    logits: Vec<f64>,
    labels: Vec<usize>,
    temperature: f64,
}

#[derive(Deserialize)]
struct StatsFixture {
    t_975: Vec<Quantile>,
    intervals: Vec<IntervalCase>,
    paired: Vec<PairedCase>,
}

#[derive(Deserialize)]
struct Quantile {
    df: usize,
    value: f64,
}

#[derive(Deserialize)]
struct IntervalCase {
    values: Vec<f64>,
    mean: f64,
    std: f64,
    ci_low: f64,
    ci_high: f64,
}

#[derive(Deserialize)]
struct PairedCase {
    a: Vec<f64>,
    b: Vec<f64>,
    mean: f64,
    std: f64,
    ci_low: f64,
    ci_high: f64,
}

#[derive(Deserialize)]
struct ConformalCase {
    name: String,
    c: usize,
    cal: Vec<f64>,
    cal_labels: Vec<usize>,
    test: Vec<f64>,
    test_labels: Vec<usize>,
    runs: Vec<ConformalRun>,
}

#[derive(Deserialize)]
struct ConformalRun {
    score: String,
    alpha: f64,
    /// `None` for +inf (full sets).
    threshold: Option<f64>,
    coverage: f64,
    set_size: f64,
    sets: Vec<Vec<usize>>,
}

fn fixture() -> Fixture {
    serde_json::from_str(include_str!("fixtures/evidence.json")).expect("fixture parses")
}

fn close(case: &str, what: &str, ours: f64, theirs: f64, tol: f64) {
    assert!(
        (ours - theirs).abs() <= tol * theirs.abs().max(1.0),
        "{case}: {what} = {ours}, numpy/scipy gives {theirs}"
    );
}

#[test]
fn fixture_covers_every_addition() {
    let f = fixture();
    assert!(f.diversity.len() >= 4 && f.temperature.len() >= 3 && f.conformal.len() >= 3);
    assert!(f.stats.t_975.len() >= 40 && f.stats.intervals.len() >= 5);
    let full = f.conformal.iter().flat_map(|c| &c.runs);
    assert!(
        full.clone().any(|r| r.threshold.is_none()),
        "a full-set case"
    );
    assert!(
        f.diversity.iter().any(|c| c.labels.is_none()),
        "an unlabelled case"
    );
}

#[test]
fn diversity_matches_numpy() {
    for case in fixture().diversity {
        let name = case.name.as_str();
        let members = MemberProbs::new(case.members, case.m, case.n, case.c).unwrap();
        let d = diversity(&members, case.labels.as_deref()).unwrap();
        let e = &case.expected;
        close(name, "disagreement", d.disagreement, e.disagreement, TOL);
        close(name, "mutual_info", d.mutual_info, e.mutual_info, TOL);
        close(name, "pairwise_kl", d.pairwise_kl, e.pairwise_kl, TOL);
        for (what, ours, theirs) in [
            ("ensemble_gain", d.ensemble_gain, e.ensemble_gain),
            ("member_accuracy", d.member_accuracy, e.member_accuracy),
        ] {
            match theirs {
                Some(theirs) => close(name, what, ours, theirs, TOL),
                None => assert!(ours.is_nan(), "{name}: {what} = {ours} without labels"),
            }
        }
    }
}

#[test]
fn fitted_temperature_matches_scipy_minimize_scalar() {
    for case in fixture().temperature {
        let logits = Logits::new(case.logits, case.n, case.c).unwrap();
        let t = fit_temperature(&logits, &case.labels).unwrap();
        // Both optimisers locate the minimum of a smooth objective far below this.
        close(&case.name, "temperature", t, case.temperature, 1e-6);
    }
}

#[test]
fn t_quantiles_match_scipy() {
    for q in fixture().stats.t_975 {
        let ours = t_quantile_975(q.df);
        // Table to 12 digits; Hill's expansion within 2e-8 from df 31.
        assert!(
            (ours / q.value - 1.0).abs() < 1e-7,
            "df {}: {ours} vs scipy {}",
            q.df,
            q.value
        );
    }
}

#[test]
fn intervals_match_scipy_t_interval() {
    for case in fixture().stats.intervals {
        let what = format!("n = {}", case.values.len());
        let i = mean_ci(&case.values);
        assert_eq!(i.n, case.values.len());
        close(&what, "mean", i.mean, case.mean, TOL);
        close(&what, "std", i.std, case.std, TOL);
        // Half-widths carry the t quantile's relative error (<= 2e-8 beyond df 30).
        close(&what, "ci_low", i.ci_low, case.ci_low, 1e-9);
        close(&what, "ci_high", i.ci_high, case.ci_high, 1e-9);
    }
}

#[test]
fn paired_matches_scipy_ttest_rel() {
    for case in fixture().stats.paired {
        let what = format!("paired n = {}", case.a.len());
        let i = paired(&case.a, &case.b).unwrap();
        close(&what, "mean", i.mean, case.mean, TOL);
        close(&what, "std", i.std, case.std, TOL);
        close(&what, "ci_low", i.ci_low, case.ci_low, 1e-9);
        close(&what, "ci_high", i.ci_high, case.ci_high, 1e-9);
    }
}

#[test]
fn conformal_matches_numpy() {
    for case in fixture().conformal {
        let name = case.name.as_str();
        let cal = Probs::new(case.cal, case.cal_labels.len(), case.c).unwrap();
        let test = Probs::new(case.test, case.test_labels.len(), case.c).unwrap();
        for run in &case.runs {
            let score: ConformalScore = run.score.parse().unwrap();
            let what = format!("{score} alpha {}", run.alpha);
            let q = conformal_threshold(&cal, &case.cal_labels, score, run.alpha).unwrap();
            // The same float operations in the same order: thresholds and sets agree exactly,
            // including test rows whose score ties with the threshold.
            assert_eq!(q, run.threshold.unwrap_or(f64::INFINITY), "{name} {what}");
            assert_eq!(prediction_sets(&test, q, score), run.sets, "{name} {what}");
            let report = conformal(
                &cal,
                &case.cal_labels,
                &test,
                &case.test_labels,
                score,
                run.alpha,
            )
            .unwrap();
            assert_eq!((report.score, report.threshold), (score, q));
            close(name, &what, report.coverage, run.coverage, 1e-12);
            close(name, &what, report.set_size, run.set_size, 1e-12);
        }
    }
}
