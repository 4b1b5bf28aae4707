//! `[[claim]]` in an experiment file: a valid claim parses and is written back to the resolved
//! config; each bad field is refused naming the claim, the field and the allowed values.

use data::error_chain;
use experiment::ExperimentConfig;
use uq_metrics::ClaimKind;

const FILE: &str = r#"
[experiment]
name = "t"
seeds = [1, 2]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]

[backbone]
preset = "vit_tiny_28"
dropout = 0.1

[eval]
calibration = "temperature"

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 3

[[method]]
kind = "mc_dropout"
name = "mcd"
samples = 4
"#;

const CLAIM: &str = r#"
[[claim]]
method = "mcd"
reference = "deep_ensemble"
metric = "id.nll"
kind = "non-inferior"
margin_share = 0.5
reason = "MC Dropout keeps half the ensemble's NLL gain"
"#;

fn with(claim: &str) -> String {
    format!("{FILE}{claim}")
}

fn error_of(claim: &str) -> String {
    error_chain(&ExperimentConfig::parse(&with(claim)).expect_err("should be rejected"))
}

#[test]
fn a_claim_parses_and_is_written_back() {
    let c = ExperimentConfig::parse(&with(CLAIM)).unwrap();
    assert_eq!(c.claims.len(), 1);
    assert_eq!(c.claims[0].kind, ClaimKind::NonInferior);
    assert_eq!(c.claims[0].margin_share, Some(0.5));
    // The resolved config (config.toml) keeps it, so `uqformer compare` finds it.
    let table: toml::Table = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
    let back: Vec<report::Claim> = table["claim"].clone().try_into().unwrap();
    assert_eq!(back, c.claims);
    // A variant is an entry too; superiority may give no margin.
    let ts = CLAIM
        .replace("\"mcd\"", "\"mcd+ts\"")
        .replace("kind = \"non-inferior\"", "kind = \"superior\"")
        .replace("margin_share = 0.5\n", "");
    assert!(ExperimentConfig::parse(&with(&ts)).is_ok());
    // No claims: none written.
    assert!(
        !toml::to_string(&ExperimentConfig::parse(FILE).unwrap())
            .unwrap()
            .contains("claim")
    );
}

#[test]
fn each_bad_field_is_named_with_what_is_allowed() {
    let cases = [
        (
            CLAIM.replace("\"mcd\"", "\"mc_dropout\""),
            vec![
                "[[claim]] #1 method",
                "`mc_dropout`",
                "single, single+ts, deep_ensemble",
            ],
        ),
        (
            CLAIM.replace("reference = \"deep_ensemble\"", "reference = \"ens\""),
            vec!["[[claim]] #1 reference", "`ens`"],
        ),
        (
            CLAIM.replace("id.nll", "nll"),
            vec![
                "[[claim]] #1 metric",
                "`nll`",
                "id.accuracy",
                "ood.mnist_small.auroc",
            ],
        ),
        (
            CLAIM.replace("non-inferior", "noninferior"),
            vec!["noninferior", "non-inferior", "equivalent", "superior"],
        ),
        (
            CLAIM.replace("margin_share = 0.5", "margin_share = 0.5\nmargin = 0.01"),
            vec!["[[claim]] #1 margin", "not both"],
        ),
        (
            CLAIM.replace("margin_share = 0.5\n", ""),
            vec!["[[claim]] #1 margin", "missing"],
        ),
        (
            CLAIM.replace("margin_share = 0.5", "margin = -0.01"),
            vec!["[[claim]] #1 margin", "-0.01", "above 0"],
        ),
        (
            CLAIM.replace("reference = \"deep_ensemble\"", "reference = \"single\""),
            vec!["[[claim]] #1 margin_share", "baseline"],
        ),
        (
            CLAIM.replace(
                "reason = \"MC Dropout keeps half the ensemble's NLL gain\"",
                "reason = \"\"",
            ),
            vec!["[[claim]] #1 reason"],
        ),
        (CLAIM.replace("reason =", "why ="), vec!["why", "reason"]),
    ];
    for (claim, wanted) in cases {
        let e = error_of(&claim);
        for w in wanted {
            assert!(e.contains(w), "{w:?} not in {e}");
        }
    }
}
