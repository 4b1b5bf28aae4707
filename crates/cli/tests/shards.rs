//! `uqformer plan` and `uqformer run --shard`: two array tasks (processes with Slurm's
//! variables set, running at once on one cache) train the run's jobs; a run with `--no-train`
//! then evaluates from the cache, with exactly the metrics of an unsharded run.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

const CONFIG: &str = r#"
[experiment]
name = "shards"
seeds = [0, 1]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.05
ood = ["mnist_small"]
train_limit = 200
test_limit = 60
eval_batch_size = 32

[backbone]
preset = "vit_tiny_28"
patch_size = 7
d_model = 16
n_layers = 2
n_heads = 2
d_mlp = 32
dropout = 0.1

[train]
epochs = 1
batch_size = 50

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2

[[method]]
kind = "hydra"
members = 2
keep = 1
train = { epochs = 1 }
"#;

fn succeeded(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

fn uqformer(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_uqformer"));
    command.current_dir(dir).args(args);
    command
}

#[test]
fn shards_train_the_plan_and_a_plain_run_evaluates_it_unchanged() {
    let (sharded, plain) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = sharded.path();
    let file = dir.join("shards.toml");
    std::fs::write(&file, CONFIG).unwrap();
    let file = file.to_str().unwrap();

    let out = uqformer(dir, &["plan", file]).output().unwrap();
    let lines = String::from_utf8(out.stdout.clone()).unwrap();
    succeeded(out);
    let jobs: Vec<serde_json::Value> = (lines.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = jobs.iter().map(|j| j["id"].as_str().unwrap()).collect();
    // Two base models per seed (the Deep Ensemble's), then Hydra's fine-tunes on base model 0.
    assert_eq!(
        ids,
        [
            "seed0/base:0",
            "seed0/base:1",
            "seed0/method:2",
            "seed1/base:0",
            "seed1/base:1",
            "seed1/method:2"
        ]
    );
    assert_eq!(jobs[2]["needs"], serde_json::json!(["seed0/base:0"]));
    // Named as the progress lines name them: base models count from 1.
    assert_eq!(jobs[1]["what"], "seed 0 model 2");
    // With --device, the same jobs with their estimates: a base model is 3 forwards of each
    // training sample (one epoch).
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets");
    let out = uqformer(dir, &["plan", file, "--device", "l4", "--json", "--data"])
        .arg(&datasets)
        .output()
        .unwrap();
    let estimate: serde_json::Value = serde_json::from_slice(&out.stdout.clone()).unwrap();
    succeeded(out);
    let estimated: Vec<&str> = (estimate["jobs"].as_array().unwrap().iter())
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(estimated, ids);
    let (forward, samples) = (&estimate["flops_per_sample"], &estimate["train_samples"]);
    let base = 3.0 * forward.as_f64().unwrap() * samples.as_f64().unwrap();
    assert_eq!(estimate["jobs"][0]["flops"].as_f64().unwrap(), base);
    assert_eq!(estimate["evaluation"].as_array().unwrap().len(), 3);
    // Several devices need a GPU backend: refused on flex before anything runs.
    let out = uqformer(dir, &["run", file, "--devices", "0,1"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && e.contains("experiment.devices"),
        "{e}"
    );
    assert_eq!(jobs[5]["stage"], "method");

    // Two array tasks at once, on one cache.
    let tasks: Vec<_> = (0..2)
        .map(|task| {
            uqformer(dir, &["run", file, "--quiet", "--shard", "auto", "--data"])
                .arg(&datasets)
                .env("SLURM_ARRAY_TASK_ID", task.to_string())
                .env("SLURM_ARRAY_TASK_COUNT", "2")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut done = Vec::new();
    for task in tasks {
        let out = task.wait_with_output().unwrap();
        done.push(String::from_utf8_lossy(&out.stdout).into_owned());
        succeeded(out);
    }
    // `shard K/N: J job(s) trained or read back ...`
    let trained: usize = (done.iter())
        .map(|d| {
            d.split_whitespace()
                .nth(2)
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!(trained, jobs.len(), "{done:?}");
    assert!(
        !dir.join("results/shards").exists(),
        "a shard evaluates nothing"
    );

    // The plan with the cache: every base model is there now, under the folder it names.
    let cached = |cache: &Path| -> Vec<serde_json::Value> {
        let out = uqformer(dir, &["plan", file, "--cache"])
            .arg(cache)
            .arg("--data")
            .arg(&datasets)
            .output()
            .unwrap();
        let lines = String::from_utf8(out.stdout.clone()).unwrap();
        succeeded(out);
        (lines.lines())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    for job in cached(&dir.join("results/.cache")) {
        match job["stage"].as_str().unwrap() {
            "base" => {
                let name = job["fingerprint"].as_str().unwrap();
                assert!(dir.join("results/.cache").join(name).is_dir(), "{job}");
                assert_eq!(job["cached"], true, "{job}");
            }
            _ => assert!(job.get("cached").is_none(), "{job}"),
        }
    }
    let empty = cached(&plain.path().join("results/.cache"));
    assert!(
        empty
            .iter()
            .filter(|j| j["stage"] == "base")
            .all(|j| j["cached"] == false)
    );

    // The evaluation run trains nothing: --no-train refuses any training, and no epoch line.
    let evaluate = common::run_command(dir, "shards", CONFIG, 0)
        .arg("--no-train")
        .output()
        .unwrap();
    let printed = succeeded(evaluate);
    assert!(!printed.contains(" epoch "), "{printed}");
    // On an empty cache --no-train refuses, naming the trainings missing, and writes no run.
    let refused = common::run_command(plain.path(), "shards", CONFIG, 1)
        .arg("--no-train")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{e}");
    // Every missing base model at once: 2 seeds of 2.
    assert!(
        e.contains("--no-train: 4 base model(s)") && e.contains("seed 1 model 2"),
        "{e}"
    );
    assert!(!plain.path().join("results/shards").exists());
    let unsharded = common::run_command(plain.path(), "shards", CONFIG, 0)
        .arg("--quiet")
        .output()
        .unwrap();
    succeeded(unsharded);
    assert_eq!(
        common::metrics(&common::summary(dir, "shards")),
        common::metrics(&common::summary(plain.path(), "shards"))
    );
}
