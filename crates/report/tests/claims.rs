//! Declared claims and the share of the reference's gain: decided on runs whose numbers are
//! set by hand (orientation, share margins, Holm over the declared claims alone), written to
//! summary.json beside every older field, leading the report, joined over every seed, and
//! absent (not an error) from runs that declare none.

use std::fs;
use std::path::PathBuf;

mod common;

use common::{run, section};
use report::{
    Claim, ClaimVerdict, Summary, conclude, join_runs, render_markdown, render_terminal, write_run,
};
use uq_metrics::{ClaimKind, RatioSet};

/// `single`, `ens` and `cheap` on `seeds`: `ens` is 0.04 NLL below `single` (± a seed wobble
/// that both share), `cheap` keeps half of that gain but for a per-seed wobble of its own.
fn runs(seeds: &[u64]) -> Vec<report::MethodResult> {
    let mut out = Vec::new();
    for &s in seeds {
        let base = 0.5 + 0.01 * s as f64;
        let own = [0.002, -0.001, 0.0015, -0.0025, 0.001, -0.001][s as usize % 6];
        out.push(run("single", "single", 1, s, 0.80, base, 100));
        out.push(run("ens", "deep_ensemble", 3, s, 0.85, base - 0.04, 300));
        out.push(run("cheap", "hydra", 3, s, 0.84, base - 0.02 + own, 120));
    }
    out
}

fn summary(seeds: &[u64]) -> Summary {
    let mut s = common::summary();
    s.seeds = seeds.to_vec();
    s.methods = runs(seeds);
    s.reference = Some("ens".into());
    s
}

fn claim(kind: ClaimKind, margin: Option<f64>, share: Option<f64>) -> Claim {
    Claim {
        method: "cheap".into(),
        reference: "ens".into(),
        metric: "id.nll".into(),
        kind,
        margin,
        margin_share: share,
        reason: "the paper says so".into(),
    }
}

#[test]
fn claims_are_oriented_and_share_margins_come_from_the_reference_gain() {
    let mut s = summary(&[0, 1, 2, 3, 4]);
    let claims = [
        // The reference gains 0.04 NLL; 0.6 of it is a margin of 0.024, above the 0.02 lost.
        claim(ClaimKind::NonInferior, None, Some(0.6)),
        // 0.01 is far below what `cheap` loses: not shown.
        claim(ClaimKind::NonInferior, Some(0.01), None),
        // `cheap` is worse, so not superior at all.
        claim(ClaimKind::Superior, None, None),
    ];
    conclude(&mut s, &claims);
    let c = &s.claims;
    assert!((c[0].margin - 0.024).abs() < 1e-12, "{}", c[0].margin);
    // NLL is lower-better: the difference is +0.02 (worse) in the metric's own direction.
    let diffs: Vec<f64> = [0.002, -0.001, 0.0015, -0.0025, 0.001]
        .iter()
        .map(|o| 0.02 + o)
        .collect();
    let mean = diffs.iter().sum::<f64>() / 5.0;
    assert!((c[0].mean_diff - mean).abs() < 1e-12);
    assert!(c[0].ci90_low < mean && mean < c[0].ci90_high);
    // The one-sided p on the gains (-diffs) at -0.024, as the metrics crate tests it.
    let gains: Vec<f64> = diffs.iter().map(|d| -d).collect();
    let t = uq_metrics::claim_test(&gains, ClaimKind::NonInferior, 0.024).unwrap();
    assert!((c[0].p - t.p).abs() < 1e-9 * t.p, "{} vs {}", c[0].p, t.p);
    let verdicts: Vec<ClaimVerdict> = c.iter().map(|c| c.verdict).collect();
    use ClaimVerdict::*;
    assert_eq!(verdicts, [Shown, NotShown, NotShown]);
    // Holm over the three declared claims alone: the smallest p times 3.
    let smallest = c.iter().map(|c| c.p).fold(f64::INFINITY, f64::min);
    let adjusted = c.iter().map(|c| c.p_holm).fold(f64::INFINITY, f64::min);
    assert!((adjusted - (3.0 * smallest).min(1.0)).abs() < 1e-15);
    assert!(c.iter().all(|c| c.n_seeds == 5 && c.baseline == "single"));
}

#[test]
fn a_share_margin_without_a_gain_and_a_missing_metric_are_undefined() {
    let mut s = summary(&[0, 1, 2]);
    // The reference gains nothing over itself as the baseline.
    s.baseline = Some("ens".into());
    let mut missing = claim(ClaimKind::Equivalent, Some(0.01), None);
    missing.metric = "ood.svhn.auroc".into();
    conclude(
        &mut s,
        &[claim(ClaimKind::NonInferior, None, Some(0.5)), missing],
    );
    assert!(
        s.claims
            .iter()
            .all(|c| c.verdict == ClaimVerdict::Undefined)
    );
    // The report says n/a for the verdict and the seeds alike.
    let md = render_markdown(&s);
    let row = (section(&md, "## Declared claims").into_iter())
        .find(|l| l.starts_with("| 1. "))
        .unwrap();
    assert!(row.ends_with("| n/a | n/a | 3 / n/a |"), "{row}");
    // ECE is the same for every method: the reference gains nothing, no share margin.
    s.baseline = None;
    let mut ece = claim(ClaimKind::NonInferior, None, Some(0.5));
    ece.metric = "id.ece".into();
    conclude(&mut s, &[ece]);
    assert_eq!(
        (s.claims[0].verdict, s.claims[0].margin),
        (ClaimVerdict::Undefined, 0.0)
    );
}

#[test]
fn the_share_kept_is_half_with_fieller_around_it() {
    let mut s = summary(&[0, 1, 2, 3, 4, 5]);
    conclude(&mut s, &[]);
    let nll = (s.retained.iter())
        .find(|r| r.method == "cheap" && r.metric == "id.nll")
        .unwrap();
    // Gains over single: ens −0.04, cheap −0.02 + own (the wobbles sum to 0 over six seeds).
    assert!((nll.share - 0.5).abs() < 1e-12, "{}", nll.share);
    assert!(
        (nll.reference_gain - 0.04).abs() < 1e-12,
        "positive: better"
    );
    let RatioSet::Bounded { low, high } = nll.interval else {
        panic!("{:?}", nll.interval)
    };
    assert!(
        low < 0.5 && 0.5 < high && high - low < 0.2,
        "[{low}, {high}]"
    );
    // ECE is the same for all: no gain to share, an unbounded set.
    let ece = (s.retained.iter())
        .find(|r| r.method == "cheap" && r.metric == "id.ece")
        .unwrap();
    assert!(ece.share.is_nan());
    // Neither the reference nor the baseline has a row of its own.
    assert!(s.retained.iter().all(|r| r.method == "cheap"));
}

#[test]
fn the_report_leads_with_the_claims_and_shows_the_shares() {
    let mut s = summary(&[0, 1, 2, 3, 4]);
    conclude(&mut s, &[claim(ClaimKind::NonInferior, None, Some(0.6))]);
    let md = render_markdown(&s);
    let claims = md.find("## Declared claims").unwrap();
    let headline = md.find("## Headline").or(md.find("## Detail")).unwrap();
    assert!(claims < headline, "the claims lead");
    let lines = section(&md, "## Declared claims");
    let row = lines.iter().find(|l| l.starts_with("| 1. ")).unwrap();
    assert!(row.contains("non-inferior to `ens`: `id.nll`"), "{row}");
    assert!(row.contains("| non-inferior |"), "verdict shown: {row}");
    assert!(lines.contains(&"1. the paper says so"));
    let share = md
        .find("### Share of `ens`'s gain over `single` kept")
        .unwrap();
    assert!(md[share..].contains("| cheap | "));
    let terminal = render_terminal(&s);
    assert!(terminal.starts_with("declared claims"), "{terminal}");
    assert!(row.contains("| 5 / "), "seeds now / needed: {row}");
    assert!(terminal.contains("share of ens's gain over single kept"));
    // Without claims: no section, no error.
    s.claims.clear();
    assert!(!render_markdown(&s).contains("## Declared claims"));
    assert!(!render_terminal(&s).contains("declared claims"));
}

#[test]
fn summary_json_adds_the_new_fields_and_older_summaries_still_read() {
    let mut s = summary(&[0, 1]);
    s.comparisons = report::compare(&s.methods, "ens", &Default::default());
    conclude(&mut s, &[claim(ClaimKind::Equivalent, Some(0.05), None)]);
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(v["claims"][0]["claim"]["kind"], "equivalent");
    assert_eq!(v["claims"][0]["family"], "declared");
    assert_eq!(v["comparisons"][0]["family"], "exploratory");
    assert!(v["comparisons"][0]["decision"]["ci90_low"].is_number());
    assert!(v["retained"][0]["interval"]["kind"].is_string());
    // A summary without the new fields (an old run) reads, with none of them.
    let mut old = v.clone();
    let o = old.as_object_mut().unwrap();
    o.remove("claims");
    o.remove("retained");
    for c in o["comparisons"].as_array_mut().unwrap() {
        c.as_object_mut().unwrap().remove("family");
        let d = c["decision"].as_object_mut().unwrap();
        d.remove("ci90_low");
        d.remove("ci90_high");
    }
    let back: Summary = serde_json::from_value(old).unwrap();
    assert!(back.claims.is_empty() && back.retained.is_empty());
    assert!(back.comparisons[0].decision.ci90_low.is_nan());
    assert!(!render_markdown(&back).contains("## Declared claims"));
}

const CLAIM: &str = "[[claim]]\nmethod = \"cheap\"\nreference = \"ens\"\nmetric = \"id.nll\"\n\
                     kind = \"non-inferior\"\nmargin_share = 0.6\nreason = \"joined\"\n";

#[test]
fn a_study_run_in_parts_decides_its_claims_over_every_seed() {
    let root = std::env::temp_dir().join(format!("report-claims-join-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    let part = |seeds: &[u64], claims: &str| -> PathBuf {
        let s = summary(seeds);
        let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
        let config = format!(
            "[experiment]\nname = \"exp\"\nseeds = [{}]\n\n{claims}",
            list.join(", ")
        );
        write_run(&root, &config, &s, "", &[]).unwrap()
    };
    let (a, b) = (part(&[0, 1, 2], CLAIM), part(&[3, 4], CLAIM));
    let joined = join_runs(&[a.clone(), b], Some("ens")).unwrap();
    let c = &joined.summary.claims;
    assert_eq!(c.len(), 1);
    assert_eq!((c[0].n_seeds, c[0].verdict), (5, ClaimVerdict::Shown));
    assert_eq!(joined.summary.retained[0].n_seeds, 5);
    // Runs that declare nothing join with no claims section.
    let (x, y) = (part(&[5], ""), part(&[6], ""));
    let plain = join_runs(&[x, y], Some("ens")).unwrap();
    assert!(plain.summary.claims.is_empty());
    assert!(
        !plain
            .render()
            .unwrap()
            .markdown
            .contains("## Declared claims")
    );
    fs::remove_dir_all(&root).unwrap();
}
