//! Where a run came from: the code (version, commit, whether the checkout had changes), the
//! command, the backend and the machine (CPU, the SIMD extensions the kernels could take,
//! threads), and how long it took. Results move with the SIMD width and the kernels
//! (docs/running.md, "Reproducibility across CPUs"), so runs joined by `uqformer compare` are
//! checked for it.

use serde::{Deserialize, Serialize};

/// A run's provenance, as `summary.json` holds it (absent from runs made before it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// uqformer's version.
    pub version: String,
    /// The commit of the checkout the binary was built from, when it is a git checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Whether that checkout's tracked files were unchanged from the commit when the run
    /// started (absent outside a git checkout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree_clean: Option<bool>,
    /// The command line, program first.
    pub command: Vec<String>,
    /// The backend and its devices, as `[experiment]` named them (`flex`, `wgpu` on devices
    /// [0, 1], ...).
    pub backend: String,
    /// The CPU's model name.
    pub cpu: String,
    /// The SIMD extensions the CPU offers of those the kernels choose between.
    pub simd: Vec<String>,
    /// Threads of the CPU pool.
    pub threads: usize,
    /// Wall-clock seconds from the start of the run to its summary.
    #[serde(deserialize_with = "uq_metrics::nan_if_null")]
    pub wall_seconds: f64,
}

impl Provenance {
    /// One line for a report's header.
    pub fn line(&self) -> String {
        let commit = match (&self.commit, self.tree_clean) {
            (Some(c), Some(false)) => format!(" at {} with uncommitted changes", short(c)),
            (Some(c), _) => format!(" at {}", short(c)),
            (None, _) => String::new(),
        };
        let simd = match self.simd.is_empty() {
            true => String::new(),
            false => format!(" ({})", self.simd.join(", ")),
        };
        format!(
            "Made by uqformer {}{commit}: `{}`, on {}, {}{simd}, {} thread(s), in {:.1} s.",
            self.version,
            self.command.join(" "),
            self.backend,
            self.cpu,
            self.threads,
            self.wall_seconds
        )
    }

    /// What differs from `other` among the facts that can move results: version, commit and
    /// checkout state, backend, CPU, SIMD extensions and threads (the command and the wall
    /// time always differ). Each as `field: this vs other`.
    pub fn differences(&self, other: &Self) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |field: &str, a: String, b: String| {
            if a != b {
                out.push(format!("{field}: {a} vs {b}"));
            }
        };
        check("version", self.version.clone(), other.version.clone());
        check("commit", opt(&self.commit), opt(&other.commit));
        check("tree_clean", opt(&self.tree_clean), opt(&other.tree_clean));
        check("backend", self.backend.clone(), other.backend.clone());
        check("cpu", self.cpu.clone(), other.cpu.clone());
        check("simd", self.simd.join(" "), other.simd.join(" "));
        check(
            "threads",
            self.threads.to_string(),
            other.threads.to_string(),
        );
        out
    }
}

/// The first 10 characters of a commit id.
fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

fn opt<T: ToString>(value: &Option<T>) -> String {
    value.as_ref().map_or("unknown".into(), T::to_string)
}
