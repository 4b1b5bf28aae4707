//! Shared by the `uqformer run` tests: the command for an experiment written into a temporary
//! folder, the metrics of its newest run, and the tiny ViT of the experiment crate's tests.
#![allow(unused_macros)]

use std::path::{Path, PathBuf};
use std::process::Command;

#[macro_use]
#[path = "../../../experiment/tests/common/tiny_vit.rs"]
mod tiny_vit;

/// `uqformer run <dir>/<name>.toml --out <dir>/results --data datasets --workers <workers>`,
/// with `config` written to that file first.
pub fn run_command(dir: &Path, name: &str, config: &str, workers: usize) -> Command {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, config).unwrap();
    let datasets = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets");
    let mut command = Command::new(env!("CARGO_BIN_EXE_uqformer"));
    command
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.join("results"))
        .arg("--data")
        .arg(datasets)
        .args(["--workers", &workers.to_string()]);
    command
}

/// The newest run's summary of experiment `name` under `<dir>/results`.
pub fn summary(dir: &Path, name: &str) -> serde_json::Value {
    let file: PathBuf = dir.join(format!("results/{name}/latest/summary.json"));
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// Each method's name and its ID, OOD and shift metrics: what must not change between runs
/// that trained the same models (latencies and wall times do).
pub fn metrics(summary: &serde_json::Value) -> Vec<serde_json::Value> {
    (summary["methods"].as_array().unwrap().iter())
        .map(|m| serde_json::json!([m["name"], m["id"], m["ood"], m["shift"]]))
        .collect()
}
