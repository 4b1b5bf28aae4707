//! Stopping a run: SIGTERM to the main process mid-epoch stops it and its worker, exits 143 with
//! one line, leaves no run folder and no temporary file under results/, and a rerun resumes to
//! exactly the metrics of an uninterrupted run; a worker killed with SIGKILL mid-training has
//! its job taken over by the main process, again to the same metrics.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = r#"
[experiment]
name = "stop"
seeds = [1]

[data]
dataset = "fashion_mnist_small"
ood = ["mnist_small"]
train_limit = 600
test_limit = 60
eval_batch_size = 64

[backbone]
preset = "vit_tiny_28"
patch_size = 7
d_model = 32
n_layers = 2
n_heads = 2
d_mlp = 64
dropout = 0.1

[train]
epochs = 4
batch_size = 50

[[method]]
kind = "single"

[[method]]
kind = "deep_ensemble"
members = 2
"#;

fn finished(out: Output) -> (Option<i32>, String) {
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

fn run(dir: &Path) -> (Option<i32>, String) {
    let out = common::run_command(dir, "stop", CONFIG, 1)
        .arg("--quiet")
        .output()
        .unwrap();
    finished(out)
}

fn start(dir: &Path) -> Child {
    common::run_command(dir, "stop", CONFIG, 1)
        .arg("--quiet")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until training `label`'s checkpoint in `dir`'s cache has at least one epoch done.
fn wait_for_epoch(dir: &Path, label: &str) {
    let cache = dir.join("results/.cache");
    let started = Instant::now();
    loop {
        let done = fs::read_dir(&cache).into_iter().flatten().any(|entry| {
            let folder = entry.unwrap().path();
            let json = |file: &str| -> serde_json::Value {
                let text = fs::read(folder.join(file)).unwrap_or_default();
                serde_json::from_slice(&text).unwrap_or_default()
            };
            json("made-by.json")["training"] == label
                && json("state.json")["epochs_done"].as_u64() >= Some(1)
        });
        if done {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no epoch of {label}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Pids of this test's worker processes (their command line names `dir`).
fn workers(dir: &Path) -> Vec<String> {
    let dir = dir.to_string_lossy().into_owned();
    (fs::read_dir("/proc").unwrap().flatten())
        .filter_map(|entry| {
            let cmdline = fs::read(entry.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.contains(" worker ") && cmdline.contains(&dir))
                .then(|| entry.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

fn kill(signal: &str, pid: &str) {
    let status = Command::new("kill").args([signal, pid]).status().unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            all.extend(files(&path));
        } else {
            all.push(path);
        }
    }
    all
}

#[test]
fn a_stopped_run_and_a_killed_worker_both_end_in_the_uninterrupted_metrics() {
    let reference = tempfile::tempdir().unwrap();
    let (code, stderr) = run(reference.path());
    assert_eq!(code, Some(0), "{stderr}");
    let expected = common::metrics(&common::summary(reference.path(), "stop"));

    // SIGTERM to the main process while it trains member 1 and the worker member 2.
    let stopped = tempfile::tempdir().unwrap();
    let child = start(stopped.path());
    wait_for_epoch(stopped.path(), "seed 1 model 1");
    kill("-TERM", &child.id().to_string());
    let (code, stderr) = finished(child.wait_with_output().unwrap());
    assert_eq!(code, Some(143), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.is_empty()).collect();
    let last = lines.last().copied().unwrap_or_default();
    assert!(
        last.starts_with("interrupted: ") && last.contains("stopped by SIGTERM"),
        "{stderr}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("interrupted"))
            .count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("error"), "{stderr}");
    assert!(
        workers(stopped.path()).is_empty(),
        "a worker outlived the run"
    );
    let results = stopped.path().join("results");
    assert!(!results.join("stop").exists(), "no run folder is written");
    let left: Vec<_> = (files(&results).into_iter())
        .filter(|f| f.file_name().unwrap().to_string_lossy().contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "half-written files: {left:?}");

    // The rerun resumes (no checkpoint is damaged) and ends where the reference did.
    let (code, stderr) = run(stopped.path());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("resumed seed 1 model 1 from epoch "),
        "{stderr}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(
        common::metrics(&common::summary(stopped.path(), "stop")),
        expected
    );

    // SIGKILL to the worker mid-training: the main process resumes its job and finishes.
    let killed = tempfile::tempdir().unwrap();
    let child = start(killed.path());
    wait_for_epoch(killed.path(), "seed 1 model 2");
    let pids = workers(killed.path());
    assert_eq!(pids.len(), 1, "{pids:?}");
    kill("-KILL", &pids[0]);
    let (code, stderr) = finished(child.wait_with_output().unwrap());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("resumed seed 1 model 2 from epoch "),
        "{stderr}"
    );
    assert_eq!(
        common::metrics(&common::summary(killed.path(), "stop")),
        expected
    );
}
