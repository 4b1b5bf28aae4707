//! The experiment schema: valid files parse, each kind of bad input names what is wrong.

use std::error::Error;

use data::error_chain;
use experiment::{ExperimentConfig, Overrides};
use runtime::Backend;

const VALID: &str = r#"
[experiment]
name = "t"
seeds = [1, 2]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
shift = [{ corruption = "gaussian_noise", severities = [1, 3] }]

[backbone]
preset = "vit_tiny_28"
dropout = 0.1

[train]
epochs = 2

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

fn error_of(text: &str) -> String {
    error_chain(&ExperimentConfig::parse(text).expect_err("should be rejected"))
}

#[test]
fn valid_file_parses_with_defaults() {
    let c = ExperimentConfig::parse(VALID).unwrap();
    assert_eq!(c.experiment.seeds, vec![1, 2]);
    assert_eq!(c.experiment.backend, runtime::Backend::Flex);
    assert_eq!(c.train.epochs, 2);
    assert_eq!(
        c.train.batch_size, 128,
        "unset train keys take their defaults"
    );
    let names: Vec<_> = c.methods.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["single", "deep_ensemble", "mcd"]);
    assert_eq!(c.methods[1].kind, "deep_ensemble");
    assert_eq!(c.methods[1].members(), 3);
    assert_eq!(c.methods[1].method.base_models(), 3);
    assert_eq!(c.methods[2].members(), 4);
}

#[test]
fn malformed_toml_reports_the_line() {
    let e = error_of("[experiment]\nname = \"x\n");
    assert!(e.contains("line 2"), "{e}");
}

#[test]
fn unknown_key_lists_the_valid_ones() {
    let e = error_of(&VALID.replace("epochs = 2", "epochz = 2"));
    assert!(
        e.contains("epochz") && e.contains("epochs") && e.contains("batch_size"),
        "{e}"
    );
    let e = error_of(&VALID.replace("members = 3", "members = 3\nmembrs = 2"));
    assert!(
        e.contains("membrs") && e.contains("members") && e.contains("#2"),
        "{e}"
    );
}

#[test]
fn unknown_method_kind_lists_the_kinds() {
    let e = error_of(&VALID.replace("kind = \"single\"", "kind = \"snapshot\""));
    assert!(
        e.contains("snapshot") && e.contains("deep_ensemble") && e.contains("mc_dropout"),
        "{e}"
    );
}

#[test]
fn out_of_range_values_name_the_field() {
    let e = error_of(&VALID.replace("severities = [1, 3]", "severities = [6]"));
    assert!(e.contains("data.shift.severities"), "{e}");
    let e = error_of(&VALID.replace("members = 3", "members = 1"));
    assert!(e.contains("members = 1"), "{e}");
    let e = error_of(&VALID.replace("dropout = 0.1", "dropout = 1.5"));
    assert!(e.contains("backbone.dropout"), "{e}");
    let e = error_of(&VALID.replace("dropout = 0.1", "dropout = 0.0"));
    assert!(
        e.contains("backbone.dropout") && e.contains("mc_dropout"),
        "{e}"
    );
    let e = error_of(&VALID.replace("name = \"mcd\"", "name = \"single\""));
    assert!(e.contains("used twice"), "{e}");
    let e = error_of(&VALID.replace("[data]", "[data]\nimage_size = 0"));
    assert!(e.contains("data.image_size"), "{e}");
}

#[test]
fn load_names_the_file() {
    let dir = std::env::temp_dir().join(format!("uqformer-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, VALID.replace("[train]", "[trian]")).unwrap();
    let e = error_chain(&ExperimentConfig::load(&path, &Overrides::default()).unwrap_err());
    assert!(
        e.starts_with(&path.display().to_string()) && e.contains("trian"),
        "{e}"
    );
    let missing = ExperimentConfig::load(&dir.join("nope.toml"), &Overrides::default())
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        missing.contains("nope.toml") && missing.contains("cannot read"),
        "{missing}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The command line's values replace the file's, are validated with them (the error still names
/// the file) and are what the resolved config records.
#[test]
fn overrides_replace_the_files_values_and_are_validated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.toml");
    std::fs::write(&path, VALID).unwrap();
    let seeds = Overrides {
        seeds: Some(vec![7, 9]),
        ..Overrides::default()
    };
    let c = ExperimentConfig::load(&path, &seeds).unwrap();
    assert_eq!(c.experiment.seeds, [7, 9]);
    let recorded = toml::to_string(&c).unwrap();
    assert!(recorded.contains("seeds = [7, 9]"), "{recorded}");
    let refused = [
        (Some(vec![]), None, "experiment.seeds"),
        // Not compiled into the tests: refused like the same value in the file.
        (None, Some(Backend::Cuda), "experiment.backend"),
    ];
    for (seeds, backend, field) in refused {
        let overrides = Overrides {
            seeds,
            backend,
            devices: None,
        };
        let e = ExperimentConfig::load(&path, &overrides)
            .map_err(|e| error_chain(&e))
            .unwrap_err();
        assert!(
            e.starts_with(&path.display().to_string()) && e.contains(field),
            "{e}"
        );
    }
}

#[test]
fn method_train_overrides_apply_and_are_checked() {
    let text = VALID.replace(
        "members = 3",
        "members = 3\ntrain = { epochs = 5, lr = 1e-4 }",
    );
    let c = ExperimentConfig::parse(&text).unwrap();
    let t = c.methods[1].train_config(&c.train).unwrap();
    assert_eq!(
        (t.epochs, t.lr, t.batch_size),
        (5, 1e-4, c.train.batch_size)
    );
    assert_eq!(c.methods[0].train_config(&c.train).unwrap(), c.train);
    let e = error_of(&VALID.replace("members = 3", "members = 3\ntrain = { epochz = 5 }"));
    assert!(
        e.contains("epochz") && e.contains("deep_ensemble") && e.contains("#2"),
        "{e}"
    );
    let e = error_of(&VALID.replace("members = 3", "members = 3\ntrain = { lr = -1.0 }"));
    assert!(e.contains("train.lr"), "{e}");
}

#[test]
fn every_experiment_file_in_the_repository_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            ExperimentConfig::load(&path, &Overrides::default()).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 4, "found {n} experiment files in {}", dir.display());
}

#[test]
fn eval_section_and_calibration_are_checked() {
    let c = ExperimentConfig::parse(VALID).unwrap();
    assert_eq!(
        (
            c.eval.reference.as_str(),
            c.eval.conformal_alpha,
            c.eval.timing_rounds
        ),
        ("deep_ensemble", 0.1, 9),
        "[eval] defaults"
    );
    let with_eval = |eval: &str| {
        VALID.replace(
            "[[method]]\nkind = \"single\"",
            &format!("[eval]\n{eval}\n\n[[method]]\nkind = \"single\""),
        )
    };
    let e = error_of(&with_eval("conformal_alpha = 1.5"));
    assert!(
        e.contains("eval.conformal_alpha") && e.contains("(0, 1)"),
        "{e}"
    );
    let e = error_of(&with_eval("conformal_score = \"lac\""));
    assert!(e.contains("lac") && e.contains("thr, aps, raps"), "{e}");
    let e = error_of(&with_eval("conformal_score = \"raps(lambda=0.1)\""));
    assert!(e.contains("raps(lambda=0.1)"), "{e}");
    let raps = ExperimentConfig::parse(&with_eval(
        "conformal_score = \"raps(penalty=0.05, k_reg=2)\"",
    ))
    .unwrap();
    assert_eq!(
        raps.eval.conformal_score.to_string(),
        "raps(penalty=0.05, k_reg=2)"
    );
    let e = error_of(&with_eval("calibrate = \"temperature\""));
    assert!(e.contains("calibrate") && e.contains("reference"), "{e}");
    let e = error_of(&with_eval("timing_rounds = 0"));
    assert!(e.contains("eval.timing_rounds"), "{e}");
    // Temperature scaling needs the validation split it is fitted on.
    let e = error_of(
        &with_eval("calibration = \"temperature\"")
            .replace("[data]\n", "[data]\nval_fraction = 0.0\n"),
    );
    assert!(
        e.contains("data.val_fraction") && e.contains("temperature"),
        "{e}"
    );
    // Margins: a metric family, one OOD set's AUROC or their mean; values above 0.
    let c = ExperimentConfig::parse(&with_eval(
        "margins = { \"id.accuracy\" = 0.01, \"ood.mnist_small.auroc\" = 0.02, \"ood.mean.auroc\" = 0.03 }",
    ))
    .unwrap();
    assert_eq!(c.eval.margins.len(), 3);
    assert_eq!(
        report::compare::margin(&c.eval.margins, "id.accuracy"),
        0.01
    );
    assert_eq!(report::compare::margin(&c.eval.margins, "id.ece"), 0.01);
    assert_eq!(report::compare::margin(&c.eval.margins, "id.nll"), 0.02);
    assert_eq!(
        report::compare::margin(&c.eval.margins, "ood.kmnist.auroc"),
        0.01
    );
    let e = error_of(&with_eval("margins = { \"id.accuracy\" = 0.0 }"));
    assert!(
        e.contains("eval.margins.\"id.accuracy\"") && e.contains("above 0"),
        "{e}"
    );
    let e = error_of(&with_eval("margins = { \"ood.cifar.auroc\" = 0.01 }"));
    assert!(
        e.contains("`ood.cifar.auroc`") && e.contains("id.accuracy, id.nll"),
        "{e}"
    );
    let e = error_of(&with_eval("margins = { \"accuracy\" = 0.01 }"));
    assert!(e.contains("eval.margins: `accuracy`"), "{e}");
    // A method's own key: a string of two values; a number reads as Hydra's old key.
    let per_method = |value: &str| {
        VALID.replace(
            "kind = \"single\"",
            &format!("kind = \"single\"\ncalibration = {value}"),
        )
    };
    let c = ExperimentConfig::parse(&per_method("\"temperature\"")).unwrap();
    assert!(c.calibrates(&c.methods[0]) && !c.calibrates(&c.methods[1]));
    let e = error_of(&per_method("\"platt\""));
    assert!(e.contains("\"none\" or \"temperature\""), "{e}");
    let e = error_of(&per_method("256"));
    assert!(e.contains("calibration_samples"), "{e}");
    // `single+ts` is the calibrated single's name: no method may take it.
    let e =
        error_of(&per_method("\"temperature\"").replace("name = \"mcd\"", "name = \"single+ts\""));
    assert!(e.contains("`single+ts` is used twice"), "{e}");
}

/// Kinds whose parameters are a library's config: the library's defaults fill the resolved
/// parameters, unknown, runner-set and missing keys are named, bad values name the variants.
#[test]
fn library_configs_are_the_method_parameters() {
    let with = |method: &str| VALID.replace("[[method]]\nkind = \"single\"", method);
    let c = ExperimentConfig::parse(&with("[[method]]\nkind = \"lora_ensemble\"\nmembers = 2"))
        .unwrap();
    // The documented defaults (the LoRA-Ensemble recipe: rank 8, scale 1, gain 10, fresh heads;
    // Packed-Ensembles alpha 2, gamma 1), pinned here rather than read from the library.
    let params = &c.methods[0].params;
    assert_eq!(params["rank"].as_integer(), Some(8));
    assert_eq!(params["scale"].as_float(), Some(1.0));
    assert_eq!(params["init_gain"].as_float(), Some(10.0));
    assert_eq!(params["head_init"].as_str(), Some("random"));
    assert!(!params.contains_key("text_tokens"), "{params:?}");
    // What to freeze defaults by the backbone, so an absent key stays absent.
    assert!(!params.contains_key("backbone"), "{params:?}");
    let c = ExperimentConfig::parse(&with("[[method]]\nkind = \"packed_ensemble\"\nmembers = 3"))
        .unwrap();
    assert_eq!(c.methods[0].params["alpha"].as_float(), Some(2.0));
    assert_eq!(c.methods[0].params["gamma"].as_integer(), Some(1));
    // LoRA's own key: "base" is kept as given; "pretrained" needs pretrained weights, which a
    // ViT trained from scratch does not have; anything else names the two.
    let c = ExperimentConfig::parse(&with(
        "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\nbackbone = \"base\"",
    ))
    .unwrap();
    assert_eq!(c.methods[0].params["backbone"].as_str(), Some("base"));
    let e = error_of(&with(
        "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\nbackbone = \"pretrained\"",
    ));
    assert!(
        e.contains("backbone = \"pretrained\"") && e.contains("trained from scratch"),
        "{e}"
    );
    let e = error_of(&with(
        "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\nbackbone = \"frozen\"",
    ));
    assert!(
        e.contains("backbone") && e.contains("pretrained") && e.contains("base"),
        "{e}"
    );

    let e = error_of(&with(
        "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\nrnak = 4",
    ));
    assert!(
        e.contains("`rnak`")
            && e.contains("`rank`")
            && e.contains("`head_init`")
            && e.contains("`backbone`"),
        "{e}"
    );
    assert!(
        !e.contains("text_tokens"),
        "runner-set fields are not offered: {e}"
    );
    let e = error_of(&with(
        "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\ntext_tokens = 9",
    ));
    assert!(e.contains("`text_tokens`"), "{e}");
    let e = error_of(&with("[[method]]\nkind = \"mimo\""));
    assert!(e.contains("missing field `members`"), "{e}");
    let e = error_of(&with(
        "[[method]]\nkind = \"lora_ensemble\"\nmembers = 2\nhead_init = \"Copy\"",
    ));
    assert!(
        e.contains("Copy") && e.contains("random") && e.contains("copy"),
        "{e}"
    );
    let e = error_of(&with(
        "[[method]]\nkind = \"hydra\"\nmembers = 2\nmerge = \"mean\"",
    ));
    assert!(
        e.contains("mean") && e.contains("average") && e.contains("none"),
        "{e}"
    );
    let e = error_of(&with(
        "[[method]]\nkind = \"hydra\"\nmembers = 2\nood_calibration = \"fog\"",
    ));
    assert!(e.contains("fog") && e.contains("shot_noise"), "{e}");
}

#[test]
fn devices_are_distinct_and_one_on_a_cpu_backend() {
    let with =
        |devices: &str| VALID.replace("seeds = [1, 2]", &format!("seeds = [1, 2]\n{devices}"));
    let c = ExperimentConfig::parse(&with("devices = [0]")).unwrap();
    assert_eq!(c.experiment.devices, [0]);
    assert!(
        ExperimentConfig::parse(VALID)
            .unwrap()
            .experiment
            .devices
            .is_empty()
    );
    for devices in ["devices = [0, 1]", "devices = [1]"] {
        let e = error_of(&with(devices));
        assert!(
            e.contains("experiment.devices") && e.contains("`flex`") && e.contains("cuda"),
            "{devices}: {e}"
        );
    }
    let e = error_of(&with("devices = [0, 0]"));
    assert!(
        e.contains("experiment.devices") && e.contains("listed twice"),
        "{e}"
    );
}

/// `[data] dataset` is a catalog name or a table naming a set on disk; a table's unknown key is
/// named with the valid ones, and any other value says what is expected.
#[test]
fn a_data_source_is_a_name_or_a_table() {
    let e = error_of(&VALID.replace(
        "dataset = \"fashion_mnist_small\"",
        "dataset = { paht = \"x\" }",
    ));
    assert!(e.contains("paht") && e.contains("path"), "{e}");
    let e = error_of(&VALID.replace("dataset = \"fashion_mnist_small\"", "dataset = 3"));
    assert!(e.contains("a catalog name or a table"), "{e}");
}

/// `[backbone] checkpoint`: its family read from its `config.json` when the file is read (a
/// RoBERTa, whose tokenizer experiments do not read, refused naming the field and the type), and
/// not together with `pretrained`.
#[test]
fn a_checkpoint_path_is_checked_when_the_file_is_read() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../importers/tests/fixtures");
    let roberta = fixtures.join("bert/roberta_model_small");
    let with = |backbone: String| VALID.replace("preset = \"vit_tiny_28\"", &backbone);
    let e = error_of(&with(format!("checkpoint = \"{}\"", roberta.display())));
    assert!(
        e.contains("backbone.checkpoint") && e.contains("roberta"),
        "{e}"
    );
    let vit = fixtures.join("vit/hf_vit_model");
    let both = format!(
        "checkpoint = \"{}\"\npretrained = \"dinov2-s\"",
        vit.display()
    );
    let e = error_of(&with(both));
    assert!(e.contains("not both"), "{e}");
}

/// `[eval] baseline`: left out, the method named `single`; else a `[[method]]` name, and a name
/// that is none of them is refused with the field and the names there are.
#[test]
fn the_baseline_is_a_method_of_the_run() {
    let c = ExperimentConfig::parse(VALID).unwrap();
    assert_eq!(
        (c.eval.baseline.as_deref(), c.eval.baseline()),
        (None, "single")
    );
    let with_baseline = |name: &str| {
        VALID.replace(
            "[[method]]\nkind = \"single\"",
            &format!("[eval]\nbaseline = \"{name}\"\n\n[[method]]\nkind = \"single\""),
        )
    };
    let c = ExperimentConfig::parse(&with_baseline("mcd")).unwrap();
    assert_eq!(c.eval.baseline(), "mcd");
    // A kind is not a name: `mc_dropout` is the method `mcd`'s kind.
    let e = error_of(&with_baseline("mc_dropout"));
    assert!(
        e.contains("eval.baseline")
            && e.contains("`mc_dropout`")
            && e.contains("single, deep_ensemble, mcd"),
        "{e}"
    );
}

/// A file that is not TOML (a bomb of nested arrays included) names the file once, and the
/// parser's error is the source.
#[test]
fn a_malformed_file_names_the_file_once_and_keeps_the_toml_error() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = format!("x = {}{}", "[".repeat(10_000), "]".repeat(10_000));
    for (name, text) in [
        ("bad.toml", "[experiment]\nname = \"x\n".to_string()),
        ("bomb.toml", bomb),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let e = ExperimentConfig::load(&path, &Overrides::default()).unwrap_err();
        let file = path.display().to_string();
        assert_eq!(
            e.to_string(),
            format!("{file}: not a valid experiment file")
        );
        let source = e.source().expect("toml's error");
        assert!(
            source.downcast_ref::<toml::de::Error>().is_some(),
            "{source}"
        );
        assert_eq!(
            error_chain(&e).matches(&file).count(),
            1,
            "{}",
            error_chain(&e)
        );
    }
}

/// A method's parameter that does not parse: the place (entry, kind) is the message, serde's
/// error naming the key its source.
#[test]
fn a_bad_method_parameter_keeps_serdes_error_as_the_source() {
    let e = ExperimentConfig::parse(&VALID.replace("members = 3", "members = 3\nmembrs = 2"))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "[[method]] #2: kind `deep_ensemble`: parameters"
    );
    let source = e.source().expect("serde's error");
    assert!(
        source.downcast_ref::<toml::de::Error>().is_some(),
        "{source}"
    );
    assert!(
        source.to_string().contains("unknown field `membrs`"),
        "{source}"
    );
}
