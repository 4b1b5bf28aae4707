//! A run's [`Provenance`]: the code it ran (version, and the commit and state of the checkout
//! the binary was built from, read by `build.rs` when it was built), the command, the backend, the
//! CPU with the SIMD extensions its kernels choose between, the pool's threads and the wall time.

use std::time::Instant;

use report::Provenance;

use crate::config::ExperimentConfig;

/// The provenance of a run of `config` that started at `started`.
pub fn gather(config: &ExperimentConfig, started: Instant) -> Provenance {
    let (commit, tree_clean) = checkout();
    let e = &config.experiment;
    let backend = match e.devices.as_slice() {
        [] => e.backend.to_string(),
        devices => format!("{} on devices {devices:?}", e.backend),
    };
    Provenance {
        version: env!("CARGO_PKG_VERSION").into(),
        commit,
        tree_clean,
        command: std::env::args().collect(),
        backend,
        cpu: cpu_model(),
        simd: simd(),
        threads: rayon::current_num_threads(),
        wall_seconds: started.elapsed().as_secs_f64(),
    }
}

/// The commit the binary was built from and whether the checkout's tracked files were unchanged
/// then (`build.rs`); `None` where git or the checkout was missing (a build from a source
/// archive, say).
fn checkout() -> (Option<String>, Option<bool>) {
    let commit = option_env!("UQFORMER_BUILD_COMMIT").map(str::to_string);
    let clean = option_env!("UQFORMER_BUILD_TREE_CLEAN").map(|c| c == "true");
    (commit, clean)
}

/// The CPU's model name (Linux's `/proc/cpuinfo`), else the architecture.
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    (info.lines())
        .find_map(|l| {
            l.strip_prefix("model name")?
                .split_once(':')
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// The SIMD extensions the CPU offers of those the matrix and element-wise kernels choose
/// between at run time.
fn simd() -> Vec<String> {
    #[cfg(target_arch = "x86_64")]
    {
        let found = [
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("fma", std::arch::is_x86_feature_detected!("fma")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
        ];
        found
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| name.to_string())
            .collect()
    }
    #[cfg(target_arch = "aarch64")]
    {
        vec!["neon".to_string()]
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Vec::new()
    }
}
