//! Times the feature-space detectors on 10,000 training features of width 384 (10 classes) and
//! 2,000 queries, beside scikit-learn / numpy on the same arrays (`scripts/bench_sklearn_features.py`
//! run by `$UQFORMER_PYTHON`, default `python3`), and checks that both give the same scores.
//!
//! Writes `target/bench_features.bin` (little-endian u64 n, d, c, q, then f64: the training
//! features, their labels, their logits, the queries and their logits). Exits non-zero if a
//! detector's scores differ beyond 1e-6 relative.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{Detector, DetectorOptions, Features, Logits, Shrinkage, fit};

const N: usize = 10_000;
const D: usize = 384;
const C: usize = 10;
const Q: usize = 2_000;
const RUNS: usize = 5;
const TOL: f64 = 1e-6;
/// The script exits with this code when scikit-learn cannot be imported.
const SKLEARN_MISSING: i32 = 3;

struct Data {
    train: Features,
    labels: Vec<usize>,
    train_logits: Logits,
    queries: Features,
    query_logits: Logits,
}

fn main() -> ExitCode {
    let data = data();
    // 10,000 samples in 384 dimensions: no shrinkage needed, as scikit-learn's
    // EmpiricalCovariance has none.
    let options = DetectorOptions {
        shrinkage: Shrinkage::None,
        ..DetectorOptions::default()
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{N} training features of width {D} ({C} classes), {Q} queries; rust threads {threads}, best of {RUNS}"
    );
    let mut rust: Vec<(&str, Duration, Vec<f64>)> = Vec::new();
    let (fit_time, fitted) = best_of(|| fit_detector(Detector::Mahalanobis, &data, &options));
    rust.push(("mahalanobis fit", fit_time, Vec::new()));
    let (t, s) = best_of(|| score(&fitted, &data));
    rust.push(("mahalanobis score", t, s));
    for detector in [Detector::RelativeMahalanobis, Detector::Vim, Detector::Knn] {
        let (t, s) = best_of(|| score(&fit_detector(detector, &data, &options), &data));
        rust.push((step(detector), t, s));
    }

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let file = target.join("bench_features.bin");
    if let Err(e) = write(&file, &data) {
        eprintln!("cannot write {}: {e}", file.display());
        return ExitCode::FAILURE;
    }
    let python = std::env::var("UQFORMER_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = root.join("scripts/bench_sklearn_features.py");
    let out = match Command::new(&python).arg(&script).arg(&file).output() {
        Ok(out) => out,
        Err(e) => {
            print_rust(&rust);
            println!("scikit-learn comparison skipped: cannot run {python} ({e})");
            return ExitCode::SUCCESS;
        }
    };
    if out.status.code() == Some(SKLEARN_MISSING) {
        print_rust(&rust);
        println!("scikit-learn comparison skipped: {python} has no scikit-learn");
        return ExitCode::SUCCESS;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parsed = (stdout.lines().last())
        .and_then(|line| serde_json::from_str::<serde_json::Value>(line).ok());
    let Some(sk) = parsed.filter(|_| out.status.success()) else {
        eprintln!(
            "{} failed: {}\n{stdout}{}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return ExitCode::FAILURE;
    };
    println!("python: {}", sk["threads"]);
    println!(
        "{:<22} {:>10} {:>12} {:>16} {:>14}",
        "step", "rust ms", "sklearn ms", "sklearn / rust", "max rel diff"
    );
    let mut ok = true;
    for (name, time, scores) in &rust {
        let theirs = sk["seconds"][name].as_f64().unwrap_or(f64::NAN);
        let diff = match scores.is_empty() {
            true => String::new(),
            false => {
                let reference: Vec<f64> = (sk["scores"][name].as_array())
                    .map(|a| a.iter().filter_map(|v| v.as_f64()).collect())
                    .unwrap_or_default();
                let worst = max_rel_diff(scores, &reference);
                ok &= worst <= TOL;
                format!("{worst:.1e}{}", if worst <= TOL { "" } else { " MISMATCH" })
            }
        };
        let rust_ms = time.as_secs_f64() * 1e3;
        println!(
            "{name:<22} {rust_ms:>10.1} {:>12.1} {:>15.2}x {diff:>14}",
            theirs * 1e3,
            theirs * 1e3 / rust_ms
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What one timed step covers: a detector's fit and its scoring of the queries.
fn step(detector: Detector) -> &'static str {
    match detector {
        Detector::Mahalanobis => "mahalanobis",
        Detector::RelativeMahalanobis => "relative_mahalanobis",
        Detector::Vim => "vim",
        Detector::Knn => "knn",
    }
}

fn fit_detector(detector: Detector, data: &Data, options: &DetectorOptions) -> uq_metrics::Fitted {
    fit(
        detector,
        &data.train,
        &data.labels,
        Some(&data.train_logits),
        options,
    )
    .expect("fits")
}

fn score(fitted: &uq_metrics::Fitted, data: &Data) -> Vec<f64> {
    fitted
        .score(&data.queries, Some(&data.query_logits))
        .expect("scores")
}

fn print_rust(rust: &[(&str, Duration, Vec<f64>)]) {
    for (name, time, _) in rust {
        println!("{name:<22} {:>10.1} ms", time.as_secs_f64() * 1e3);
    }
}

fn max_rel_diff(ours: &[f64], theirs: &[f64]) -> f64 {
    if ours.len() != theirs.len() {
        return f64::INFINITY;
    }
    (ours.iter().zip(theirs))
        .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// Class blobs (centres 3 apart per coordinate, correlated noise through a fixed mixing of 8
/// coordinates), logits a fixed linear map; half the queries near the classes, half shifted.
fn data() -> Data {
    let mut rng = StdRng::seed_from_u64(20_261_203);
    let mut normal = move || {
        let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let centres: Vec<f64> = (0..C * D).map(|_| 3.0 * normal()).collect();
    let w: Vec<f64> = (0..D * C).map(|_| normal() / (D as f64).sqrt()).collect();
    let mut sample = |class: usize, shift: f64| -> Vec<f64> {
        let noise: Vec<f64> = (0..D).map(|_| normal()).collect();
        (0..D)
            .map(|j| centres[class * D + j] + shift + noise[j] + 0.5 * noise[(j + 1) % D])
            .collect()
    };
    let labels: Vec<usize> = (0..N).map(|i| i % C).collect();
    let train: Vec<f64> = labels.iter().flat_map(|&c| sample(c, 0.0)).collect();
    let queries: Vec<f64> = (0..Q)
        .flat_map(|i| sample(i % C, if i < Q / 2 { 0.0 } else { 1.5 }))
        .collect();
    let logits = |x: &[f64], n: usize| -> Logits {
        let z = (0..n * C)
            .map(|k| (0..D).map(|j| x[(k / C) * D + j] * w[j * C + k % C]).sum())
            .collect();
        Logits::new(z, n, C).expect("finite")
    };
    Data {
        train_logits: logits(&train, N),
        query_logits: logits(&queries, Q),
        train: Features::new(train, N, D).expect("finite"),
        queries: Features::new(queries, Q, D).expect("finite"),
        labels,
    }
}

fn write(file: &Path, data: &Data) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    for v in [N, D, C, Q] {
        bytes.extend((v as u64).to_le_bytes());
    }
    let labels: Vec<f64> = data.labels.iter().map(|&l| l as f64).collect();
    let train_logits: Vec<f64> = data.train_logits.view().iter().copied().collect();
    let query_logits: Vec<f64> = data.query_logits.view().iter().copied().collect();
    let parts: [&[f64]; 5] = [
        data.train.as_slice(),
        &labels,
        &train_logits,
        data.queries.as_slice(),
        &query_logits,
    ];
    for part in parts {
        part.iter().for_each(|v| bytes.extend(v.to_le_bytes()));
    }
    std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))?;
    std::fs::write(file, bytes)
}

fn best_of<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut value = None;
    for _ in 0..RUNS {
        let start = Instant::now();
        let v = std::hint::black_box(f());
        best = best.min(start.elapsed());
        value = Some(v);
    }
    (best, value.expect("RUNS > 0"))
}
