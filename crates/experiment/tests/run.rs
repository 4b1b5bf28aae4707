//! The runner end to end on the bundled data, with a very small model: the output contract,
//! identical metrics for the same seed, and a clear error for a data set that is not fetched.

#[macro_use]
mod common;

use std::path::Path;

use common::{bundled, options, serial};
use data::error_chain;
use experiment::{ExperimentConfig, run};
use report::{Summary, Variant};
use report::{join_runs, redraw};

/// A declared claim: MC Dropout's NLL within 0.05 of the Deep Ensemble's.
const CLAIM: &str = "\n[[claim]]\nmethod = \"mc_dropout\"\nreference = \"deep_ensemble\"\n\
                     metric = \"id.nll\"\nkind = \"non-inferior\"\nmargin = 0.05\n\
                     reason = \"a test\"\n";

const TINY: &str = concat!(
    r#"
[experiment]
name = "tiny"
seeds = [3]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
shift = [{ corruption = "gaussian_noise", severities = [2] }]
train_limit = 300
test_limit = 100
eval_batch_size = 64

"#,
    tiny_vit!(1),
    r#"
[train]
epochs = 1
batch_size = 50
crop_padding = 1

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2

[[method]]
kind = "mc_dropout"
samples = 3
"#
);

/// Everything of a summary that must not depend on timing.
fn metrics(s: &Summary) -> String {
    let rows: Vec<_> = s
        .methods
        .iter()
        .map(|m| serde_json::json!([m.name, m.members, m.seed, m.id, m.ood, m.shift]))
        .collect();
    serde_json::to_string(&rows).unwrap()
}

#[test]
fn writes_the_output_contract_and_repeats_exactly() {
    let _guard = serial();
    let config = ExperimentConfig::parse(TINY).unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = run(&config, &bundled(a.path())).unwrap();
    for file in ["config.toml", "summary.json", "report.md"] {
        assert!(
            first.dir.join(file).is_file(),
            "{file} missing in {}",
            first.dir.display()
        );
    }
    let latest = a.path().join("results/tiny/latest");
    assert_eq!(
        std::fs::canonicalize(latest).unwrap(),
        std::fs::canonicalize(&first.dir).unwrap()
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(first.dir.join("summary.json")).unwrap())
            .unwrap();
    let methods = json["methods"].as_array().unwrap();
    assert_eq!(methods.len(), 3);
    assert_eq!(methods[1]["kind"], "deep_ensemble");
    assert_eq!(methods[1]["members"], 2);
    assert!(methods[0]["ood"]["mnist_small"]["auroc"].is_f64());
    assert!(methods[0]["shift"]["gaussian_noise-2"]["accuracy"].is_f64());
    assert!(
        methods[2]["cost"]["flops"].as_u64().unwrap()
            == 3 * methods[0]["cost"]["flops"].as_u64().unwrap()
    );
    // The cache folders the run used (for `uqformer cache clean --unused-by`): every one there,
    // and no process marks any as in use once the run is over.
    let mut folders: Vec<String> = (std::fs::read_dir(a.path().join("cache")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    let keys = std::fs::read_to_string(first.dir.join(runtime::CACHE_KEYS)).unwrap();
    assert_eq!(keys.lines().collect::<Vec<_>>(), folders);
    assert_eq!(folders.len(), 2, "two base models");
    // The resolved config is itself a valid experiment file.
    ExperimentConfig::parse(&std::fs::read_to_string(first.dir.join("config.toml")).unwrap())
        .unwrap();

    // Same seed, fresh cache (so everything is trained again): identical metrics.
    let second = run(&config, &bundled(b.path())).unwrap();
    assert_eq!(metrics(&first.summary), metrics(&second.summary));
    // Reusing the first cache skips training and still gives the same metrics, and counts the
    // training the cached models stand for.
    let cached = run(&config, &bundled(a.path())).unwrap();
    assert_eq!(metrics(&first.summary), metrics(&cached.summary));
    let train_costs = |s: &Summary| s.methods.iter().map(|m| m.train_cost).collect::<Vec<_>>();
    assert_eq!(train_costs(&first.summary), train_costs(&cached.summary));
    assert_ne!(cached.dir, first.dir, "each run gets its own folder");
}

#[test]
fn a_missing_dataset_says_to_run_fetch() {
    let _guard = serial();
    let config =
        ExperimentConfig::parse(&TINY.replace("\"fashion_mnist_small\"", "\"fashion_mnist\""))
            .unwrap();
    let empty = tempfile::tempdir().unwrap();
    let e = run(&config, &options(empty.path(), empty.path()))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(e.contains("datasets/fetch") && e.contains("fashion"), "{e}");
}

#[test]
fn unknown_backend_or_preset_is_rejected_when_parsed() {
    let e = ExperimentConfig::parse(&TINY.replace("seeds = [3]", "seeds = [3]\nbackend = \"tpu\""))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    // toml's message quotes the line and serde lists the variants.
    assert!(
        e.contains("backend = \"tpu\"") && e.contains("`flex`") && e.contains("`tch-cuda`"),
        "{e}"
    );
    let bf16_on_ndarray = TINY
        .replace("seeds = [3]", "seeds = [3]\nbackend = \"ndarray\"")
        .replace("[backbone]", "[eval]\nprecision = \"bf16\"\n\n[backbone]");
    let e = ExperimentConfig::parse(&bf16_on_ndarray)
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(e.contains("eval.precision") && e.contains("ndarray"), "{e}");
    let e = ExperimentConfig::parse(&TINY.replace("\"vit_tiny_28\"", "\"vit_huge\""))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        e.contains("backbone.preset") && e.contains("vit_tiny_28"),
        "{e}"
    );
    let e = ExperimentConfig::parse(&TINY.replace("\"gaussian_noise\"", "\"fog\""))
        .map_err(|e| error_chain(&e))
        .unwrap_err();
    assert!(
        e.contains("data.shift.corruption") && e.contains("contrast"),
        "{e}"
    );
}

/// Temperature-scaled entries, diversity, conformal sets, cost quartiles and the paired
/// comparisons of a two-seed run, against what each must be.
#[test]
fn calibrated_entries_diversity_and_comparisons() {
    let _guard = serial();
    let text = TINY
        .replace("seeds = [3]", "seeds = [3, 4]")
        .replace(
            "kind = \"single\"",
            "kind = \"single\"\ncalibration = \"temperature\"",
        )
        .replace("members = 2", "members = 2\ncalibration = \"temperature\"")
        + CLAIM;
    let config = ExperimentConfig::parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config, &bundled(dir.path())).unwrap();
    let s = &out.summary;
    let names: Vec<&str> = s.methods.iter().map(|m| m.name.as_str()).collect();
    let one_seed = [
        "single",
        "single+ts",
        "deep_ensemble",
        "deep_ensemble+ts",
        "mc_dropout",
    ];
    assert_eq!(names, [one_seed, one_seed].concat());
    let find = |name: &str, seed: u64| {
        (s.methods.iter())
            .find(|m| m.name == name && m.seed == seed)
            .unwrap()
    };
    for seed in [3, 4] {
        for name in ["single", "deep_ensemble"] {
            let (plain, ts) = (find(name, seed), find(&format!("{name}+ts"), seed));
            // One temperature divides every member's logits: no member's argmax moves, and
            // for one member the prediction's argmax cannot move either.
            if name == "single" {
                assert_eq!(ts.id.accuracy, plain.id.accuracy);
            }
            let t = ts.temperature.unwrap();
            assert!(t.is_finite() && t > 0.0, "{t}");
            // The entries say what they are; the name follows from that.
            assert_eq!((ts.method.as_str(), ts.variant), (name, Some(Variant::Ts)));
            assert_eq!((plain.method.as_str(), plain.variant), (name, None));
            assert_eq!(
                (ts.kind.as_str(), ts.members),
                (plain.kind.as_str(), plain.members)
            );
            assert_eq!(
                ts.cost, plain.cost,
                "a calibrated entry costs what its method does"
            );
            assert!(plain.temperature.is_none());
        }
        assert!(find("single", seed).diversity.is_none());
        for name in ["deep_ensemble", "deep_ensemble+ts", "mc_dropout"] {
            let m = find(name, seed);
            let d = m.diversity.as_ref().unwrap();
            let gain = m.id.accuracy - d.id.member_accuracy;
            assert!((d.id.ensemble_gain - gain).abs() < 1e-12, "{name}: {d:?}");
            assert!((0.0..=1.0).contains(&d.id.disagreement));
            assert!(d.id.mutual_info >= 0.0 && d.id.pairwise_kl >= 0.0);
            let ood = &d.ood["mnist_small"];
            assert!(ood.ensemble_gain.is_nan() && (0.0..=1.0).contains(&ood.disagreement));
        }
        // Member 0 of the Deep Ensemble is the single model, so the other member's accuracy is
        // what the mean leaves.
        let de = find("deep_ensemble", seed);
        let other = 2.0 * de.diversity.as_ref().unwrap().id.member_accuracy
            - find("single", seed).id.accuracy;
        assert!((0.0..=1.0).contains(&(other + 1e-12)), "{other}");
        for m in s.methods.iter().filter(|m| m.seed == seed) {
            let c = &m.cost;
            assert!(c.latency_ms_q1 <= c.latency_ms && c.latency_ms <= c.latency_ms_q3);
            assert!(c.latency_ms_b1_q1 <= c.latency_ms_b1 && c.latency_ms_b1 <= c.latency_ms_b1_q3);
            // Paired with itself round by round, `single` is exactly 1.
            let paired = [c.latency_x_single.unwrap(), c.latency_b1_x_single.unwrap()];
            match m.kind.as_str() {
                "single" => assert_eq!(paired, [1.0, 1.0]),
                _ => assert!(
                    paired.iter().all(|x| x.is_finite() && *x > 0.0),
                    "{paired:?}"
                ),
            }
            let conformal = m.conformal.as_ref().unwrap();
            assert_eq!((conformal.alpha, conformal.score.name()), (0.1, "thr"));
            assert!((0.0..=1.0).contains(&conformal.coverage));
            assert!((0.0..=10.0).contains(&conformal.set_size));
        }
    }
    // Training cost: the Deep Ensemble stands on two trainings of the base recipe (300
    // samples in batches of 50, one epoch: 6 steps each), single and MC Dropout on one.
    for seed in [3, 4] {
        let cost = |name: &str| find(name, seed).train_cost.unwrap();
        let single = cost("single");
        assert_eq!(
            (single.trainings, single.steps, single.samples),
            (1, 6, 300)
        );
        assert!(single.wall_seconds > 0.0 && single.stored_bytes > 0);
        // Every parameter of the single model trains; the Deep Ensemble trains two of them.
        assert_eq!(single.trainable_params, find("single", seed).cost.params);
        let de = cost("deep_ensemble");
        assert_eq!((de.trainings, de.steps, de.samples), (2, 12, 600));
        assert_eq!(de.trainable_params, 2 * single.trainable_params);
        assert_eq!(
            de.stored_bytes,
            2 * single.stored_bytes,
            "two checkpoints alike"
        );
        assert_eq!(cost("mc_dropout"), single);
        assert_eq!(cost("deep_ensemble+ts"), de);
    }
    // Every other method against the Deep Ensemble, paired by seed.
    let c = (s.comparisons.iter())
        .find(|c| c.method == "mc_dropout" && c.metric == "id.nll")
        .unwrap();
    let diffs: Vec<f64> = [3, 4]
        .map(|seed| find("mc_dropout", seed).id.nll - find("deep_ensemble", seed).id.nll)
        .to_vec();
    let mean = (diffs[0] + diffs[1]) / 2.0;
    // Two seeds: sd = |d0 - d1| / sqrt(2), t(0.975, 1) = 12.7062.
    let half = 12.706_204_736 * (diffs[0] - diffs[1]).abs() / 2.0;
    assert_eq!((c.reference.as_str(), c.n_seeds), ("deep_ensemble", 2));
    assert!((c.mean_diff - mean).abs() < 1e-12);
    assert!((c.ci_high - (mean + half)).abs() < 1e-6 * (1.0 + half));
    assert!(!c.higher_is_better);
    assert!(s.comparisons.iter().all(|c| c.method != "deep_ensemble"));
    let compared: std::collections::BTreeSet<&str> =
        s.comparisons.iter().map(|c| c.method.as_str()).collect();
    assert_eq!(
        compared,
        ["deep_ensemble+ts", "mc_dropout", "single", "single+ts"].into()
    );
    // The declared claim, decided on both seeds, Holm over it alone (one test: unchanged);
    // the shares of the Deep Ensemble's gain for every method but it and single.
    let claim = &s.claims[0];
    assert_eq!(
        (s.claims.len(), claim.n_seeds, claim.p_holm),
        (1, 2, claim.p)
    );
    assert_ne!(claim.verdict, report::ClaimVerdict::Undefined);
    let shared: std::collections::BTreeSet<&str> =
        s.retained.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(
        shared,
        ["deep_ensemble+ts", "mc_dropout", "single+ts"].into()
    );
    drop(_guard);
    a_later_run_joins_and_other_data_is_refused(&out.dir, dir.path());
    seed_parts_join_into_the_whole_run(&out.summary, &text, dir.path());
}

/// A study run in parts: the same experiment on seed 3, then on seed 4 (from the same cache),
/// joined, gives the two-seed run's entries under the same names, metric for metric, and the
/// same paired comparisons of every metric that does not depend on timing.
fn seed_parts_join_into_the_whole_run(whole: &Summary, text: &str, root: &Path) {
    let _guard = serial();
    let part = |seed: u64| {
        let one = text.replace("seeds = [3, 4]", &format!("seeds = [{seed}]"));
        run(&ExperimentConfig::parse(&one).unwrap(), &bundled(root)).unwrap()
    };
    let (a, b) = (part(3), part(4));
    let joined = join_runs(&[a.dir.clone(), b.dir.clone()], None).unwrap();
    assert_eq!(joined.summary.seeds, [3, 4]);
    // The join is titled by the experiment it continues, once.
    assert_eq!(joined.summary.experiment, whole.experiment);
    // Both parts say where they came from, alike: the join warns of nothing.
    let made = a
        .summary
        .provenance
        .as_ref()
        .expect("a new run records its provenance");
    assert_eq!(
        (made.version.as_str(), made.backend.as_str()),
        (env!("CARGO_PKG_VERSION"), "flex")
    );
    assert!(made.threads >= 1 && made.wall_seconds > 0.0 && !made.command.is_empty());
    // The commit is the one the code was built from: in a checkout, git's HEAD (cargo builds
    // again when HEAD moves, so a test run after a commit still agrees).
    let head = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string());
    if let Some(head) = head {
        assert_eq!(made.commit.as_deref(), Some(head.as_str()));
    }
    assert!(joined.warnings.is_empty(), "{:?}", joined.warnings);
    // Part b as if made by other code on a CPU without AVX2: the join says so, naming both.
    let file = b.dir.join("summary.json");
    let mut stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    stored["provenance"]["commit"] = "0000000".into();
    stored["provenance"]["simd"] = serde_json::json!([]);
    std::fs::write(&file, serde_json::to_string(&stored).unwrap()).unwrap();
    let warned = join_runs(&[a.dir.clone(), b.dir.clone()], None).unwrap();
    assert_eq!(warned.warnings.len(), 1, "{:?}", warned.warnings);
    let warning = &warned.warnings[0];
    assert!(
        warning.contains("commit: ")
            && warning.contains("vs 0000000")
            && warning.contains("simd: "),
        "{warning}"
    );
    assert!(warned.preface.contains("Provenance differs"));
    assert_eq!(metrics(&warned.summary), metrics(&joined.summary));
    assert_eq!(metrics(&joined.summary), metrics(whole));
    let untimed = |s: &Summary| -> Vec<String> {
        (s.comparisons.iter())
            .filter(|c| {
                ["id.", "ood.", "shift."]
                    .iter()
                    .any(|p| c.metric.starts_with(p))
            })
            .map(|c| serde_json::to_string(c).unwrap())
            .collect()
    };
    assert!(!untimed(whole).is_empty());
    assert_eq!(untimed(&joined.summary), untimed(whole));
    // The parts' config.toml carry the claim: the join decides it over both seeds, as the
    // whole run did.
    let claims = |s: &Summary| serde_json::to_string(&s.claims).unwrap();
    assert_eq!(joined.summary.claims.len(), 1);
    assert_eq!(claims(&joined.summary), claims(whole));
    // The same two parts but one seed in common are two runs side by side, renamed.
    let overlap = join_runs(&[a.dir.clone(), a.dir.clone()], None).unwrap();
    let id = a.dir.file_name().unwrap().to_string_lossy();
    let renamed = (overlap.summary.methods.iter())
        .find(|m| m.name == format!("single@{id}+ts"))
        .expect("a variant is renamed with its method");
    assert_eq!(
        (renamed.method.as_str(), renamed.variant),
        (format!("single@{id}").as_str(), Some(Variant::Ts))
    );
}

/// `[eval] precision = "bf16"`: every method again in bf16 beside its f32 entry, the same
/// model (kind, members, parameters, FLOPs), timed on its own, and compared in the report.
#[test]
fn bf16_entries_sit_beside_the_f32_ones() {
    let _guard = serial();
    let text = TINY.replace("[backbone]", "[eval]\nprecision = \"bf16\"\n\n[backbone]");
    let config = ExperimentConfig::parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config, &bundled(dir.path())).unwrap();
    let s = &out.summary;
    let names: Vec<&str> = s.methods.iter().map(|m| m.name.as_str()).collect();
    let expected = [
        "single",
        "single+bf16",
        "deep_ensemble",
        "deep_ensemble+bf16",
        "mc_dropout",
        "mc_dropout+bf16",
    ];
    assert_eq!(names, expected);
    let find = |name: &str| s.methods.iter().find(|m| m.name == name).unwrap();
    for name in ["single", "deep_ensemble", "mc_dropout"] {
        let (plain, low) = (find(name), find(&format!("{name}+bf16")));
        assert_eq!(
            (low.method.as_str(), low.variant),
            (name, Some(Variant::Bf16))
        );
        assert_eq!(
            (
                low.kind.as_str(),
                low.members,
                low.cost.params,
                low.cost.flops
            ),
            (
                plain.kind.as_str(),
                plain.members,
                plain.cost.params,
                plain.cost.flops
            )
        );
        // Its own timing rounds: quartiles around each median, a ratio to single's.
        let c = &low.cost;
        assert!(c.latency_ms_q1 <= c.latency_ms && c.latency_ms <= c.latency_ms_q3);
        assert!(c.latency_ms_b1_q1 <= c.latency_ms_b1 && c.latency_ms_b1 <= c.latency_ms_b1_q3);
        assert!(c.latency_x_single.unwrap() > 0.0);
        // bf16 keeps 8 significant bits: the predictions move, but not far.
        assert!(
            (low.id.nll - plain.id.nll).abs() < 0.05 * plain.id.nll,
            "{name}"
        );
        assert_ne!(low.id.nll, plain.id.nll, "{name}: evaluated in f32?");
    }
    let report = std::fs::read_to_string(out.dir.join("report.md")).unwrap();
    let table = report.split("### bf16 against f32").nth(1).unwrap();
    for name in ["single+bf16", "deep_ensemble+bf16", "mc_dropout+bf16"] {
        assert!(table.contains(&format!("| {name} |")), "{name} missing");
    }
}

/// `uqformer compare`: a later run (one seed, one method more, the same cache) joins the
/// two-seed run in `first`; a run whose data differ is refused, naming the field.
fn a_later_run_joins_and_other_data_is_refused(first: &Path, root: &Path) {
    let _guard = serial();
    // Drawn again from the stored numbers, the run's report and figures come out the same.
    let again = redraw(first).unwrap();
    assert_eq!(
        again.markdown,
        std::fs::read_to_string(first.join("report.md")).unwrap()
    );
    for f in &again.figures {
        assert_eq!(
            f.svg,
            std::fs::read_to_string(first.join(&f.file)).unwrap(),
            "{}",
            f.file
        );
    }
    let text = format!("{TINY}\n[[method]]\nkind = \"packed_ensemble\"\nmembers = 2\n");
    let later = run(&ExperimentConfig::parse(&text).unwrap(), &bundled(root)).unwrap();
    let id = later
        .dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let joined = join_runs(&[first.to_path_buf(), later.dir.clone()], None).unwrap();
    let names: Vec<String> = joined
        .summary
        .methods
        .iter()
        .map(|m| m.name.clone())
        .collect();
    assert_eq!(names.len(), 10 + 4);
    let renamed = ["single", "deep_ensemble", "mc_dropout"].map(|n| format!("{n}@{id}"));
    assert_eq!(names[10..13], renamed);
    assert_eq!(names[13], "packed_ensemble", "a new method keeps its name");
    assert_eq!(joined.summary.seeds, [3, 4]);
    assert_eq!(joined.curves.methods.len(), 14);
    assert!(
        joined
            .summary
            .comparisons
            .iter()
            .any(|c| c.method == "packed_ensemble")
    );
    let rendered = joined.render().unwrap();
    // Titled by the experiment, not by the command; the runs compared come after the headline,
    // before the detail.
    assert!(rendered.markdown.starts_with("# tiny\n"));
    let at = |s: &str| rendered.markdown.find(s).unwrap();
    assert!(at("## Headline") < at("## Runs compared") && at("## Runs compared") < at("## Detail"));
    assert!(rendered.markdown.contains(&later.dir.display().to_string()));
    assert_eq!(rendered.figures.len(), 6);
    assert_eq!(rendered.html.matches("<svg").count(), 6);

    // The same run with another test set size is not comparable.
    let other = root.join("other-data");
    std::fs::create_dir_all(&other).unwrap();
    for file in ["summary.json", "curves.json"] {
        std::fs::copy(later.dir.join(file), other.join(file)).unwrap();
    }
    let config = std::fs::read_to_string(later.dir.join("config.toml")).unwrap();
    assert!(config.contains("test_limit = 100"));
    std::fs::write(
        other.join("config.toml"),
        config.replace("test_limit = 100", "test_limit = 99"),
    )
    .unwrap();
    let err = join_runs(&[first.to_path_buf(), other.clone()], None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("[data] test_limit is 100 in") && err.contains("but 99 in"),
        "{err}"
    );
    assert!(err.contains(&other.display().to_string()), "{err}");
    let one = join_runs(&[first.to_path_buf()], None)
        .err()
        .unwrap()
        .to_string();
    assert!(one.contains("two or more run directories"), "{one}");
}

/// `[data] image_size`: every set is resized as it is loaded, so the model is built for the new
/// side (56 = 8x8 patches of 7 here, 64 tokens, not 16) and trains and evaluates on it.
#[test]
fn image_size_resizes_every_set_for_the_model() {
    let _guard = serial();
    let text = TINY
        .replace("eval_batch_size = 64", "eval_batch_size = 64\nimage_size = 56")
        .replace(
            "[[method]]\nkind = \"deep_ensemble\"\nmembers = 2\n\n[[method]]\nkind = \"mc_dropout\"\nsamples = 3\n",
            "",
        );
    let config = ExperimentConfig::parse(&text).unwrap();
    assert_eq!(config.methods.len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config, &bundled(dir.path())).unwrap();
    let single = &out.summary.methods[0];
    let vit = |side: usize| {
        backbone::ViTConfig::new()
            .with_image_size(side)
            .with_patch_size(7)
            .with_d_model(16)
            .with_n_layers(1)
            .with_n_heads(2)
            .with_d_mlp(32)
            .with_num_classes(10)
    };
    assert_eq!(single.cost.flops, vit(56).flops_per_sample());
    assert_ne!(single.cost.flops, vit(28).flops_per_sample());
    assert!(single.ood.contains_key("mnist_small") && single.id.nll.is_finite());
    let resolved = std::fs::read_to_string(out.dir.join("config.toml")).unwrap();
    assert!(resolved.contains("image_size = 56"), "{resolved}");
}

/// `[eval] baseline`: the run records it, with its reference, and pairs latency with it (the
/// baseline's own ratio is exactly 1); the report's ratios are to it.
#[test]
fn the_baseline_chosen_pairs_the_latency_and_is_recorded() {
    let _guard = serial();
    let text = TINY.replace(
        "[backbone]",
        "[eval]\nbaseline = \"mc_dropout\"\n\n[backbone]",
    );
    let config = ExperimentConfig::parse(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = run(&config, &bundled(dir.path())).unwrap();
    let s = &out.summary;
    assert_eq!(
        (s.baseline.as_deref(), s.reference.as_deref()),
        (Some("mc_dropout"), Some("deep_ensemble"))
    );
    for m in &s.methods {
        let paired = [m.cost.latency_x_single, m.cost.latency_b1_x_single];
        if m.name == "mc_dropout" {
            assert_eq!(paired, [Some(1.0), Some(1.0)]);
        } else {
            assert!(
                paired.iter().all(|x| x.is_some_and(|x| x > 0.0)),
                "{paired:?}"
            );
        }
    }
    let back = redraw(&out.dir).unwrap();
    assert!(
        back.markdown.contains("against `mc_dropout`"),
        "{}",
        back.markdown
    );
}
