//! `uqformer run --workers`: training in worker processes gives exactly the results of training
//! everything in the main process.

#[macro_use]
mod common;

use std::path::Path;

const CONFIG: &str = concat!(
    r#"
[experiment]
name = "workers"
seeds = [2]

[data]
dataset = "fashion_mnist_small"
val_fraction = 0.05
ood = ["mnist_small"]
shift = [{ corruption = "contrast", severities = [3] }]
train_limit = 200
test_limit = 60
eval_batch_size = 32

"#,
    tiny_vit!(2),
    r#"
[train]
epochs = 1
batch_size = 50

[[method]]
kind = "deep_ensemble"
members = 3

[[method]]
kind = "mimo"
members = 2

[[method]]
kind = "lora_ensemble"
members = 2
rank = 2

[[method]]
kind = "hydra"
members = 2
keep = 1
train = { epochs = 1 }
"#
);

/// Runs the experiment with `workers` worker processes; returns each method's metrics and what
/// the run printed on stderr.
fn run(dir: &Path, workers: usize, quiet: bool) -> (Vec<serde_json::Value>, String) {
    let out = common::run_command(dir, "workers", CONFIG, workers)
        .args(quiet.then_some("--quiet"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metrics = common::metrics(&common::summary(dir, "workers"));
    (metrics, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn workers_change_nothing_in_the_results() {
    let (alone, parallel) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, quiet) = run(alone.path(), 0, true);
    let (b, printed) = run(parallel.path(), 1, false);
    assert_eq!(a.len(), 4);
    assert_eq!(a, b);
    assert!(quiet.is_empty(), "{quiet}");
    // The worker's trainings show, one whole line per epoch, named by their job.
    let worker_lines: Vec<&str> = (printed.lines())
        .filter(|l| l.starts_with("[worker ") && l.contains(" epoch 1/1 "))
        .collect();
    assert!(!worker_lines.is_empty(), "{printed}");
    assert!(
        worker_lines.iter().all(|l| !l.contains('\r')),
        "{worker_lines:?}"
    );
    // The parallel run did hand jobs out: the workers read the resolved config from the cache.
    let handed_out = std::fs::read_dir(parallel.path().join("results/.cache"))
        .unwrap()
        .any(|e| {
            let name = e.unwrap().file_name();
            name.to_string_lossy().starts_with("worker-config-")
        });
    assert!(handed_out);
}
