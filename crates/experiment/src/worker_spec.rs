//! What a worker process is given: one job of one seed of a resolved config. The process and
//! queue machinery is the runtime's ([`runtime::workers`]); this is the experiment's payload.

use std::path::PathBuf;

use runtime::Job;
use serde::{Deserialize, Serialize};

use crate::error::{ErrorContext as _, ExperimentError};

/// What a worker process runs: one job of one seed of a resolved config. The main process
/// hands it over as one JSON argument (`uqformer worker SPEC`, [`runtime::workers::command`]),
/// and the worker loads the config with the same loader as the command line
/// ([`crate::ExperimentConfig::load`], its device as an override).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerSpec {
    /// The run's resolved config, written by the main process.
    pub config: PathBuf,
    pub seed: u64,
    pub job: Job,
    /// The `datasets/` folder.
    pub data_root: PathBuf,
    /// The model cache the job trains into (a worker writes nothing else).
    pub cache_root: PathBuf,
    /// No epoch lines.
    pub quiet: bool,
    /// The backend's device to train on (`[experiment] devices`); none: the config's first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<usize>,
}

impl WorkerSpec {
    /// The spec a worker was given, or an error naming what did not parse.
    pub fn parse(text: &str) -> Result<Self, ExperimentError> {
        serde_json::from_str(text).context(format_args!("worker spec {text}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_spec_round_trips_and_refuses_what_it_does_not_know() {
        for (job, device) in [
            (Job::Base(0), None),
            (Job::Base(7), Some(2)),
            (Job::Method(12), None),
        ] {
            let spec = WorkerSpec {
                config: "results/.cache/worker-config-1.toml".into(),
                seed: 3,
                job,
                data_root: "datasets".into(),
                cache_root: "a cache/with space".into(),
                quiet: true,
                device,
            };
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(WorkerSpec::parse(&json).unwrap(), spec);
        }
        let json = r#"{"config":"c","seed":0,"job":{"base":1},"data_root":"d","cache_root":"e","quiet":false}"#;
        assert_eq!(WorkerSpec::parse(json).unwrap().job, Job::Base(1));
        for bad in [
            json.replace(r#"{"base":1}"#, r#"{"model":1}"#),
            json.replace(r#""quiet":false"#, r#""quiet":false,"extra":1"#),
            json.replace(r#""seed":0,"#, ""),
        ] {
            let err = WorkerSpec::parse(&bad).unwrap_err().to_string();
            assert!(err.contains("worker spec"), "{bad}: {err}");
        }
    }
}
