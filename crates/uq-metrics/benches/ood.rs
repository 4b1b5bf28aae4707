//! Times the OOD metrics on 10^6 seeded scores and compares with scikit-learn on the same data.
//!
//! Writes `target/bench_scores.bin` (little-endian: u64 n_id, u64 n_ood, then the ID and the
//! OOD scores as f64) and runs `python3 scripts/bench_sklearn.py <file>` on it when python3
//! with scikit-learn is available. Exits non-zero if the values disagree beyond 1e-9.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uq_metrics::{OodReport, auroc, ood_report};

const N_ID: usize = 600_000;
const N_OOD: usize = 400_000;
const RUNS: usize = 5;
const TOL: f64 = 1e-9;
/// The script exits with this code when scikit-learn cannot be imported.
const SKLEARN_MISSING: i32 = 3;

fn main() -> ExitCode {
    // f32-valued scores, as saved model outputs are: about 6% of them share their value.
    let mut rng = StdRng::seed_from_u64(20_240_601);
    let id: Vec<f64> = (0..N_ID).map(|_| f64::from(rng.random::<f32>())).collect();
    let ood: Vec<f64> = (0..N_OOD)
        .map(|_| f64::from(rng.random::<f32>().sqrt()))
        .collect();

    let (rust_all, report) = best_of(RUNS, || ood_report(&id, &ood).expect("valid scores"));
    let (rust_auroc, _) = best_of(RUNS, || auroc(&id, &ood).expect("valid scores"));
    println!("scores: {N_ID} ID + {N_OOD} OOD, best of {RUNS}");
    println!("rust    all four (one sort): {:>9.1} ms", ms(rust_all));
    println!("rust    auroc alone:         {:>9.1} ms", ms(rust_auroc));
    println!("values: {report:?}");

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let file = target.join("bench_scores.bin");
    if let Err(e) = write_scores(&file, &id, &ood) {
        eprintln!("cannot write {}: {e}", file.display());
        return ExitCode::FAILURE;
    }
    let script = root.join("scripts/bench_sklearn.py");
    let out = match Command::new("python3").arg(&script).arg(&file).output() {
        Ok(out) => out,
        Err(e) => {
            println!("sklearn comparison skipped: cannot run python3 ({e})");
            return ExitCode::SUCCESS;
        }
    };
    if out.status.code() == Some(SKLEARN_MISSING) {
        println!("sklearn comparison skipped: python3 has no scikit-learn");
        return ExitCode::SUCCESS;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let parsed = stdout
        .lines()
        .last()
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
    let field = |name: &str| sk[name].as_f64().unwrap_or(f64::NAN);
    let (sk_all, sk_auroc) = (field("seconds_all"), field("seconds_auroc"));
    println!("sklearn all four:            {:>9.1} ms", sk_all * 1e3);
    println!("sklearn roc_auc_score alone: {:>9.1} ms", sk_auroc * 1e3);
    println!(
        "ratio sklearn / rust: all four {:.1}x, auroc {:.1}x",
        sk_all / rust_all.as_secs_f64(),
        sk_auroc / rust_auroc.as_secs_f64()
    );
    compare(&report, field)
}

fn compare(report: &OodReport, sklearn: impl Fn(&str) -> f64) -> ExitCode {
    let pairs = [
        ("auroc", report.auroc),
        ("aupr_in", report.aupr_in),
        ("aupr_out", report.aupr_out),
        ("fpr95", report.fpr95),
    ];
    let mut ok = true;
    for (name, ours) in pairs {
        let theirs = sklearn(name);
        let diff = (ours - theirs).abs();
        let agree = diff <= TOL;
        ok &= agree;
        println!(
            "{name:>8}: rust {ours:.15} sklearn {theirs:.15} |diff| {diff:.1e} {}",
            if agree { "ok" } else { "MISMATCH" }
        );
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut value = None;
    for _ in 0..runs {
        let start = Instant::now();
        let v = std::hint::black_box(f());
        best = best.min(start.elapsed());
        value = Some(v);
    }
    (best, value.expect("runs > 0"))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn write_scores(file: &Path, id: &[f64], ood: &[f64]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(16 + 8 * (id.len() + ood.len()));
    bytes.extend((id.len() as u64).to_le_bytes());
    bytes.extend((ood.len() as u64).to_le_bytes());
    for s in id.iter().chain(ood) {
        bytes.extend(s.to_le_bytes());
    }
    std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))?;
    std::fs::write(file, bytes)
}
